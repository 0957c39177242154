// Small Dear ImGui helpers the calculator's panels share (app*.cpp, plot.cpp): one way to show a
// tooltip, a section title and a muted note.
#pragma once

#include <string>

namespace ftcost::web {

// The wrap width of tooltips, in font sizes.
constexpr float kTipWrapEm = 26.0f;

// A wrapped tooltip for the last item while it is hovered (also when it is disabled).
void tip(const char* text, float wrap_em = kTipWrapEm);
inline void tip(const std::string& text, float wrap_em = kTipWrapEm) { tip(text.c_str(), wrap_em); }

// A panel's or a section's title in the accent colour, with its tooltip (none: nullptr).
void section_title(const char* title, const char* tooltip = nullptr, float wrap_em = kTipWrapEm);

// A note in the muted (disabled) text colour, wrapped at the window's edge.
void muted_text_wrapped(const std::string& text);

}  // namespace ftcost::web
