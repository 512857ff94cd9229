// A progress log that discards what it is given when the caller wants none (out == nullptr):
// the calibration sweeps print each measurement as they go.
#ifndef STRATASIM_VALIDATE_OPTIONAL_LOG_H_
#define STRATASIM_VALIDATE_OPTIONAL_LOG_H_

#include <ostream>

namespace stratasim::validate {

struct OptionalLog {
  std::ostream* out;
  template <typename T>
  OptionalLog& operator<<(const T& v) {
    if (out) *out << v;
    return *this;
  }
};

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_OPTIONAL_LOG_H_
