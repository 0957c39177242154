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

bool begin_table(const char* id, std::initializer_list<const char*> headers) {
  if (!ImGui::BeginTable(id, static_cast<int>(headers.size()),
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp))
    return false;
  for (const char* h : headers) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  return true;
}

void table_cell(const std::string& text) {
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(text.c_str());
}

bool two_panes_fit(const ImVec2& size) { return size.x >= ImGui::GetFontSize() * 62; }

void begin_right_pane(const char* left_id, const char* right_id, const ImVec2& size, float left_w,
                      const std::function<void()>& left) {
  ImGui::BeginChild(left_id, ImVec2(left_w, size.y), false, ImGuiWindowFlags_AlwaysUseWindowPadding);
  left();
  ImGui::EndChild();
  ImGui::SameLine(0, 0);
  ImGui::BeginChild(right_id, ImVec2(size.x - left_w, size.y), false,
                    ImGuiWindowFlags_AlwaysUseWindowPadding);
}

void muted_text_wrapped(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

}  // namespace ftcost::web
