// What the calculator needs from where it runs (the browser page or the desktop), behind one small
// interface: persistent storage, the shareable state (URL hash), file pickers and downloads.
// Implemented by platform_web.cpp (localStorage, location.hash, <input type=file>, Blob downloads),
// platform_desktop.cpp (files under ~/.config/ftcost, stdout) and the headless test's stub.
#pragma once

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

}  // namespace ftcost::web
