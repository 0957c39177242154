// Browser platform (Emscripten): SDL2 + WebGL2 in the page's <canvas id="canvas">, the animation-frame
// loop, and the page services behind Host (localStorage, location.hash, file input, downloads,
// clipboard). The page's JS (site/app.js) calls the exported ftcost_ui_* functions below.
#include "app.hpp"
#include "imgui.h"
#include "imgui_impl_opengl3.h"
#include "imgui_impl_sdl.h"
#include "platform.hpp"
#include "style.hpp"

#include <SDL.h>
#include <SDL_opengles2.h>
#include <emscripten/emscripten.h>
#include <emscripten/html5.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

// ---- page services (JavaScript) -------------------------------------------------------------------
// Strings returned to C++ are malloc'ed here and freed by the caller.
// clang-format off
EM_JS(char*, js_storage_get, (const char* key), {
  try {
    var v = window.localStorage.getItem(UTF8ToString(key));
    if (v === null) return 0;
    var n = lengthBytesUTF8(v) + 1; var p = _malloc(n); stringToUTF8(v, p, n); return p;
  } catch (e) { return 0; }
});
EM_JS(int, js_storage_set, (const char* key, const char* value), {
  try {
    var k = UTF8ToString(key), v = UTF8ToString(value);
    if (v.length === 0) window.localStorage.removeItem(k); else window.localStorage.setItem(k, v);
    return 1;
  } catch (e) { console.warn("ftcost: localStorage: " + e); return 0; }
});
EM_JS(char*, js_get_hash, (), {
  var v = window.location.hash || "";
  var n = lengthBytesUTF8(v) + 1; var p = _malloc(n); stringToUTF8(v, p, n); return p;
});
EM_JS(void, js_set_hash, (const char* hash), {
  var h = "#" + UTF8ToString(hash);
  if (window.location.hash !== h) window.history.replaceState(null, "", h);
});
EM_JS(char*, js_share_url, (const char* hash), {
  var v = window.location.origin + window.location.pathname + window.location.search + "#" + UTF8ToString(hash);
  var n = lengthBytesUTF8(v) + 1; var p = _malloc(n); stringToUTF8(v, p, n); return p;
});
EM_JS(void, js_copy, (const char* text), {
  var t = UTF8ToString(text);
  if (Module.ftcostCopy) Module.ftcostCopy(t);
});
EM_JS(void, js_download, (const char* name, const char* mime, const char* content), {
  if (Module.ftcostDownload) Module.ftcostDownload(UTF8ToString(name), UTF8ToString(mime), UTF8ToString(content));
});
EM_JS(void, js_open_picker, (const char* purpose), {
  if (Module.ftcostOpenPicker) Module.ftcostOpenPicker(UTF8ToString(purpose));
});
EM_JS(void, js_fetch_hub, (const char* id), {
  if (Module.ftcostFetchHub) Module.ftcostFetchHub(UTF8ToString(id));
});
EM_JS(void, js_open_url, (const char* url), {
  // a new tab; a URL relative to the page (the site's calibrate.html) resolves against it
  window.open(new URL(UTF8ToString(url), location.href).href, "_blank", "noopener");
});
EM_JS(void, js_request_clipboard, (), {
  if (Module.ftcostReadClipboard) Module.ftcostReadClipboard();
});
EM_JS(void, js_first_frame, (), {
  if (Module.ftcostFirstFrame) Module.ftcostFirstFrame();
});
EM_JS(void, js_fatal, (const char* message), {
  if (Module.ftcostFatal) Module.ftcostFatal(UTF8ToString(message));
});
EM_JS(double, js_pixel_ratio, (), { return window.devicePixelRatio || 1; });
EM_JS(void, js_mark, (const char* name), {
  if (Module.ftcostMark) Module.ftcostMark(UTF8ToString(name));
});
// clang-format on

