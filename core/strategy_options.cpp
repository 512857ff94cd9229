#include "core/strategy_options.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <utility>

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

std::string IntText(double v) { return std::to_string(static_cast<long long>(v)); }

const char* TypeName(OptionType t) {
  switch (t) {
    case OptionType::kBool:
      return "bool";
    case OptionType::kInt:
      return "integer";
    case OptionType::kNumber:
      return "number";
    case OptionType::kBytes:
      return "bytes";
    case OptionType::kChoice:
      return "choice";
    case OptionType::kText:
      return "text";
  }
  return "?";
}

std::string Joined(const std::vector<std::string>& items, const std::string& quote) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + quote + s + quote;
  return out;
}

// What values an option takes, for the listing and the docs.
std::string Values(const OptionSpec& o, const std::string& quote) {
  switch (o.type) {
    case OptionType::kBool:
      return quote + "true" + quote + ", " + quote + "false" + quote;
    case OptionType::kInt:
      return "[" + IntText(o.min) + ", " + IntText(o.max) + "]";
    case OptionType::kNumber:
      return "[" + Num(o.min) + ", " + Num(o.max) + "]";
    case OptionType::kBytes:
      return "> 0 (\"25MiB\")";
    case OptionType::kChoice:
      return Joined(o.choices, quote);
    case OptionType::kText:
      return "see meaning";
  }
  return "";
}

std::string DefaultText(const OptionSpec& o, const std::string& quote) {
  switch (o.absent) {
    case OptionSpec::Absent::kRequired:
      return "required";
    case OptionSpec::Absent::kDefault:
      return o.fallback.empty() ? "(empty)" : quote + o.fallback + quote;
    case OptionSpec::Absent::kDerived:
      return o.fallback;
  }
  return "";
}

OptionSpec Make(std::string key, OptionType type, std::string help) {
  OptionSpec o;
  o.key = std::move(key);
  o.type = type;
  o.help = std::move(help);
  return o;
}

}  // namespace

OptionSpec OptionSpec::Default(std::string text) const {
  OptionSpec o = *this;
  o.absent = Absent::kDefault;
  o.fallback = std::move(text);
  return o;
}

OptionSpec OptionSpec::Derived(std::string how) const {
  OptionSpec o = *this;
  o.absent = Absent::kDerived;
  o.fallback = std::move(how);
  return o;
}

OptionSpec Flag(std::string key, std::string help) {
  return Make(std::move(key), OptionType::kBool, std::move(help));
}

OptionSpec Integer(std::string key, int min, int max, std::string help) {
  OptionSpec o = Make(std::move(key), OptionType::kInt, std::move(help));
  o.min = min;
  o.max = max;
  return o;
}

OptionSpec Number(std::string key, double min, double max, std::string help) {
  OptionSpec o = Make(std::move(key), OptionType::kNumber, std::move(help));
  o.min = min;
  o.max = max;
  return o;
}

OptionSpec Size(std::string key, std::string help) {
  return Make(std::move(key), OptionType::kBytes, std::move(help));
}

OptionSpec OneOf(std::string key, std::vector<std::string> choices, std::string help) {
  OptionSpec o = Make(std::move(key), OptionType::kChoice, std::move(help));
  o.choices = std::move(choices);
  return o;
}

OptionSpec FreeText(std::string key, std::string help) {
  return Make(std::move(key), OptionType::kText, std::move(help));
}

