// Helpers shared by the models' tests.
#ifndef STRATASIM_MODELS_TEST_UTIL_H_
#define STRATASIM_MODELS_TEST_UTIL_H_

#include "core/scenario.h"
#include "models/workload.h"

namespace stratasim::testing {

inline ModelSpec Transformer(const char* kind, int l, int h, int a, int s, int V) {
  ModelSpec m;
  m.kind = kind;
  m.layers = l;
  m.hidden = h;
  m.heads = a;
  m.sequence = s;
  m.vocabulary = V;
  return m;
}

// Forward + backward FLOPs summed over every op (recomputation excluded).
inline double TrainingFlops(const Workload& w) { return w.ForwardFlops() + w.BackwardFlops(); }

}  // namespace stratasim::testing

#endif  // STRATASIM_MODELS_TEST_UTIL_H_