namespace ftcost::web {

namespace {

std::string take(char* p) {
  if (p == nullptr) return {};
  std::string s(p);
  std::free(p);
  return s;
}

class WebHost final : public Host {
 public:
  bool fetch_hub_config(const std::string& model_id) override {
    js_fetch_hub(model_id.c_str());
    return true;
  }
  bool open_url(const std::string& url) override {
    js_open_url(url.c_str());
    return true;
  }
  std::string load(const std::string& key) override { return take(js_storage_get(key.c_str())); }
  void save(const std::string& key, const std::string& value) override {
    js_storage_set(key.c_str(), value.c_str());
  }
  void set_state_hash(const std::string& hash) override { js_set_hash(hash.c_str()); }
  std::string share_url(const std::string& hash) override { return take(js_share_url(hash.c_str())); }
  void copy_to_clipboard(const std::string& text) override { js_copy(text.c_str()); }
  void download(const std::string& filename, const std::string& mime, const std::string& content) override {
    js_download(filename.c_str(), mime.c_str(), content.c_str());
  }
  void open_file_picker(const std::string& purpose) override { js_open_picker(purpose.c_str()); }
  void request_clipboard_text() override { js_request_clipboard(); }
  std::string storage_description() override { return "this browser's localStorage"; }
};

class WebPlatform;
WebPlatform* g_platform = nullptr;

class WebPlatform final : public Platform {
 public:
  bool init(int /*argc*/, char** /*argv*/, std::string* error) override {
    g_platform = this;
    js_mark("main");
    if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_TIMER) != 0) {
      *error = std::string("SDL_Init: ") + SDL_GetError();
      js_fatal(error->c_str());
      return false;
    }
    js_mark("sdl_init");
    // WebGL2 = OpenGL ES 3.0
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, 0);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_ES);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 0);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 0);
    SDL_GL_SetAttribute(SDL_GL_STENCIL_SIZE, 0);
    double css_w = 0, css_h = 0;
    emscripten_get_element_css_size("#canvas", &css_w, &css_h);
    width_ = std::max(320, static_cast<int>(css_w));
    height_ = std::max(240, static_cast<int>(css_h));
    window_ = SDL_CreateWindow("ftcost", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, width_, height_,
                               SDL_WINDOW_OPENGL | SDL_WINDOW_ALLOW_HIGHDPI);
    if (window_ == nullptr) {
      *error = std::string("SDL_CreateWindow: ") + SDL_GetError();
      js_fatal(error->c_str());
      return false;
    }
    js_mark("sdl_window");
    gl_ = SDL_GL_CreateContext(window_);
    if (gl_ == nullptr) {
      *error = std::string("WebGL2 is not available in this browser (") + SDL_GetError() + ")";
      js_fatal(error->c_str());
      return false;
    }
    SDL_GL_MakeCurrent(window_, gl_);
    js_mark("webgl_context");
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini: state lives in the URL and localStorage
    pixel_ratio_ = static_cast<float>(js_pixel_ratio());
    style::setup(pixel_ratio_);
    ImGui_ImplSDL2_InitForOpenGL(window_, gl_);
    ImGui_ImplOpenGL3_Init("#version 300 es");
    js_mark("imgui_ready");
    return true;
  }

  Host& host() override { return host_; }
  void attach(App* app) override {
    app_ = app;
    js_mark("app_ready");  // the embedded database is parsed by now
    app_->on_hash(take(js_get_hash()));
  }

  void run(const std::function<void()>& frame) override {
    frame_ = frame;
    emscripten_set_main_loop_arg([](void* self) { static_cast<WebPlatform*>(self)->tick(); }, this, 0, false);
  }

  // ---- from the page ----
  void set_canvas_size(int w, int h, float ratio) {
    w = std::max(w, 200);
    h = std::max(h, 150);
    wake();
    if (std::fabs(ratio - pixel_ratio_) > 0.01f) {
      pixel_ratio_ = ratio;
      rebuild_fonts_ = true;
    }
    if (w != width_ || h != height_ || rebuild_fonts_) {
      width_ = w;
      height_ = h;
      SDL_SetWindowSize(window_, w, h);  // SDL sizes the canvas' backing store by the device pixel ratio
    }
  }
  App* app() { return app_; }
  void wake() { idle_ = 0; }
  long frames() const { return frames_; }

 private:
  void tick() {
    if (rebuild_fonts_) {
      rebuild_fonts_ = false;
      ImGui_ImplOpenGL3_DestroyFontsTexture();
      style::setup(pixel_ratio_);
      ImGui_ImplOpenGL3_CreateFontsTexture();
    }
    SDL_Event event;
    bool any_event = false;
    while (SDL_PollEvent(&event)) {
      ImGui_ImplSDL2_ProcessEvent(&event);
      any_event = true;
    }
    // Draw only when something happens (input, a call from the page, pending work) and for a few
    // frames after: an idle calculator costs no CPU or battery. A canvas that is not drawn to keeps
    // showing its last frame.
    idle_ = any_event ? 0 : idle_ + 1;
    if (frames_ >= 3 && idle_ > 20 && !ImGui::GetIO().WantTextInput &&
        (app_ == nullptr || !app_->needs_frame()))
      return;
    const bool first = frames_ == 0;
    ImGui_ImplOpenGL3_NewFrame();  // the first call compiles the shaders and uploads the font atlas
    if (first) js_mark("gl_objects");
    ImGui_ImplSDL2_NewFrame();
    if (ImGui::GetIO().DeltaTime <= 0.0f) ImGui::GetIO().DeltaTime = 1.0f / 60.0f;
    ImGui::NewFrame();
    frame_();
    ImGui::Render();
    if (first) js_mark("ui_built");
    int fb_w = 0, fb_h = 0;
    SDL_GL_GetDrawableSize(window_, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    glClearColor(0.06f, 0.07f, 0.10f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (++frames_ == 1) js_first_frame();
    if (!estimate_marked_ && app_ != nullptr && app_->recompute_count() > 0) {
      estimate_marked_ = true;
      js_mark("first_estimate_frame");
    }
  }

  WebHost host_;
  App* app_ = nullptr;
  SDL_Window* window_ = nullptr;
  SDL_GLContext gl_ = nullptr;
  std::function<void()> frame_;
  int width_ = 0, height_ = 0;
  float pixel_ratio_ = 1.0f;
  bool rebuild_fonts_ = false;
  long frames_ = 0;
  int idle_ = 0;  // animation frames since the last event
  bool estimate_marked_ = false;
};

}  // namespace