OptionSpecs Join(OptionSpecs a, const OptionSpecs& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

OptionReader::OptionReader(const StrategySpec& spec, const OptionSpecs& declared)
    : spec_(spec), declared_(declared) {}

const OptionSpec& OptionReader::Declared(const std::string& key, OptionType type) const {
  for (const OptionSpec& o : declared_) {
    if (o.key != key) continue;
    if (o.type != type) {
      throw Error("strategy kind " + spec_.kind + " reads option " + key + " as " + TypeName(type) +
                  " but declares it " + TypeName(o.type));
    }
    return o;
  }
  throw Error("strategy kind " + spec_.kind + " reads option " + key +
              ", which it does not declare");
}

// The text to parse: the scenario's, else the declared default; nullptr when the planner
// supplies the value (Derived, read with a derived value).
const OptionValue* OptionReader::Value(const OptionSpec& o, bool derived_given) const {
  if (derived_given != (o.absent == OptionSpec::Absent::kDerived)) {
    throw Error("strategy kind " + spec_.kind + " reads option " + o.key +
                (derived_given ? " with a derived value but does not declare it Derived"
                               : " without the derived value it declares"));
  }
  auto it = spec_.options.find(o.key);
  if (it != spec_.options.end()) return &it->second;
  if (o.absent == OptionSpec::Absent::kRequired) throw Fail(o.key, "is required: " + o.help);
  return nullptr;
}

long long OptionReader::ParseInt(const OptionSpec& o, const std::string& text) const {
  long long n = 0;
  if (!ParseInteger(text, &n) || n < o.min || n > o.max) {
    throw Fail(o.key, "must be an integer in [" + IntText(o.min) + ", " + IntText(o.max) + "]");
  }
  return n;
}

double OptionReader::ParseDouble(const OptionSpec& o, const std::string& text) const {
  double x = 0;
  if (!ParseNumber(text, &x) || x < o.min || x > o.max) {
    throw Fail(o.key, "must be a number in [" + Num(o.min) + ", " + Num(o.max) + "]");
  }
  return x;
}

bool OptionReader::Bool(const std::string& key) {
  const OptionSpec& o = Declared(key, OptionType::kBool);
  const OptionValue* v = Value(o, false);
  const std::string& t = v != nullptr ? v->text : o.fallback;
  // The spellings of YAML 1.2's core schema.
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  throw Fail(key, "must be true or false");
}

int OptionReader::Int(const std::string& key) {
  const OptionSpec& o = Declared(key, OptionType::kInt);
  const OptionValue* v = Value(o, false);
  return static_cast<int>(ParseInt(o, v != nullptr ? v->text : o.fallback));
}

int OptionReader::Int(const std::string& key, int derived) {
  const OptionSpec& o = Declared(key, OptionType::kInt);
  const OptionValue* v = Value(o, true);
  return v != nullptr ? static_cast<int>(ParseInt(o, v->text)) : derived;
}

double OptionReader::Double(const std::string& key) {
  const OptionSpec& o = Declared(key, OptionType::kNumber);
  const OptionValue* v = Value(o, false);
  return ParseDouble(o, v != nullptr ? v->text : o.fallback);
}

double OptionReader::Double(const std::string& key, double derived) {
  const OptionSpec& o = Declared(key, OptionType::kNumber);
  const OptionValue* v = Value(o, true);
  return v != nullptr ? ParseDouble(o, v->text) : derived;
}

double OptionReader::Bytes(const std::string& key) {
  const OptionSpec& o = Declared(key, OptionType::kBytes);
  const OptionValue* v = Value(o, false);
  double bytes = 0;
  try {
    bytes = ParseBytes(v != nullptr ? v->text : o.fallback);
  } catch (const UnitError& e) {
    throw Fail(key, e.what());
  }
  if (bytes <= 0) throw Fail(key, "must be greater than 0 bytes");
  return bytes;
}

std::string OptionReader::Choice(const std::string& key) {
  const OptionSpec& o = Declared(key, OptionType::kChoice);
  const OptionValue* v = Value(o, false);
  const std::string& t = v != nullptr ? v->text : o.fallback;
  if (std::find(o.choices.begin(), o.choices.end(), t) != o.choices.end()) return t;
  throw Fail(key, "must be one of: " + Joined(o.choices, ""));
}

std::string OptionReader::Text(const std::string& key) {
  const OptionSpec& o = Declared(key, OptionType::kText);
  const OptionValue* v = Value(o, false);
  return v != nullptr ? v->text : o.fallback;
}

bool OptionReader::Given(const std::string& key) const { return spec_.options.count(key) > 0; }

void OptionReader::Finish() const {
  // std::map iterates in key order, so the first unknown option reported is deterministic.
  for (const auto& [key, value] : spec_.options) {
    const bool known = std::any_of(declared_.begin(), declared_.end(),
                                   [&](const OptionSpec& o) { return o.key == key; });
    if (known) continue;
    std::vector<std::string> keys;
    for (const OptionSpec& o : declared_) keys.push_back(o.key);
    std::sort(keys.begin(), keys.end());
    throw Fail(key, keys.empty()
                        ? "unknown option (strategy kind " + spec_.kind + " takes no options)"
                        : "unknown option (known: " + Joined(keys, "") + ")");
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

std::string OptionsText(const OptionSpecs& options) {
  if (options.empty()) return "  (no options)\n";
  std::ostringstream out;
  for (const OptionSpec& o : options) {
    out << "  " << o.key << ": " << TypeName(o.type) << ", " << Values(o, "")
        << "; default: " << DefaultText(o, "") << "\n      " << o.help << "\n";
  }
  return out.str();
}

std::string OptionsMarkdown(const OptionSpecs& options) {
  std::ostringstream out;
  out << "| option | type | values | default | meaning |\n|---|---|---|---|---|\n";
  for (const OptionSpec& o : options) {
    out << "| `" << o.key << "` | " << TypeName(o.type) << " | " << Values(o, "`") << " | "
        << DefaultText(o, "`") << " | " << o.help << " |\n";
  }
  return out.str();
}

}  // namespace stratasim
