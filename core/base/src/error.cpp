#include "ftcost/error.hpp"

namespace ftcost {

const char* errc_name(Errc c) {
  switch (c) {
#define FTCOST_X(name, exit_class, text) \
  case Errc::name:                       \
    return #name;
    FTCOST_ERROR_CODES(FTCOST_X)
#undef FTCOST_X
  }
  return "internal";
}

const char* errc_text(Errc c) {
  switch (c) {
#define FTCOST_X(name, exit_class, text) \
  case Errc::name:                       \
    return text;
    FTCOST_ERROR_CODES(FTCOST_X)
#undef FTCOST_X
  }
  return "internal error";
}

int errc_exit_code(Errc c) {
  switch (c) {
#define FTCOST_X(name, exit_class, text) \
  case Errc::name:                       \
    return exit_class;
    // One case per code, many with the same exit class: the repeated branches are the table itself.
    FTCOST_ERROR_CODES(FTCOST_X)  // NOLINT(bugprone-branch-clone)
#undef FTCOST_X
  }
  return 1;
}

std::string Error::to_string() const {
  std::string msg = message.empty() ? std::string(errc_text(code)) : message;
  if (field.empty()) return msg;
  return field + ": " + msg;
}

}  // namespace ftcost
