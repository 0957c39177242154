// ftcost's calculator: the same main for the browser (Emscripten) and the desktop (SDL2 + OpenGL).
// One SDL platform (platform_sdl.cpp); what differs lives in the host file CMake picked (host_web.cpp or
// host_desktop.cpp).
#include "app.hpp"
#include "imgui.h"
#include "platform.hpp"

#include <cstdio>
#include <memory>
#include <string>

int main(int argc, char** argv) {
  // Static: in the browser main() returns before the first frame and the loop keeps using these.
  static std::unique_ptr<ftcost::web::Platform> platform = ftcost::web::make_platform();
  std::string error;
  if (!platform->init(argc, argv, &error)) {
    std::fprintf(stderr, "ftcost: %s\n", error.c_str());
    return 1;
  }
  static ftcost::web::App app(platform->host());
  platform->attach(&app);
  platform->run([] { app.frame(); });
  return 0;
}
