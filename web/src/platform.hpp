// The window, GL context, input and main loop of one platform, behind one interface. CMake compiles
// exactly one implementation: platform_web.cpp (Emscripten: SDL2 + WebGL2 in the page's canvas) or
// platform_desktop.cpp (SDL2 + OpenGL 3 window). main.cpp is the same for both.
#pragma once

#include "host.hpp"

#include <functional>
#include <memory>
#include <string>

namespace ftcost::web {

class App;

class Platform {
 public:
  virtual ~Platform() = default;
  // Creates the window/context and sets up Dear ImGui with its SDL2 + OpenGL3 backends.
  virtual bool init(int argc, char** argv, std::string* error) = 0;
  virtual Host& host() = 0;
  // The app that receives the platform's events (files, URL hash, clipboard). Called once after init.
  virtual void attach(App* app) = 0;
  // Runs `frame` (which draws the UI between ImGui::NewFrame and ImGui::Render) until the user quits.
  // In the browser this returns at once and the page's animation frames drive the loop.
  virtual void run(const std::function<void()>& frame) = 0;
};

std::unique_ptr<Platform> make_platform();

}  // namespace ftcost::web
