#include "core/error.h"

#include <utility>

#include "core/limits.h"

namespace stratasim {
namespace {

// A value or key is echoed whole up to limits::kEchoBytes; longer ones (a million-digit seed, a
// 5 MB name) are cut, with their size, so one message never floods the terminal.
std::string Echo(const std::string& text) {
  if (text.size() <= limits::kEchoBytes) return text;
  return text.substr(0, limits::kEchoBytes - 16) + "... (" + std::to_string(text.size()) +
         " bytes)";
}

std::string Format(const SourceLocation& where, const std::string& key, const std::string& value,
                   const std::string& rule) {
  std::string out = where.file.empty() ? std::string("<input>") : where.file;
  if (where.line > 0) {
    out += ":" + std::to_string(where.line);
    if (where.column > 0) out += ":" + std::to_string(where.column);
  }
  out += ": " + (key.empty() ? std::string("<document>") : Echo(key));
  if (!value.empty()) out += " = \"" + Echo(value) + "\"";
  out += ": " + rule;
  return out;
}

}  // namespace

ConfigError::ConfigError(SourceLocation where, std::string key, std::string value, std::string rule)
    : Error(Format(where, key, value, rule)),
      where_(std::move(where)),
      key_(std::move(key)),
      value_(std::move(value)),
      rule_(std::move(rule)) {}

}  // namespace stratasim
