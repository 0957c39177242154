// `ftcost validate` and `ftcost fit-stack`: reference rows in, tables / Markdown / SVG out.
#pragma once

#include "ftcost/validate.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ftcost::cli {

using Reader = std::function<Result<std::string>(const std::string&)>;

Result<std::vector<RefRow>> load_reference_dir(const std::string& dir, const Reader& read);
int run_validate(const std::vector<RefRow>& rows, const Database& db, bool as_json,
                 const std::string& markdown_path, const std::string& svg_path);
int run_fit_stack(const std::vector<RefRow>& rows, const Database& db, const std::string& stack_id,
                  const std::string& write_path, const Reader& read);

}  // namespace ftcost::cli
