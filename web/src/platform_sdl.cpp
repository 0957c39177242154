// The calculator's one platform, for the browser and the desktop alike: SDL2 init, the OpenGL context,
// Dear ImGui's SDL2 + OpenGL3 backends, the event pump, the idle throttle and the frame body. What
// differs between the two comes from the PlatformHost (host.hpp): host_web.cpp (Emscripten: the page's
// canvas, WebGL2, animation frames, the page's services) or host_desktop.cpp (an OpenGL 3.2 window, a
// blocking loop, files and the command line).
#include "app.hpp"
#include "imgui.h"
#include "imgui_impl_opengl3.h"
#include "imgui_impl_sdl.h"
#include "platform.hpp"
#include "style.hpp"

#include <SDL.h>
// glViewport / glClear: the GL flavour is the one ImGui's OpenGL3 backend is built for (CMake defines
// IMGUI_IMPL_OPENGL_ES3 for the WebGL2 build).
#if defined(IMGUI_IMPL_OPENGL_ES3)
#include <SDL_opengles2.h>
#else
#include <SDL_opengl.h>
#endif

#include <algorithm>
#include <cmath>
#include <utility>

namespace ftcost::web {

namespace {
// Draw only when something happens (input, a call from the page, pending work) and for this many loop
// passes after: an idle calculator costs no CPU or battery. A window or canvas that is not drawn to keeps
// showing its last frame.
constexpr int kIdlePasses = 20;
// Desktop: the longest sleep in SDL_WaitEventTimeout while idle.
constexpr int kIdleWaitMs = 250;
}  // namespace

Platform::Platform(std::unique_ptr<PlatformHost> host) : host_(std::move(host)) {}

Platform::~Platform() = default;

bool Platform::init(int argc, char** argv, std::string* error) {
  auto fail = [&](const std::string& message) {
    *error = message;
    host_->fatal(message);
    return false;
  };
  host_->mark("main");
  if (!host_->parse_args(argc, argv, error)) return false;
  if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_TIMER) != 0) return fail(std::string("SDL_Init: ") + SDL_GetError());
  host_->mark("sdl_init");
  const PlatformHost::Display d = host_->display();
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, 0);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK,
                      d.gles ? SDL_GL_CONTEXT_PROFILE_ES : SDL_GL_CONTEXT_PROFILE_CORE);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, d.gl_major);
  SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, d.gl_minor);
  SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
  // ImGui draws with neither
  SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 0);
  SDL_GL_SetAttribute(SDL_GL_STENCIL_SIZE, 0);
  width_ = d.width;
  height_ = d.height;
  Uint32 flags = SDL_WINDOW_OPENGL | SDL_WINDOW_ALLOW_HIGHDPI;
  if (d.resizable) flags |= SDL_WINDOW_RESIZABLE;
  window_ = SDL_CreateWindow(d.title.c_str(), SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, width_, height_,
                             flags);
  if (window_ == nullptr) return fail(std::string("SDL_CreateWindow: ") + SDL_GetError());
  host_->mark("sdl_window");
  gl_ = SDL_GL_CreateContext(window_);
  if (gl_ == nullptr) return fail(host_->gl_context_error(SDL_GetError()));
  SDL_GL_MakeCurrent(window_, gl_);
  swap_buffers_ = d.swap_buffers;
  wait_when_idle_ = d.wait_when_idle;
  if (swap_buffers_) SDL_GL_SetSwapInterval(1);
  host_->mark("webgl_context");
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini: state lives in the URL and in storage
  int drawable_w = 0, window_w = 0, h = 0;
  SDL_GL_GetDrawableSize(window_, &drawable_w, &h);
  SDL_GetWindowSize(window_, &window_w, &h);
  pixel_ratio_ =
      host_->pixel_ratio(window_w > 0 ? static_cast<float>(drawable_w) / static_cast<float>(window_w) : 1.0f);
  style::setup(pixel_ratio_);
  ImGui_ImplSDL2_InitForOpenGL(window_, gl_);
  ImGui_ImplOpenGL3_Init(d.glsl_version.c_str());
  host_->mark("imgui_ready");
  return true;
}

void Platform::attach(App* app) {
  app_ = app;
  host_->attach(*this);
}

void Platform::run(const std::function<void()>& frame) {
  frame_ = frame;
  if (host_->run_loop([this] { return tick(); })) {
    host_->at_exit();
    shutdown();
  }
}

void Platform::set_canvas_size(int css_width, int css_height, float pixel_ratio) {
  const int w = std::max(css_width, 200);
  const int h = std::max(css_height, 150);
  wake();
  if (std::fabs(pixel_ratio - pixel_ratio_) > 0.01f) {
    pixel_ratio_ = pixel_ratio;
    rebuild_fonts_ = true;
  }
  if (window_ != nullptr && (w != width_ || h != height_ || rebuild_fonts_)) {
    width_ = w;
    height_ = h;
    SDL_SetWindowSize(window_, w, h);  // SDL sizes the canvas' backing store by the device pixel ratio
  }
}

bool Platform::tick() {
  if (rebuild_fonts_) {
    rebuild_fonts_ = false;
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    style::setup(pixel_ratio_);
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  bool quit = false;
  bool any_event = false;
  SDL_Event event;
  while (SDL_PollEvent(&event)) {
    any_event = true;
    ImGui_ImplSDL2_ProcessEvent(&event);
    if (event.type == SDL_QUIT) quit = true;
    if (event.type == SDL_DROPFILE) {
      host_->dropped_file(event.drop.file);
      SDL_free(event.drop.file);
    }
  }
  idle_ = any_event ? 0 : idle_ + 1;
  if (frames_ >= 3 && idle_ > kIdlePasses && !ImGui::GetIO().WantTextInput &&
      (app_ == nullptr || !app_->needs_frame())) {
    // the next pass takes the event that ended the wait
    if (wait_when_idle_) SDL_WaitEventTimeout(nullptr, kIdleWaitMs);
    return !quit;
  }
  const bool first = frames_ == 0;
  ImGui_ImplOpenGL3_NewFrame();  // the first call compiles the shaders and uploads the font atlas
  if (first) host_->mark("gl_objects");
  ImGui_ImplSDL2_NewFrame();
  if (ImGui::GetIO().DeltaTime <= 0.0f) ImGui::GetIO().DeltaTime = 1.0f / 60.0f;
  ImGui::NewFrame();
  frame_();
  ImGui::Render();
  if (first) host_->mark("ui_built");
  int fb_w = 0, fb_h = 0;
  SDL_GL_GetDrawableSize(window_, &fb_w, &fb_h);
  glViewport(0, 0, fb_w, fb_h);
  glClearColor(0.06f, 0.07f, 0.10f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  if (swap_buffers_) SDL_GL_SwapWindow(window_);
  if (++frames_ == 1) host_->first_frame();
  if (!estimate_marked_ && app_ != nullptr && app_->recompute_count() > 0) {
    estimate_marked_ = true;
    host_->mark("first_estimate_frame");
  }
  return !quit;
}

void Platform::shutdown() {
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplSDL2_Shutdown();
  ImGui::DestroyContext();
  SDL_GL_DeleteContext(gl_);
  SDL_DestroyWindow(window_);
  SDL_Quit();
}

std::unique_ptr<Platform> make_platform() { return std::make_unique<Platform>(make_platform_host()); }

}  // namespace ftcost::web
