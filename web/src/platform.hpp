// The window, GL context, input and frame loop of the calculator: one SDL2 + OpenGL3 platform
// (platform_sdl.cpp) for the browser (Emscripten, WebGL2 in the page's canvas) and the desktop (an
// OpenGL 3 window). What differs between the two (the window and context to ask for, the main loop, the
// page's or the desktop's services) comes from a PlatformHost (host.hpp: host_web.cpp | host_desktop.cpp,
// picked by CMake). main.cpp is the same for both.
#pragma once

#include "host.hpp"

#include <functional>
#include <memory>
#include <string>

struct SDL_Window;

namespace ftcost::web {

class App;

class Platform {
 public:
  explicit Platform(std::unique_ptr<PlatformHost> host);
  ~Platform();
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  // Creates the window/context and sets up Dear ImGui with its SDL2 + OpenGL3 backends.
  bool init(int argc, char** argv, std::string* error);
  Host& host() { return *host_; }
  // The app that receives the environment's events (files, URL hash, clipboard). Called once after init.
  void attach(App* app);
  App* app() { return app_; }
  // Runs `frame` (which draws the UI between ImGui::NewFrame and ImGui::Render) until the user quits.
  // In the browser this returns at once and the page's animation frames drive the loop.
  void run(const std::function<void()>& frame);

  // ---- from the environment ----
  // Something happened outside SDL's events (a call from the page): draw the next frames.
  void wake() { idle_ = 0; }
  // The page resized the canvas (CSS pixels) or moved it to a screen of another pixel ratio.
  void set_canvas_size(int css_width, int css_height, float pixel_ratio);
  long frames() const { return frames_; }

 private:
  // One pass of the loop: events, then a frame unless idle. False: the user quit.
  bool tick();
  void shutdown();

  std::unique_ptr<PlatformHost> host_;
  App* app_ = nullptr;
  SDL_Window* window_ = nullptr;
  void* gl_ = nullptr;  // SDL_GLContext
  bool swap_buffers_ = false;
  bool wait_when_idle_ = false;
  std::function<void()> frame_;
  int width_ = 0, height_ = 0;
  float pixel_ratio_ = 1.0f;
  bool rebuild_fonts_ = false;
  long frames_ = 0;
  int idle_ = 0;  // loop passes since the last event
  bool estimate_marked_ = false;
};

std::unique_ptr<Platform> make_platform();

}  // namespace ftcost::web
