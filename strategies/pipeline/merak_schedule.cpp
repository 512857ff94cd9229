// Merak's pipeline schedules (Lai et al. 2023, TPDS, §4.1): 1F1B variants that move activation
// recomputation off the pipeline's critical path. Derived from the behaviour of Merak's
// runtime (its PreRecompute, LastNoRecompute and FullCriticalPath train schedules), written as
// stage orders of forwards (F), checkpointed forwards (F*: only the layers' inputs kept),
// recomputations (R: the forward of a checkpointed micro-batch run again before its gradient
// is received) and backwards (B).
//
//   pre_recompute          on every stage but the last, the forwards whose backwards fall in
//                          the cool-down (the last min(p - s - 1, m) micro-batches) are
//                          checkpointed, and each of those backwards is preceded by its
//                          recomputation: the stage would otherwise idle waiting for the
//                          gradient, so the recomputation fills that wait.
//   last_no_recompute      the last stage never recomputes (it holds one micro-batch's
//                          activations at a time); stage p - 2 checkpoints micro-batch 0 and
//                          recomputes it before its first gradient arrives (the longest wait,
//                          the last stage's forward and backward of micro-batch 0), and runs
//                          its cool-down plainly; the other stages as pre_recompute.
//   shifted_critical_path  as last_no_recompute, but stage p - 2 runs its third forward before
//                          its first backward (F0* F1* F2 R0 B0 R1 B1 F3 B2 ...), so the last
//                          stage finds micro-batch 2 ready after its backward of micro-batch 1,
//                          and recomputes micro-batches 0 and 1 before their gradients arrive;
//                          stage p - 3 checkpoints micro-batch 0 and recomputes it before its
//                          first gradient. Needs m >= 4 (Merak asserts it).
//
// Simplified: Merak re-sends the last stage's first two gradients ahead of its receives and
// orders some sends after recomputations; here every send leaves as soon as its tensor is
// computed (non-blocking point to point on streams of their own), as the lowering does for all
// schedules. A checkpointed forward drops the activations of all the stage's recomputable
// layers (Merak's re-run covers the whole stage as well).
#include <algorithm>

#include "core/error.h"
#include "strategies/pipeline/pipeline.h"

namespace stratasim {
namespace {

PipelineOp F(int mb, bool checkpoint = false) { return {true, mb, 0, checkpoint, false}; }
PipelineOp B(int mb) { return {false, mb, 0, false, false}; }
PipelineOp R(int mb) { return {false, mb, 0, false, true}; }

// 1F1B where the forwards of micro-batches [first_pre, m) are checkpointed and each of their
// backwards is preceded by its recomputation; `early` micro-batches [0, early) likewise.
std::vector<PipelineOp> PreRecompute1F1B(int stages, int stage, int m, int first_pre, int early) {
  const int warmup = std::min(stages - stage - 1, m);
  auto pre = [&](int mb) { return mb >= first_pre || mb < early; };
  std::vector<PipelineOp> ops;
  auto backward = [&](int mb) {
    if (pre(mb)) ops.push_back(R(mb));
    ops.push_back(B(mb));
  };
  for (int i = 0; i < warmup; ++i) ops.push_back(F(i, pre(i)));
  for (int i = 0; i < m - warmup; ++i) {
    ops.push_back(F(warmup + i, pre(warmup + i)));
    backward(i);
  }
  for (int i = m - warmup; i < m; ++i) backward(i);
  return ops;
}

// Stage p - 2 of shifted_critical_path: F0* F1* F2 R0 B0 R1 B1, then 1F1B from F3.
std::vector<PipelineOp> ShiftedSecondToLast(int m) {
  std::vector<PipelineOp> ops = {F(0, true), F(1, true), F(2), R(0), B(0), R(1), B(1)};
  for (int i = 3; i < m; ++i) ops.push_back(F(i)), ops.push_back(B(i - 1));
  ops.push_back(B(m - 1));
  return ops;
}

}  // namespace

bool IsMerakSchedule(const std::string& schedule) {
  return schedule == "last_no_recompute" || schedule == "pre_recompute" ||
         schedule == "shifted_critical_path";
}

bool LastStageNeverRecomputes(const std::string& schedule) {
  return schedule == "last_no_recompute" || schedule == "shifted_critical_path";
}

std::vector<PipelineOp> MerakSchedule(const std::string& schedule, int stages, int stage, int m) {
  if (!IsMerakSchedule(schedule)) throw Error("unknown Merak schedule " + schedule);
  if (m < stages) {
    throw Error("schedule " + schedule + " needs micro_batches (" + std::to_string(m) +
                ") >= stages (" + std::to_string(stages) + "), as Merak does");
  }
  if (schedule == "shifted_critical_path" && m < 4) {
    throw Error("schedule shifted_critical_path needs micro_batches (" + std::to_string(m) +
                ") >= 4, as Merak does");
  }
  const int last = stages - 1;
  // The cool-down's micro-batches: the last min(p - s - 1, m) ones.
  const int cooldown_first = m - std::min(stages - stage - 1, m);
  if (stage == last) return PreRecompute1F1B(stages, stage, m, m, 0);  // plain 1F1B
  if (schedule == "pre_recompute") return PreRecompute1F1B(stages, stage, m, cooldown_first, 0);
  if (stage == last - 1) {
    if (schedule == "last_no_recompute") return PreRecompute1F1B(stages, stage, m, m, 1);
    return ShiftedSecondToLast(m);
  }
  const int early = schedule == "shifted_critical_path" && stage == last - 2 ? 1 : 0;
  return PreRecompute1F1B(stages, stage, m, cooldown_first, early);
}

}  // namespace stratasim
