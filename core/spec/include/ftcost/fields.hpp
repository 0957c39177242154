// One field list per database file format: each key of a JSON object once, with its kind (string, number
// with unit and hard range, whole number, bool, choice of strings, object, array of X), whether a database
// file must have it, whether null is allowed, whether the loader needs a value, and help text.
//
// The list drives:
//   - the loaders of GPUs, prices, stacks and datasets (gpu.cpp, prices.cpp, stack.cpp, dataset.cpp): they
//     read through FieldReader, whose errors name the full JSON path ("offers[3].network.kind") and the
//     problem, with the range and unit from the list;
//   - the calibration reader and writer (calibration.cpp: its first-error-wins reader takes ranges, allowed
//     values and kinds from the lists; the writer emits each object in list order);
//   - `ftcost db check`'s key/type/range checks (core/dbcheck/src/keys.cpp: check_keys walks the list;
//     unknown keys get unit and spelling hints from it); models use only this so far;
//   - the JSON Schemas in gpu-db/schema/: tests/db/test_check.cpp checks that each schema object has the
//     same keys, required set, types (with null), allowed values, ranges, string lengths and array items as
//     the list (gpu, prices, calibration, stack, dataset in full; model keys only).
// Rules that relate several fields (spot below on-demand, usable memory below the label, plausibility per
// architecture) stay with the loader or the checker; a list holds what one value alone must satisfy.
#pragma once

#include "ftcost/error.hpp"
#include "ftcost/json_util.hpp"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ftcost {

enum class FieldKind { string, number, integer, boolean, choice, object, array, any };

struct FieldList;

struct Field {
  std::string key;
  FieldKind kind = FieldKind::any;
  // A database file must have the key (db check; the schema's "required"). Null still counts when nullable.
  bool required = false;
  bool nullable = false;  // null is allowed: unknown, unsupported or not applicable
  // The loader refuses an object without a value (absent or null) for it; other fields take the loader's
  // fallback when absent or null. User-written files (--gpu my.json) need only these.
  bool needed = false;
  std::string
      unit;  // number/integer: the unit of the value, as it is shown ("GB/s", "MiB", "USD per GPU-hour")
  double min = -std::numeric_limits<double>::infinity();  // number/integer: hard range
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;        // the range excludes min (a price of 0)
  std::vector<std::string> values;   // choice, or array of choices: the allowed strings
  std::size_t min_length = 0;        // string: fewest characters (0: any)
  std::size_t max_length = 0;        // string: most characters (0: no limit here)
  FieldKind items = FieldKind::any;  // array: the kind of each item
  std::size_t min_items = 0;         // array: fewest items a database file may have
  std::string members;               // object, or array of objects: name of the members' FieldList
  std::string help;
  std::string why_limited;  // appended to a range or choice problem ("only USD prices are supported")

  bool has_min() const { return min > -std::numeric_limits<double>::infinity(); }
  bool has_max() const { return max < std::numeric_limits<double>::infinity(); }
};

struct FieldList {
  FieldList(std::string name_, std::string format_, std::vector<Field> fields_,
            std::string free_text_suffix_ = "")
      : name(std::move(name_)),
        format(std::move(format_)),
        fields(std::move(fields_)),
        free_text_suffix(std::move(free_text_suffix_)) {}

  std::string name;    // "gpu", "gpu.interconnect", "prices.offers[]"
  std::string format;  // "ftcost.gpu/1": the file format, for messages
  std::vector<Field> fields;
  // Keys ending in this suffix ("_note") are free text besides the fields (the schema's patternProperties);
  // empty: none.
  std::string free_text_suffix;

  const Field* find(const std::string& key) const;
  bool free_text(const std::string& key) const;  // a key of free text by its suffix
};

// The list named `name` ("gpu", "gpu.dense_tflops", "prices.offers[].network", "model", ...), or nullptr.
const FieldList* field_list(const std::string& name);
// Every list, in a fixed order.
std::vector<std::string> field_list_names();

// "a number or null", "a whole number", "\"switch\", \"mesh\" or \"bridge\"", ...
std::string field_kind_text(const Field& x);
// Empty when `v` has the field's kind (null only when nullable), else what is wrong ("must be a number,
// got string").
std::string field_type_problem(const Field& x, const json& v);
// field_type_problem, then the range and the allowed values: empty when `v` is a valid value.
std::string field_value_problem(const Field& x, const json& v);
// The range as text: "between 1 and 32", "> 0 and at most 1000 USD per GPU-hour", "at least 2010".
std::string field_range_text(const Field& x);

// Reads one JSON object of a format through its field list. Every key read must be in the list (a
// programming error otherwise: reported as Errc::internal naming the key). Errors name the full JSON path.
class FieldReader {
 public:
  // `path` is the object's JSON path ("" at the top level, "offers[2]"); `where` is what an error about the
  // object itself names when the path is empty (the file).
  FieldReader(const json& obj, const FieldList& list, std::string path, std::string where = "");

  // The object is a JSON object (else an error naming the path).
  Status check_object() const;
  // A file's top level: a JSON object whose "schema" is the list's (check_object, then the schema field).
  Status check_file() const;
  // The reader of a file `source` in the format `list` (field_list's name), after check_file.
  static Result<FieldReader> file(const json& doc, const std::string& list, const std::string& source);
  std::string path_of(const std::string& key) const { return join_path(path_, key); }
  bool present(const std::string& key) const;  // present and not null

  // Absent or null -> fallback (an error when the field is `needed`); present -> checked against the list.
  Result<double> number(const std::string& key, double fallback = 0) const;
  // Numbers into their members, key -> member, in the order given; an absent key keeps the member's value.
  Status numbers(std::initializer_list<std::pair<const char*, double*>> fields) const;
  Result<std::int64_t> integer(const std::string& key, std::int64_t fallback = 0) const;
  Result<std::string> string(const std::string& key, const std::string& fallback = "") const;
  // Strings (or choices) into their members, as numbers() does: in the order given; absent keeps the member.
  Status texts(std::initializer_list<std::pair<const char*, std::string*>> fields) const;
  // A choice field: one of the list's values (or the fallback when absent or null).
  Result<std::string> choice(const std::string& key, const std::string& fallback = "") const;
  // A boolean: 1 true, 0 false, `fallback` when absent or null.
  Result<int> boolean(const std::string& key, int fallback = -1) const;
  // Booleans into their members, as numbers() does: in the order given; absent keeps the member.
  Status flags(std::initializer_list<std::pair<const char*, bool*>> fields) const;
  // An array of non-empty strings (at least min_items when present); absent -> empty.
  Result<std::vector<std::string>> strings(const std::string& key) const;
  // An object or array member: nullptr when absent or null and not needed; else checked to be of its kind.
  Result<const json*> member(const std::string& key) const;

 private:
  Result<const Field*> field(const std::string& key, FieldKind kind) const;
  Result<const json*> value(const Field& x) const;  // nullptr when absent or null and not needed

  const json& obj_;
  const FieldList& list_;
  std::string path_;
  std::string where_;
};

}  // namespace ftcost
