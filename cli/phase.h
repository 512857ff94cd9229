// What the program is doing, for the message when memory runs out: a bad_alloc can come from
// anywhere, and "out of memory while planning strategy tp8" says what to make smaller. Kept
// in a fixed buffer, so that naming the phase never allocates.
#ifndef STRATASIM_CLI_PHASE_H_
#define STRATASIM_CLI_PHASE_H_

#include <cstdio>
#include <string>

namespace stratasim {

inline char* PhaseBuffer() {
  static char phase[160] = "starting";
  return phase;
}

// `what` and, if not empty, `name` in quotes: "planning strategy 'tp8'".
inline void SetPhase(const char* what, const std::string& name = "") {
  if (name.empty()) {
    std::snprintf(PhaseBuffer(), 160, "%s", what);
  } else {
    std::snprintf(PhaseBuffer(), 160, "%s '%.100s'", what, name.c_str());
  }
}

inline const char* CurrentPhase() { return PhaseBuffer(); }

}  // namespace stratasim

#endif  // STRATASIM_CLI_PHASE_H_
