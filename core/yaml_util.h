// Checked reading of YAML documents: the one layer under every YAML input file (the scenario,
// core/scenario_loader*.cpp, and the calibration file, core/calibration.cpp). Every value is
// located (file, 1-based line and column, key path) and every rule broken is a ConfigError, so
// the same kind of value is checked, and its error worded, the same way in every file.
//
// Internal to core/ (the only folder that may include yaml-cpp): the header exposes yaml-cpp's
// node type, so only core/*.cpp include it, and search/search_spec.cpp, which reads the
// `search:` section of a search scenario with it (its library links yaml-cpp privately).
#ifndef STRATASIM_CORE_YAML_UTIL_H_
#define STRATASIM_CORE_YAML_UTIL_H_

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace stratasim::yaml {

// A value in the document and the key path that names it in messages.
struct Field {
  std::string path;
  YAML::Node key;  // the mapping key; the node itself for list items and the document
  YAML::Node value;
};

// "a map", "a list", "a scalar" or "empty": for "must be X, not Y" messages.
std::string KindOf(const YAML::Node& n);

// Parses `text`, which must hold exactly one YAML document: a syntax error, a second
// document, an empty file or a lone CR line end is a ConfigError located in the file.
Field ParseDocument(const std::string& text, const std::string& file_label);
// Reads a whole file of at most `max_bytes` (core/input_file.h); `what` names the kind of file.
std::string ReadFile(const std::string& path, size_t max_bytes, const std::string& what);

// [A-Za-z0-9_-][A-Za-z0-9._-]*, at most limits::kNameLength: it names a folder or a file under
// the output folder, so "." and ".." (or any leading dot) and over-long names are refused.
bool IsPlainName(const std::string& s);

// Reads the scalars and lists of one file; each reader throws a ConfigError naming the rule.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  SourceLocation Where(const YAML::Node& n) const;
  // Where a field's problem is: its value, or its key when the value is empty (yaml-cpp marks an
  // empty value at the start of the next line).
  SourceLocation WhereOf(const Field& f) const;
  [[noreturn]] void Fail(const Field& f, const std::string& rule) const;
  // An error about a key or a whole map (unknown key, missing field), located at `at`; the
  // key path already names what is wrong, so no value is quoted.
  [[noreturn]] void FailAt(const YAML::Node& at, const std::string& key,
                           const std::string& rule) const;
  // "first at line N", for duplicates.
  std::string FirstAt(const YAML::Node& n) const;

  std::string String(const Field& f) const;
  std::string Name(const Field& f) const;       // a non-empty string
  std::string PlainName(const Field& f) const;  // IsPlainName
  // An integer in [min_value, max_value].
  long long Integer(const Field& f, long long min_value, long long max_value) const;
  // A count, held as int: an integer >= min_value and at most INT_MAX.
  int Int(const Field& f, int min_value) const;
  bool AutoOrOff(const Field& f) const;         // "auto": true, "off": false
  double Fraction(const Field& f) const;        // a measured efficiency, in [1e-4, 1]
  double Efficiency(const Field& f) const;      // in [limits::kMinEfficiency, 1]
  double PositiveNumber(const Field& f) const;  // > 0, finite
  // Quantities with a unit, within core/limits.h's bounds.
  double Seconds(const Field& f) const;    // "5us"; in [0, 1 s]
  double Bandwidth(const Field& f) const;  // "100GB/s"; in [1 kB/s, 1 PB/s]
  double Bytes(const Field& f) const;      // "80GB"; in [1 MB, 1 PB]
  double Flops(const Field& f) const;      // "312TFLOPS"; in [1 GFLOPS, 1 EFLOPS]
  std::vector<Field> List(const Field& f, bool non_empty) const;

 private:
  // A quantity with a unit, in [min_value, max_value]; `range` is that interval as the message
  // gives it.
  template <typename Parser>
  double Quantity(const Field& f, Parser parse, double min_value, double max_value,
                  const char* range) const;

  std::string file_;
};

// A mapping whose keys have been checked: each a plain string, none repeated and, unless any
// key is allowed, each one of `known`.
class Map {
 public:
  Map(const Reader& reader, const Field& self, const std::vector<std::string>& known,
      bool any_key = false);

  std::optional<Field> Get(const std::string& key) const;
  // The field, or "required field missing" located at this map; `why` explains a conditional
  // requirement.
  Field Require(const std::string& key, const std::string& why = "") const;
  const Field& self() const { return self_; }
  const std::vector<std::pair<std::string, Field>>& entries() const { return entries_; }
  std::string PathOf(const std::string& key) const;

 private:
  const Reader& reader_;
  Field self_;
  std::vector<std::pair<std::string, Field>> entries_;
};

std::string Join(const std::vector<std::string>& items);

}  // namespace stratasim::yaml

#endif  // STRATASIM_CORE_YAML_UTIL_H_
