// What the calculator needs from where it runs (the browser page or the desktop), behind two small
// interfaces:
//   - Host: what the UI (App) uses: persistent storage, the shareable state (URL hash), file pickers,
//     downloads, the clipboard. Implemented by host_web.cpp (localStorage, location.hash,
//     <input type=file>, Blob downloads), host_desktop.cpp (files under ~/.config/ftcost, stdout) and the
//     headless test's stub.
//   - PlatformHost: what the one SDL platform (platform_sdl.cpp) asks of its environment on top of that:
//     the window and GL context to create, the command line, start-up milestones, the initial state, and
//     the main loop (the page's animation frames or a desktop loop). Implemented by host_web.cpp and
//     host_desktop.cpp; CMake compiles exactly one of them.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace ftcost::web {

class Host {
 public:
  virtual ~Host() = default;
  // Persistent key/value storage ("" when absent).
  virtual std::string load(const std::string& key) = 0;
  virtual void save(const std::string& key, const std::string& value) = 0;
  // The shareable state changed: reflect it (browser: replace the URL's hash without a reload).
  virtual void set_state_hash(const std::string& hash) = 0;
  // The full link for a hash (browser: origin + path + "#" + hash).
  virtual std::string share_url(const std::string& hash) = 0;
  virtual void copy_to_clipboard(const std::string& text) = 0;
  // Save a file for the user (browser: a download).
  virtual void download(const std::string& filename, const std::string& mime, const std::string& content) = 0;
  // Ask the user for a file; the content arrives later through App::on_file (purpose: "calibration" or
  // "model").
  virtual void open_file_picker(const std::string& purpose) = 0;
  // Ask for the clipboard's text; it arrives through App::on_clipboard_text (browser: navigator.clipboard).
  virtual void request_clipboard_text() = 0;
  // Fetch a Hugging Face Hub model's config.json (https://huggingface.co/ID/resolve/main/config.json, from
  // the user's browser); the answer arrives through App::on_hub_config. False: this host cannot (no browser).
  virtual bool fetch_hub_config(const std::string& model_id) {
    (void)model_id;
    return false;
  }
  // Open a page of the site (relative URL) or a web address in a new tab. False: this host cannot.
  virtual bool open_url(const std::string& url) {
    (void)url;
    return false;
  }
  // Short description of where things are kept, for the UI ("this browser's localStorage").
  virtual std::string storage_description() = 0;
};

class Platform;

class PlatformHost : public Host {
 public:
  // The window and the OpenGL context the platform creates (the defaults: a fixed-size window with an
  // OpenGL 3.0 core-profile context, no buffer swap, no blocking wait).
  struct Display {
    std::string title;
    int width = 0, height = 0;  // the window's size at start (browser: the canvas' CSS size)
    bool resizable = false;     // the user resizes the window (browser: the page sizes the canvas)
    bool gles = false;          // OpenGL ES (WebGL2) rather than a desktop core profile
    int gl_major = 3, gl_minor = 0;
    std::string glsl_version;  // for ImGui's OpenGL3 backend ("#version 300 es", "#version 150")
    // Desktop: vsync (swap interval 1) and SDL_GL_SwapWindow after each frame. The browser presents the
    // canvas by itself, and its frame timing belongs to the animation-frame loop.
    bool swap_buffers = false;
    // Idle: sleep in SDL_WaitEventTimeout until the next event (desktop). A browser cannot block: the
    // animation frame is skipped instead.
    bool wait_when_idle = false;
  };

  // The command line (desktop: --state and files). False with *error: do not start.
  virtual bool parse_args(int argc, char** argv, std::string* error) = 0;
  virtual Display display() = 0;
  // Why no GL context could be made, for the user (sdl_error: SDL_GetError()).
  virtual std::string gl_context_error(const std::string& sdl_error) = 0;
  // The UI's scale: device pixels per UI pixel. drawable_per_window: SDL's drawable width over its window
  // width (what a desktop uses; the browser asks the page).
  virtual float pixel_ratio(float drawable_per_window) = 0;
  // A start-up milestone (browser: the page's performance marks, read by the tests).
  virtual void mark(const char* milestone) { (void)milestone; }
  // Start-up failed (browser: the page shows the message instead of the canvas).
  virtual void fatal(const std::string& message) { (void)message; }
  // The platform and its app are ready: deliver the initial state (browser: the URL's hash; desktop:
  // --state and the files on the command line) and route later events to platform.app().
  virtual void attach(Platform& platform) = 0;
  // A file dropped on the window (desktop; a browser hands dropped files to the page instead).
  virtual void dropped_file(const std::string& path) { (void)path; }
  // The first frame was drawn.
  virtual void first_frame() {}
  // Calls `tick` until it returns false (the user quit). True: the loop has ended when this returns
  // (desktop). False: it goes on after this returns (browser: the page's animation frames drive it).
  virtual bool run_loop(const std::function<bool()>& tick) = 0;
  // After the loop ended, before the window closes (desktop: prints the final state).
  virtual void at_exit() {}
};

// The PlatformHost of this build (host_web.cpp or host_desktop.cpp).
std::unique_ptr<PlatformHost> make_platform_host();

}  // namespace ftcost::web
