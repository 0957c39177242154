// The calculator's input state and its text forms: the URL hash (sharing) and JSON (the JS API, tests).
// No UI code here.
#pragma once

#include "ftcost/dataset.hpp"
#include "ftcost/estimate.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace ftcost::web {

enum class View { calculator, paper, calibrations, plan };
const char* view_name(View v);

struct UiState {
  Request request;  // `ftcost estimate` flag names -> values; unset keys take the core's defaults
  View view = View::calculator;
  // The Plan view's constraints (plan_constraint_keys(): "deadline", "budget", "max-gpus", ...) as the CLI
  // takes them; unset keys: no constraint / the plan's default. In the hash as "plan-<key>=<value>".
  std::map<std::string, std::string> plan;
  // The calibration in use for the job's GPU, as the link carries it: "cal" = its compact form (base64url,
  // ftcost/calibration_share.hpp) when at most kLinkCalMaxChars long, else "cal-id" = its fingerprint only.
  std::string cal;
  std::string cal_id;
  // The user's own length file the job names ("dataset": "dataset/<name>"), in the compact form a link
  // carries (dataset_link_encode): "data=<base64url>". Empty: the job names no such file, or it is too long
  // for a link (the recipient is asked for the file).
  std::string data;
  // The pinned job of the comparison (A), as its keys that differ from the current job: key -> A's value,
  // "" where A leaves the key unset. In the hash as "pin=" (pin_encode); `pinned` false: nothing is pinned.
  bool pinned = false;
  std::map<std::string, std::string> pin;
};

// The paper's headline configuration (Mixtral-8x7B QLoRA on the A40, MATH14K, the largest batch).
Request default_request();

// Version of the hash format. A link with another version is refused with a message.
inline constexpr int kHashVersion = 1;
// The longest calibration a link embeds ("cal", base64url characters); a longer one travels as its
// fingerprint ("cal-id"). 6000 keeps a whole link under the 8192 characters decode_hash accepts (and under
// what chat apps and web servers pass on).
inline constexpr std::size_t kLinkCalMaxChars = 6000;
// The longest hash decode_hash accepts. A length file ("data") is embedded when the whole hash stays within
// it; else the link names the file only and the recipient is asked to load it.
inline constexpr std::size_t kMaxHashChars = 8192;

// "v=1&model=mixtral-8x7b&gpu=a40&...&plan-deadline=24&view=plan": keys in request_keys() order, values
// percent-encoded. The "calibration" key (a file name) is not shared; the calibration in use travels as
// "cal=<compact form>" or "cal-id=<fingerprint>" (before "view").
std::string encode_hash(const UiState& s);

struct HashDecode {
  bool present = false;               // the hash had any content
  UiState state;                      // defaults where the hash had nothing usable
  std::vector<std::string> problems;  // what was wrong with the link (shown to the user)
};
// Accepts a leading '#'. Never fails: problems are reported and the rest is kept; a link that is not
// ours at all (wrong or missing version) gives the defaults and a problem.
HashDecode decode_hash(const std::string& hash);

// The user's length file as a link carries it (base64url, no padding): a version byte, then the
// ftcost.dataset/1 fields of `d` (queries, template tokens, id, name, source, tokenizer) and its histogram as
// (gap to the previous bin, count) pairs packed in one byte when both are small, with the bins' widths when
// they are not single lengths; a quantile-table data set as its ftcost.dataset/1 JSON (`file_text`, the file
// `d` was read from). Lossless: dataset_link_decode gives back d.to_file_json() (or that JSON), which reads
// back as the same distribution. About one byte per distinct length (2,000 samples of a chat-like data set:
// ~1,250 characters).
std::string dataset_link_encode(const Dataset& d, const std::string& file_text);
// The ftcost.dataset/1 JSON text of a link's "data"; errors name "data" (not base64url, truncated, ...).
Result<std::string> dataset_link_decode(const std::string& data);

// The pinned job's keys in a link: "key=value&key=value" with each part %-encoded, then %-encoded as a whole
// ("pin=method%3Dqlora"); an empty map is "pin=" (the same job pinned).
std::string pin_encode(const std::map<std::string, std::string>& pin);

std::string percent_encode(const std::string& s);
std::string percent_decode(const std::string& s, bool* ok);

// Request <-> JSON object text (values as strings).
std::string request_to_json_text(const Request& r);

}  // namespace ftcost::web
