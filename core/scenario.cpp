#include "core/scenario.h"

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
