// OptionReader: typed access to a strategy's options, which the loader keeps as text so that
// each strategy declares and checks its own options in one place.
#include "core/scenario.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/text_number.h"
#include "core/units.h"

namespace stratasim {
namespace {

// Shortest text that reads back as `v` well enough for a message ("1", "0.5", "1e+09").
std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

}  // namespace

OptionReader::OptionReader(const StrategySpec& spec) : spec_(spec) {}

const OptionValue* OptionReader::Find(const std::string& key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  auto it = spec_.options.find(key);
  return it == spec_.options.end() ? nullptr : &it->second;
}

bool OptionReader::Bool(const std::string& key, bool fallback) {
  const OptionValue* v = Find(key);
  if (v == nullptr) return fallback;
  // The spellings of YAML 1.2's core schema.
  const std::string& t = v->text;
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  throw Fail(key, "must be true or false");
}

int OptionReader::Int(const std::string& key, int fallback, int min_value, int max_value) {
  const OptionValue* v = Find(key);
  if (v == nullptr) return fallback;
  long long n = 0;
  if (!ParseInteger(v->text, &n) || n < min_value || n > max_value) {
    throw Fail(key, "must be an integer in [" + std::to_string(min_value) + ", " +
                        std::to_string(max_value) + "]");
  }
  return static_cast<int>(n);
}

double OptionReader::Double(const std::string& key, double fallback, double min_value,
                            double max_value) {
  const OptionValue* v = Find(key);
  if (v == nullptr) return fallback;
  double x = 0;
  if (!ParseNumber(v->text, &x) || x < min_value || x > max_value) {
    throw Fail(key, "must be a number in [" + Num(min_value) + ", " + Num(max_value) + "]");
  }
  return x;
}

double OptionReader::Bytes(const std::string& key, double fallback) {
  const OptionValue* v = Find(key);
  if (v == nullptr) return fallback;
  double bytes = 0;
  try {
    bytes = ParseBytes(v->text);
  } catch (const UnitError& e) {
    throw Fail(key, e.what());
  }
  if (bytes <= 0) throw Fail(key, "must be greater than 0 bytes");
  return bytes;
}

std::string OptionReader::Choice(const std::string& key, const std::string& fallback,
                                 const std::vector<std::string>& allowed) {
  const OptionValue* v = Find(key);
  if (v == nullptr) return fallback;
  if (std::find(allowed.begin(), allowed.end(), v->text) != allowed.end()) return v->text;
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw Fail(key, "must be one of: " + list);
}

std::string OptionReader::Text(const std::string& key, const std::string& fallback) {
  const OptionValue* v = Find(key);
  return v == nullptr ? fallback : v->text;
}

void OptionReader::Finish() const {
  // std::map iterates in key order, so the first unknown option reported is deterministic.
  for (const auto& [key, value] : spec_.options) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::vector<std::string> known = known_;
    std::sort(known.begin(), known.end());
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw Fail(key, known.empty()
                        ? "unknown option (strategy kind " + spec_.kind + " takes no options)"
                        : "unknown option (known: " + list + ")");
  }
}

ConfigError OptionReader::Fail(const std::string& key, const std::string& rule) const {
  // An empty key: a rule about the strategy as a whole (its kind, or how it meets the
  // training setup), located at the strategy itself.
  std::string path = key.empty() ? spec_.key_path : spec_.key_path + ".options." + key;
  auto it = spec_.options.find(key);
  if (it == spec_.options.end()) return ConfigError(spec_.where, path, "", rule);
  return ConfigError(it->second.where, path, it->second.text, rule);
}

}  // namespace stratasim

namespace stratasim {

std::string_view ToString(Fidelity f) {
  switch (f) {
    case Fidelity::kStep:
      return "step";
    case Fidelity::kStream:
      return "stream";
    case Fidelity::kAnalytic:
      return "analytic";
  }
  return "?";
}

}  // namespace stratasim
