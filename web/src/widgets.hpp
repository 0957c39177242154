// Small Dear ImGui helpers the calculator's panels share (app*.cpp, plot.cpp): one way to show a
// tooltip, a section title, a table cell and a muted note.
#pragma once

#include "imgui.h"

#include <functional>
#include <initializer_list>
#include <string>

namespace ftcost::web {

// The wrap width of tooltips, in font sizes.
constexpr float kTipWrapEm = 26.0f;

// A wrapped tooltip for the last item while it is hovered (also when it is disabled).
void tip(const char* text, float wrap_em = kTipWrapEm);
inline void tip(const std::string& text, float wrap_em = kTipWrapEm) { tip(text.c_str(), wrap_em); }

// A panel's or a section's title in the accent colour, with its tooltip (none: nullptr).
void section_title(const char* title, const char* tooltip = nullptr, float wrap_em = kTipWrapEm);

// Begins a table of the calculator's usual style (row stripes, borders, columns stretched by their content)
// with one column a header and the header row drawn. False: the table is not visible (nothing to draw, no
// ImGui::EndTable()).
bool begin_table(const char* id, std::initializer_list<const char*> headers);

// Moves to the next column of the current table and writes `text` there.
void table_cell(const std::string& text);

// A page of `size` is wide enough for two panes side by side (else: one scrolling column).
bool two_panes_fit(const ImVec2& size);
// Two panes side by side filling `size`: draws `left` in the child window `left_id`, left_w wide, then begins
// the child window `right_id` beside it for the rest; the caller draws into it and ends it with
// ImGui::EndChild().
void begin_right_pane(const char* left_id, const char* right_id, const ImVec2& size, float left_w,
                      const std::function<void()>& left);

// A note in the muted (disabled) text colour, wrapped at the window's edge.
void muted_text_wrapped(const std::string& text);

}  // namespace ftcost::web
