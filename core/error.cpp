#include "core/error.h"

#include <utility>

namespace stratasim {
namespace {

std::string Format(const SourceLocation& where, const std::string& key, const std::string& value,
                   const std::string& rule) {
  std::string out = where.file.empty() ? std::string("<input>") : where.file;
  if (where.line > 0) {
    out += ":" + std::to_string(where.line);
    if (where.column > 0) out += ":" + std::to_string(where.column);
  }
  out += ": " + (key.empty() ? std::string("<document>") : key);
  if (!value.empty()) out += " = \"" + value + "\"";
  out += ": " + rule;
  return out;
}

}  // namespace

ConfigError::ConfigError(SourceLocation where, std::string key, std::string value, std::string rule)
    : std::runtime_error(Format(where, key, value, rule)),
      where_(std::move(where)),
      key_(std::move(key)),
      value_(std::move(value)),
      rule_(std::move(rule)) {}

}  // namespace stratasim
