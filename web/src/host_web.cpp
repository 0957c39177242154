// The browser's services (Emscripten): the page's canvas and WebGL2 for the SDL platform
// (platform_sdl.cpp), the animation-frame loop, start-up marks, and the page services behind Host
// (localStorage, location.hash, file input, downloads, clipboard). The page's JS (site/app.js) calls the
// exported ftcost_ui_* functions below.
#include "app.hpp"
#include "host.hpp"
#include "page_files.hpp"
#include "platform.hpp"

#include <emscripten/emscripten.h>
#include <emscripten/html5.h>

#include <algorithm>
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

// The platform the page's calls go to (set when it attaches its app).
Platform* g_platform = nullptr;

class WebHost final : public PlatformHost {
 public:
  // ---- Host: the UI's services ----
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

  // ---- PlatformHost: the canvas and the animation-frame loop ----
  bool parse_args(int /*argc*/, char** /*argv*/, std::string* /*error*/) override { return true; }
  Display display() override {
    Display d;  // not resizable (the page sizes the canvas), no buffer swap, no blocking wait
    d.title = "ftcost";
    double css_w = 0, css_h = 0;
    emscripten_get_element_css_size("#canvas", &css_w, &css_h);
    d.width = std::max(320, static_cast<int>(css_w));
    d.height = std::max(240, static_cast<int>(css_h));
    d.gles = true;  // WebGL2 = OpenGL ES 3.0
    d.glsl_version = "#version 300 es";
    return d;
  }
  std::string gl_context_error(const std::string& sdl_error) override {
    return "WebGL2 is not available in this browser (" + sdl_error + ")";
  }
  float pixel_ratio(float /*drawable_per_window*/) override { return static_cast<float>(js_pixel_ratio()); }
  void mark(const char* milestone) override { js_mark(milestone); }
  void fatal(const std::string& message) override { js_fatal(message.c_str()); }
  void attach(Platform& platform) override {
    g_platform = &platform;
    js_mark("app_ready");  // the embedded database is parsed by now
    platform.app()->on_hash(take(js_get_hash()));
  }
  void first_frame() override { js_first_frame(); }
  bool run_loop(const std::function<bool()>& tick) override {
    tick_ = tick;
    emscripten_set_main_loop_arg([](void* self) { static_cast<WebHost*>(self)->tick_(); }, this, 0, false);
    return false;
  }

 private:
  std::function<bool()> tick_;
};

// The platform's app, woken for the next frames; nullptr before the app is attached.
App* woken_app() {
  if (g_platform == nullptr || g_platform->app() == nullptr) return nullptr;
  g_platform->wake();
  return g_platform->app();
}

}  // namespace

std::unique_ptr<PlatformHost> make_platform_host() { return std::make_unique<WebHost>(); }

FileReader page_file_reader() {
  return [](const std::string& path) -> Result<std::string> {
    if (g_platform != nullptr && g_platform->app() != nullptr) return g_platform->app()->file_reader()(path);
    return make_error(Errc::io_error, path,
                      "is not loaded in this page (the calculator has not started yet)");
  };
}

}  // namespace ftcost::web

// ---- called by the page (site/app.js) -----------------------------------------------------------------
extern "C" {

EMSCRIPTEN_KEEPALIVE void ftcost_ui_set_canvas_size(int css_width, int css_height, int pixel_ratio_x100) {
  if (ftcost::web::g_platform != nullptr)
    ftcost::web::g_platform->set_canvas_size(css_width, css_height,
                                             static_cast<float>(pixel_ratio_x100) / 100.0f);
}

EMSCRIPTEN_KEEPALIVE void ftcost_ui_on_file(const char* purpose, const char* name, const char* text) {
  if (ftcost::web::App* app = ftcost::web::woken_app())
    app->on_file(purpose ? purpose : "", name ? name : "file.json", text ? text : "");
}

EMSCRIPTEN_KEEPALIVE void ftcost_ui_on_hash_change() {
  if (ftcost::web::App* app = ftcost::web::woken_app()) app->on_hash(ftcost::web::take(js_get_hash()));
}

EMSCRIPTEN_KEEPALIVE void ftcost_ui_on_hub_config(const char* id, int status, const char* text) {
  if (ftcost::web::App* app = ftcost::web::woken_app())
    app->on_hub_config(id ? id : "", status, text ? text : "");
}

EMSCRIPTEN_KEEPALIVE void ftcost_ui_on_clipboard(const char* text) {
  if (ftcost::web::App* app = ftcost::web::woken_app()) app->on_clipboard_text(text ? text : "");
}

// The UI's state for tests: {"frames": N, "app": {request, view, hash, notices, result, ...}}.
EMSCRIPTEN_KEEPALIVE const char* ftcost_ui_request() {
  static std::string out;  // the returned C string stays valid until the next call (JavaScript copies it)
  if (ftcost::web::g_platform == nullptr || ftcost::web::g_platform->app() == nullptr) {
    out = "{\"frames\":0,\"app\":null}";
  } else {
    out = "{\"frames\":" + std::to_string(ftcost::web::g_platform->frames()) +
          ",\"app\":" + ftcost::web::g_platform->app()->debug_json() + "}";
  }
  return out.c_str();
}

}  // extern "C"
