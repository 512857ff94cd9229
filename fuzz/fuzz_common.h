// What every fuzz target does with one input: hand it to a reader as text and accept the two
// ways core/ reports bad input, stratasim::ConfigError (file, line, column, key) and
// stratasim::Error. Any other exception escapes, std::terminate aborts, and libFuzzer keeps the
// input as a crash, like a sanitizer report, a timeout or running out of memory.
#ifndef STRATASIM_FUZZ_FUZZ_COMMON_H_
#define STRATASIM_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/units.h"

namespace stratasim::fuzz {

inline std::string Text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Returns true when `read` accepted the input, false when it rejected it as it should.
template <typename Read>
bool Accepts(Read read) {
  try {
    read();
    return true;
  } catch (const ConfigError&) {
  } catch (const UnitError&) {
    throw;  // a unit the loader let through without locating it: a bug to report
  } catch (const Error&) {
  }
  return false;
}

}  // namespace stratasim::fuzz

#endif  // STRATASIM_FUZZ_FUZZ_COMMON_H_
