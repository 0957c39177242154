#include "widgets.hpp"

#include "imgui.h"
#include "style.hpp"

namespace ftcost::web {

void tip(const char* text, float wrap_em) {
  if (!ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * wrap_em);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

void section_title(const char* title, const char* tooltip, float wrap_em) {
  ImGui::TextColored(style::kAccent, "%s", title);
  if (tooltip != nullptr) tip(tooltip, wrap_em);
}

void muted_text_wrapped(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

}  // namespace ftcost::web
