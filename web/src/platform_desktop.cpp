// Desktop platform: SDL2 + OpenGL 3 window for developing the UI without a browser.
//   ftcost-desktop [--state 'v=1&model=...'] [FILE.json ...]
// Files given on the command line or dropped on the window are loaded like uploads in the page
// (calibrations or Hugging Face config.json). Storage: files under $XDG_CONFIG_HOME/ftcost (or
// ~/.config/ftcost). Downloads are written to the current directory.
#include "app.hpp"
#include "imgui.h"
#include "imgui_impl_opengl3.h"
#include "imgui_impl_sdl.h"
#include "platform.hpp"
#include "style.hpp"

#include <SDL.h>
#include <SDL_opengl.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace ftcost::web {

namespace {

std::string read_file(const std::string& path, bool* ok) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  *ok = static_cast<bool>(f);
  return s.str();
}

std::string config_dir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  std::string base =
      xdg != nullptr && *xdg != 0 ? xdg : std::string(home != nullptr ? home : ".") + "/.config";
  return base + "/ftcost";
}

class DesktopHost final : public Host {
 public:
  App* app = nullptr;
  std::string hash;
  std::string load(const std::string& key) override {
    bool ok = false;
    std::string s = read_file(config_dir() + "/" + key, &ok);
    return ok ? s : std::string();
  }
  void save(const std::string& key, const std::string& value) override {
    std::string dir = config_dir();
    ::mkdir(dir.substr(0, dir.rfind('/')).c_str(), 0755);
    ::mkdir(dir.c_str(), 0755);
    std::ofstream(dir + "/" + key, std::ios::binary) << value;
  }
  void set_state_hash(const std::string& h) override { hash = h; }
  std::string share_url(const std::string& h) override { return "#" + h; }
  void copy_to_clipboard(const std::string& text) override { SDL_SetClipboardText(text.c_str()); }
  void download(const std::string& filename, const std::string&, const std::string& content) override {
    std::ofstream(filename, std::ios::binary) << content;
    std::fprintf(stderr, "ftcost-desktop: wrote %s\n", filename.c_str());
  }
  void open_file_picker(const std::string& purpose) override {
    std::fprintf(stderr, "ftcost-desktop: drop the %s file onto the window, or give it on the command line\n",
                 purpose.c_str());
  }
  void request_clipboard_text() override {
    if (app == nullptr || !SDL_HasClipboardText()) return;
    char* t = SDL_GetClipboardText();
    app->on_clipboard_text(t != nullptr ? t : "");
    SDL_free(t);
  }
  std::string storage_description() override { return config_dir(); }
};

class DesktopPlatform final : public Platform {
 public:
  bool init(int argc, char** argv, std::string* error) override {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--state" && i + 1 < argc)
        state_ = argv[++i];
      else if (a == "-h" || a == "--help") {
        std::printf("usage: ftcost-desktop [--state 'v=1&model=...'] [FILE.json ...]\n");
        std::exit(0);
      } else
        files_.push_back(a);
    }
    if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_TIMER) != 0) {
      *error = std::string("SDL_Init: ") + SDL_GetError();
      return false;
    }
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, 0);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 2);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    window_ = SDL_CreateWindow("ftcost: fine-tuning fit, speed and cost", SDL_WINDOWPOS_CENTERED,
                               SDL_WINDOWPOS_CENTERED, 1440, 900,
                               SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (window_ == nullptr) {
      *error = std::string("SDL_CreateWindow: ") + SDL_GetError();
      return false;
    }
    gl_ = SDL_GL_CreateContext(window_);
    if (gl_ == nullptr) {
      *error = std::string("OpenGL 3.2: ") + SDL_GetError();
      return false;
    }
    SDL_GL_MakeCurrent(window_, gl_);
    SDL_GL_SetSwapInterval(1);
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGui::GetIO().IniFilename = nullptr;
    int dw = 0, ww = 0, h = 0;
    SDL_GL_GetDrawableSize(window_, &dw, &h);
    SDL_GetWindowSize(window_, &ww, &h);
    style::setup(ww > 0 ? static_cast<float>(dw) / static_cast<float>(ww) : 1.0f);
    ImGui_ImplSDL2_InitForOpenGL(window_, gl_);
    ImGui_ImplOpenGL3_Init("#version 150");
    return true;
  }

  Host& host() override { return host_; }

  void attach(App* app) override {
    host_.app = app;
    if (!state_.empty()) app->on_hash(state_);
    for (const auto& f : files_) load(app, f);
  }

  void run(const std::function<void()>& frame) override {
    bool quit = false;
    while (!quit) {
      SDL_Event event;
      // idle: sleep until the next event (at most 250 ms) instead of drawing 60 frames a second
      if (idle_ > 20 && !ImGui::GetIO().WantTextInput && !host_.app->needs_frame() &&
          SDL_WaitEventTimeout(nullptr, 250) == 0)
        continue;
      bool any_event = false;
      while (SDL_PollEvent(&event)) {
        any_event = true;
        ImGui_ImplSDL2_ProcessEvent(&event);
        if (event.type == SDL_QUIT) quit = true;
        if (event.type == SDL_DROPFILE) {
          load(host_.app, event.drop.file);
          SDL_free(event.drop.file);
        }
      }
      idle_ = any_event ? 0 : idle_ + 1;
      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplSDL2_NewFrame();
      ImGui::NewFrame();
      frame();
      ImGui::Render();
      int w = 0, h = 0;
      SDL_GL_GetDrawableSize(window_, &w, &h);
      glViewport(0, 0, w, h);
      glClearColor(0.06f, 0.07f, 0.10f, 1.0f);
      glClear(GL_COLOR_BUFFER_BIT);
      ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
      SDL_GL_SwapWindow(window_);
    }
    std::printf("state: %s\n", host_.hash.c_str());
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplSDL2_Shutdown();
    ImGui::DestroyContext();
    SDL_GL_DeleteContext(gl_);
    SDL_DestroyWindow(window_);
    SDL_Quit();
  }

 private:
  static void load(App* app, const std::string& path) {
    bool ok = false;
    std::string text = read_file(path, &ok);
    if (!ok) {
      std::fprintf(stderr, "ftcost-desktop: cannot read %s\n", path.c_str());
      return;
    }
    app->on_file("", path, text);
  }

  DesktopHost host_;
  SDL_Window* window_ = nullptr;
  SDL_GLContext gl_ = nullptr;
  std::string state_;
  std::vector<std::string> files_;
  int idle_ = 0;
};

}  // namespace

std::unique_ptr<Platform> make_platform() { return std::make_unique<DesktopPlatform>(); }

}  // namespace ftcost::web
