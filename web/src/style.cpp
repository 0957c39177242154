#include "style.hpp"

#include <algorithm>
#include <cstddef>

namespace ftcost::web {
// web/cmake/embed_font.cmake (size 0 when no TrueType font was found at build time)
extern const unsigned char ui_font_data[];
extern const std::size_t ui_font_size;
}  // namespace ftcost::web

namespace ftcost::web::style {

namespace {
ImFont* g_big = nullptr;
float g_size = 13.0f;
}  // namespace

float font_size() { return g_size; }
ImFont* big_font() { return g_big; }

void setup(float pixel_ratio) {
  pixel_ratio = std::clamp(pixel_ratio, 1.0f, 4.0f);
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  if (ui_font_size > 0) {
    ImFontConfig cfg;
    cfg.FontDataOwnedByAtlas = false;  // static data
    cfg.OversampleH = 2;
    cfg.OversampleV = 1;
    g_size = 15.0f;
    void* data = const_cast<unsigned char*>(ui_font_data);  // ImGui's API takes void*; it does not write
    io.Fonts->AddFontFromMemoryTTF(data, static_cast<int>(ui_font_size), g_size * pixel_ratio, &cfg);
    g_big = io.Fonts->AddFontFromMemoryTTF(data, static_cast<int>(ui_font_size), 24.0f * pixel_ratio, &cfg);
    io.FontGlobalScale = 1.0f / pixel_ratio;
  } else {
    ImFontConfig cfg;
    cfg.SizePixels = 13.0f * pixel_ratio;
    g_size = 13.0f;
    io.Fonts->AddFontDefault(&cfg);
    ImFontConfig big;
    big.SizePixels = 26.0f * pixel_ratio;
    g_big = io.Fonts->AddFontDefault(&big);
    io.FontGlobalScale = 1.0f / pixel_ratio;
  }

  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0;
  s.ChildRounding = 6;
  s.FrameRounding = 4;
  s.PopupRounding = 4;
  s.GrabRounding = 4;
  s.TabRounding = 4;
  s.ScrollbarRounding = 6;
  s.FramePadding = ImVec2(7, 4);
  s.ItemSpacing = ImVec2(8, 6);
  s.ItemInnerSpacing = ImVec2(6, 4);
  s.CellPadding = ImVec2(6, 3);
  s.IndentSpacing = 14;
  s.ScrollbarSize = 12;
  s.WindowBorderSize = 0;
  s.ChildBorderSize = 0;
  s.PopupBorderSize = 1;
  ImVec4* c = s.Colors;
  c[ImGuiCol_WindowBg] = ImVec4(0.06f, 0.07f, 0.10f, 1.0f);
  c[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 0);
  c[ImGuiCol_PopupBg] = ImVec4(0.10f, 0.12f, 0.16f, 0.98f);
  c[ImGuiCol_Border] = ImVec4(0.26f, 0.30f, 0.38f, 0.8f);
  c[ImGuiCol_FrameBg] = ImVec4(0.14f, 0.17f, 0.23f, 1.0f);
  c[ImGuiCol_FrameBgHovered] = ImVec4(0.19f, 0.24f, 0.32f, 1.0f);
  c[ImGuiCol_FrameBgActive] = ImVec4(0.22f, 0.30f, 0.40f, 1.0f);
  c[ImGuiCol_Button] = ImVec4(0.18f, 0.27f, 0.38f, 1.0f);
  c[ImGuiCol_ButtonHovered] = ImVec4(0.24f, 0.40f, 0.56f, 1.0f);
  c[ImGuiCol_ButtonActive] = ImVec4(0.27f, 0.48f, 0.68f, 1.0f);
  c[ImGuiCol_Header] = ImVec4(0.16f, 0.24f, 0.34f, 1.0f);
  c[ImGuiCol_HeaderHovered] = ImVec4(0.22f, 0.34f, 0.48f, 1.0f);
  c[ImGuiCol_HeaderActive] = ImVec4(0.26f, 0.42f, 0.60f, 1.0f);
  c[ImGuiCol_CheckMark] = kAccent;
  c[ImGuiCol_SliderGrab] = kAccent;
  c[ImGuiCol_SliderGrabActive] = ImVec4(0.55f, 0.85f, 1.0f, 1.0f);
  c[ImGuiCol_TableHeaderBg] = ImVec4(0.13f, 0.16f, 0.22f, 1.0f);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(1, 1, 1, 0.025f);
  c[ImGuiCol_Separator] = ImVec4(0.26f, 0.30f, 0.38f, 0.6f);
  c[ImGuiCol_Text] = ImVec4(0.90f, 0.92f, 0.95f, 1.0f);
  c[ImGuiCol_TextDisabled] = ImVec4(0.55f, 0.60f, 0.68f, 1.0f);
}

}  // namespace ftcost::web::style
