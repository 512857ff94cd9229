// Internal to core/: string <-> enum tables shared by the JSON readers of graphs and traces.
#ifndef STRATASIM_CORE_JSON_ENUMS_H_
#define STRATASIM_CORE_JSON_ENUMS_H_

#include <string>
#include <string_view>

#include "core/error.h"

namespace stratasim::internal {

// Finds the enum whose ToString() is `text` among `values`; throws Error naming `where`.
template <typename E, size_t N>
E EnumFromString(const E (&values)[N], const std::string& text, const std::string& where) {
  std::string known;
  for (E v : values) {
    if (ToString(v) == text) return v;
    known += (known.empty() ? "" : ", ") + std::string(ToString(v));
  }
  throw Error(where + ": \"" + text + "\" is not one of: " + known);
}

}  // namespace stratasim::internal

#endif  // STRATASIM_CORE_JSON_ENUMS_H_
