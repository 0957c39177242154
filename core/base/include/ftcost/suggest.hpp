// "Did you mean": the known name closest to a misspelt one, for error messages.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ftcost {

// Levenshtein distance, capped: 100 for strings longer than 64 characters.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The one known id the user most likely meant, or "" when none is close or two are equally close. Ids are
// compared case-insensitively with '-', '_', '.' and spaces dropped ("H100_SXM5" finds "h100-sxm5-80gb" only
// as a unique prefix, "4090" finds "rtx-4090" as a unique part); then by edit distance, at most 1 per 4
// characters (at least 1, at most 3).
std::string closest_id(const std::string& typed, const std::vector<std::string>& ids);

// " (did you mean \"x\"?)" when closest_id finds one; " (did you mean one of \"x\", \"y\"?)" when the typed
// name begins 2 to 4 ids (or, when it begins none, is part of 2 to 4); else "".
std::string did_you_mean(const std::string& typed, const std::vector<std::string>& ids);

}  // namespace ftcost