std::unique_ptr<Platform> make_platform() { return std::make_unique<WebPlatform>(); }

}  // namespace ftcost::web

// ---- called by the page (site/app.js) -----------------------------------------------------------------
extern "C" {

EMSCRIPTEN_KEEPALIVE void ftcost_ui_set_canvas_size(int css_width, int css_height, int pixel_ratio_x100) {
  if (ftcost::web::g_platform != nullptr)
    ftcost::web::g_platform->set_canvas_size(css_width, css_height,
                                             static_cast<float>(pixel_ratio_x100) / 100.0f);
}

EMSCRIPTEN_KEEPALIVE void ftcost_ui_on_file(const char* purpose, const char* name, const char* text) {
  if (ftcost::web::g_platform == nullptr || ftcost::web::g_platform->app() == nullptr) return;
  ftcost::web::g_platform->wake();
  ftcost::web::g_platform->app()->on_file(purpose ? purpose : "", name ? name : "file.json",
                                          text ? text : "");
}

EMSCRIPTEN_KEEPALIVE void ftcost_ui_on_hash_change() {
  if (ftcost::web::g_platform == nullptr || ftcost::web::g_platform->app() == nullptr) return;
  ftcost::web::g_platform->wake();
  ftcost::web::g_platform->app()->on_hash(ftcost::web::take(js_get_hash()));
}

EMSCRIPTEN_KEEPALIVE void ftcost_ui_on_hub_config(const char* id, int status, const char* text) {
  if (ftcost::web::g_platform == nullptr || ftcost::web::g_platform->app() == nullptr) return;
  ftcost::web::g_platform->wake();
  ftcost::web::g_platform->app()->on_hub_config(id ? id : "", status, text ? text : "");
}

EMSCRIPTEN_KEEPALIVE void ftcost_ui_on_clipboard(const char* text) {
  if (ftcost::web::g_platform == nullptr || ftcost::web::g_platform->app() == nullptr) return;
  ftcost::web::g_platform->wake();
  ftcost::web::g_platform->app()->on_clipboard_text(text ? text : "");
}

// The UI's state for tests: {"frames": N, "app": {request, view, hash, notices, result, ...}}.
EMSCRIPTEN_KEEPALIVE const char* ftcost_ui_request() {
  static std::string out;
  if (ftcost::web::g_platform == nullptr || ftcost::web::g_platform->app() == nullptr) {
    out = "{\"frames\":0,\"app\":null}";
  } else {
    out = "{\"frames\":" + std::to_string(ftcost::web::g_platform->frames()) +
          ",\"app\":" + ftcost::web::g_platform->app()->debug_json() + "}";
  }
  return out.c_str();
}

}  // extern "C"
