// The calculator's input state and its text forms: the URL hash (sharing) and JSON (the JS API, tests).
// No UI code here.
#pragma once

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
};

// The paper's headline configuration (Mixtral-8x7B QLoRA on the A40, MATH14K, the largest batch).
Request default_request();

// Version of the hash format. A link with another version is refused with a message.
inline constexpr int kHashVersion = 1;
// The longest calibration a link embeds ("cal", base64url characters); a longer one travels as its
// fingerprint ("cal-id"). 6000 keeps a whole link under the 8192 characters decode_hash accepts (and under
// what chat apps and web servers pass on).
inline constexpr std::size_t kLinkCalMaxChars = 6000;

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

std::string percent_encode(const std::string& s);
std::string percent_decode(const std::string& s, bool* ok);

// Request <-> JSON object text (values as strings).
std::string request_to_json_text(const Request& r);

}  // namespace ftcost::web
