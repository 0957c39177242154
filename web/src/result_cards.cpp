// The headline card and the figures several result views share (result_cards.hpp).
#include "result_cards.hpp"

#include "app.hpp"
#include "ftcost/job_compare.hpp"
#include "ftcost/paper.hpp"
#include "ftcost/units.hpp"
#include "imgui.h"
#include "json_get.hpp"
#include "plot.hpp"
#include "style.hpp"
#include "widgets.hpp"

#include <algorithm>
#include <cmath>

namespace ftcost::web {

void card(const char* id, float w, float h, const char* title, const std::string& value, const char* unit,
          const std::vector<std::string>& subs, const std::string& tooltip, const ImVec4& value_color,
          std::map<std::string, std::vector<std::string>>* shown, const Badge* badge) {
  ImGui::PushStyleColor(ImGuiCol_ChildBg, style::kCard);
  ImGui::BeginChild(id, ImVec2(w, h), false,
                    ImGuiWindowFlags_AlwaysUseWindowPadding | ImGuiWindowFlags_NoScrollbar);
  ImGui::TextDisabled("%s", title);
  if (badge != nullptr) {
    // beside the title when both fit on the line, else under it (card_height counts that line)
    const std::string b = "[" + badge->text + "]";
    if (ImGui::CalcTextSize(title).x + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize(b.c_str()).x <=
        ImGui::GetContentRegionAvail().x)
      ImGui::SameLine();
    ImGui::TextColored(badge->color, "%s", b.c_str());
  }
  ImFont* big = style::big_font();
  if (big != nullptr) ImGui::PushFont(big);
  ImGui::TextColored(value_color, "%s", value.c_str());
  const float big_h = ImGui::GetTextLineHeight();
  if (big != nullptr) ImGui::PopFont();
  if (unit != nullptr && *unit != 0) {
    ImGui::SameLine(0, 5);
    // align the unit's baseline with the big number's
    ImGui::SetCursorPosY(ImGui::GetCursorPosY() + big_h - ImGui::GetTextLineHeight() - 2);
    ImGui::TextColored(value_color, "%s", unit);
  }
  // sub lines wrap inside the card (never cut off); the row's height is the tallest card's (card_height)
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::PushTextWrapPos(0);
  for (const auto& sub : subs)
    if (!sub.empty()) ImGui::TextUnformatted(sub.c_str());
  ImGui::PopTextWrapPos();
  ImGui::PopStyleColor();
  // what was drawn below the card's bottom edge would be cut off (tests look for "clipped")
  const float bottom =
      ImGui::GetCursorPosY() - ImGui::GetStyle().ItemSpacing.y + ImGui::GetStyle().WindowPadding.y;
  const bool clipped = bottom > h + 1.0f;
  ImGui::EndChild();
  ImGui::PopStyleColor();
  if (badge != nullptr)
    tip((tooltip + (tooltip.empty() ? "" : "\n\n") + badge->tooltip).c_str());
  else if (!tooltip.empty())
    tip(tooltip.c_str());
  if (shown != nullptr) {
    std::vector<std::string> lines{title, value, unit != nullptr ? unit : ""};
    for (const auto& sub : subs)
      if (!sub.empty()) lines.push_back(sub);
    if (badge != nullptr) lines.push_back("badge: " + badge->text);
    if (clipped) lines.push_back("clipped");
    (*shown)[id] = lines;
  }
}

CardSpec make_card(const char* id, const std::string& title, const std::string& value,
                   const std::string& unit, const std::vector<std::string>& subs, const std::string& tooltip,
                   const ImVec4& color, const Badge* badge) {
  CardSpec c{id, title, value, unit, subs, tooltip, color, badge != nullptr, Badge{}};
  if (badge != nullptr) c.badge = *badge;
  return c;
}

float card_height(const CardSpec& c, float w, float big_line) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float inner = w - st.WindowPadding.x * 2;
  float h = st.WindowPadding.y * 2 + ImGui::GetTextLineHeight() + big_line + st.ItemSpacing.y * 2 + 2;
  if (c.has_badge && ImGui::CalcTextSize(c.title.c_str()).x + st.ItemSpacing.x +
                             ImGui::CalcTextSize(("[" + c.badge.text + "]").c_str()).x >
                         inner)
    h += ImGui::GetTextLineHeight() + st.ItemSpacing.y;
  for (const auto& sub : c.subs)
    if (!sub.empty()) h += ImGui::CalcTextSize(sub.c_str(), nullptr, false, inner).y + st.ItemSpacing.y;
  return h;
}

Badge calibration_badge(const YourCalibration& c) {
  Badge b;
  const bool syn = c.flags.find("synthetic") != std::string::npos;
  const bool part = c.flags.find("partial") != std::string::npos;
  b.text = std::string("calibrated") + (syn ? ", synthetic" : "") + (part ? ", partial" : "");
  b.color = c.flags.empty() ? style::kGood : style::kWarn;
  b.tooltip = "Calibrated: uses the measured kernel speeds of " + c.name + " (" + c.device + ") for " +
              c.gpu + ", fingerprint " + c.fingerprint.substr(0, 8) + (c.from_link ? ", from the link" : "") +
              "." + (c.flags.empty() ? std::string() : "\nThis calibration is " + c.flags + ".") +
              "\nSpec-sheet numbers: the Calibrations page (untick \"Use\").";
  return b;
}

double paged_gib(const JobEstimate& e) {
  const double usable = e.answer.usable_gib * kGiB;
  return (e.pe.is_single ? e.pe.single.memory.paged_out(usable) : e.pe.memory.paged_out(usable)) / kGiB;
}

std::string tokens_line(double data_tps, double computed_tps) {
  return plot::fmt(data_tps) + " tokens/s of data (" + plot::fmt(computed_tps) +
         " computed, padding included)";
}

}  // namespace ftcost::web
