// The desktop's services (ftcost-desktop: an SDL2 + OpenGL 3 window for developing the UI without a
// browser; the window and loop themselves are platform_sdl.cpp's).
//   ftcost-desktop [--state 'v=1&model=...'] [FILE.json ...]
// Files given on the command line or dropped on the window are loaded like uploads in the page
// (calibrations or Hugging Face config.json). Storage: files under $XDG_CONFIG_HOME/ftcost (or
// ~/.config/ftcost). Downloads are written to the current directory.
#include "app.hpp"
#include "host.hpp"
#include "platform.hpp"

#include <SDL.h>

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

class DesktopHost final : public PlatformHost {
 public:
  // ---- Host: the UI's services ----
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
  void set_state_hash(const std::string& h) override { hash_ = h; }
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
    if (app_ == nullptr || !SDL_HasClipboardText()) return;
    char* t = SDL_GetClipboardText();
    app_->on_clipboard_text(t != nullptr ? t : "");
    SDL_free(t);
  }
  std::string storage_description() override { return config_dir(); }

  // ---- PlatformHost: the window and the loop ----
  bool parse_args(int argc, char** argv, std::string* /*error*/) override {
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
    return true;
  }
  Display display() override {
    Display d;  // OpenGL 3.2 core profile
    d.title = "ftcost: fine-tuning fit, speed and cost";
    d.width = 1440;
    d.height = 900;
    d.resizable = true;
    d.gl_minor = 2;
    d.glsl_version = "#version 150";
    d.swap_buffers = true;
    d.wait_when_idle = true;
    return d;
  }
  std::string gl_context_error(const std::string& sdl_error) override { return "OpenGL 3.2: " + sdl_error; }
  float pixel_ratio(float drawable_per_window) override { return drawable_per_window; }
  void attach(Platform& platform) override {
    app_ = platform.app();
    if (!state_.empty()) app_->on_hash(state_);
    for (const auto& f : files_) dropped_file(f);
  }
  void dropped_file(const std::string& path) override {
    if (app_ == nullptr) return;
    bool ok = false;
    std::string text = read_file(path, &ok);
    if (!ok) {
      std::fprintf(stderr, "ftcost-desktop: cannot read %s\n", path.c_str());
      return;
    }
    app_->on_file("", path, text);
  }
  bool run_loop(const std::function<bool()>& tick) override {
    while (tick()) {
    }
    return true;
  }
  void at_exit() override { std::printf("state: %s\n", hash_.c_str()); }

 private:
  App* app_ = nullptr;
  std::string hash_;
  std::string state_;
  std::vector<std::string> files_;
};

}  // namespace

std::unique_ptr<PlatformHost> make_platform_host() { return std::make_unique<DesktopHost>(); }

}  // namespace ftcost::web
