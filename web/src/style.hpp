// Look of the calculator: colours, the ImGui theme and the font (set up once per context).
#pragma once

#include "imgui.h"

namespace ftcost::web::style {

inline const ImVec4 kAccent{0.35f, 0.78f, 0.98f, 1.0f};
inline const ImVec4 kGood{0.40f, 0.85f, 0.55f, 1.0f};
inline const ImVec4 kWarn{1.00f, 0.78f, 0.35f, 1.0f};
inline const ImVec4 kBad{1.00f, 0.45f, 0.42f, 1.0f};
inline const ImVec4 kTopBar{0.09f, 0.11f, 0.15f, 1.0f};
inline const ImVec4 kTab{0.16f, 0.20f, 0.27f, 1.0f};
inline const ImVec4 kTabActive{0.20f, 0.42f, 0.62f, 1.0f};
inline const ImVec4 kCard{0.13f, 0.16f, 0.21f, 1.0f};
inline const ImVec4 kErrorBg{0.42f, 0.12f, 0.13f, 1.0f};
inline const ImVec4 kWarnBg{0.36f, 0.27f, 0.08f, 1.0f};
inline const ImVec4 kInfoBg{0.12f, 0.24f, 0.34f, 1.0f};

// Theme and font. `pixel_ratio`: device pixels per UI pixel (the browser's devicePixelRatio): the font
// is rasterized at that density and scaled back, so text stays sharp on high-DPI screens.
// Call before the renderer builds the font texture (or rebuild it after a change).
void setup(float pixel_ratio);

// The font size in UI pixels.
float font_size();

// Large text for headline numbers (a second, bigger font when one is embedded; else the default).
ImFont* big_font();

}  // namespace ftcost::web::style
