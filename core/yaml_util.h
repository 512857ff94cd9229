// Checked reading of YAML documents, for the input files other than the scenario (the
// calibration file): every value is located (file, 1-based line and column, key path) and every
// rule broken is a ConfigError, in the style of core/scenario_loader.cpp.
//
// Internal to core/ (the only folder that may include yaml-cpp): the header exposes yaml-cpp's
// node type, so only core/*.cpp include it.
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

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  SourceLocation Where(const YAML::Node& n) const;
  [[noreturn]] void Fail(const Field& f, const std::string& rule) const;
  [[noreturn]] void FailAt(const YAML::Node& at, const std::string& key,
                           const std::string& rule) const;

  std::string String(const Field& f) const;
  long long Integer(const Field& f, long long min_value, long long max_value) const;
  double Fraction(const Field& f) const;        // a measured efficiency, in [1e-4, 1]
  double Efficiency(const Field& f) const;      // in [limits::kMinEfficiency, 1]
  double PositiveNumber(const Field& f) const;  // > 0, finite
  double Seconds(const Field& f) const;         // "5us"; in [0, 1 s]
  double Bandwidth(const Field& f) const;       // "100GB/s"; in [1 kB/s, 1 PB/s]
  std::vector<Field> List(const Field& f, bool non_empty) const;

 private:
  std::string file_;
};

// A mapping whose keys have been checked: plain strings, none repeated, each one of `known`.
class Map {
 public:
  Map(const Reader& reader, const Field& self, const std::vector<std::string>& known);

  std::optional<Field> Get(const std::string& key) const;
  Field Require(const std::string& key) const;
  const Field& self() const { return self_; }

 private:
  const Reader& reader_;
  Field self_;
  std::vector<std::pair<std::string, Field>> entries_;
};

std::string Join(const std::vector<std::string>& items);

}  // namespace stratasim::yaml

#endif  // STRATASIM_CORE_YAML_UTIL_H_
