// Sub-pipelined tensor parallelism (TensorLayerEmitter::SubPipeline) as a graph: the halves, their
// all-reduces on the sub-pipeline's stream, and the same work as the unsplit layer.
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "strategies/tensor/megatron.h"
#include "strategies/tensor/tp_layer.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

struct Emitted {
  TaskGraph g{2};
  double flops = 0;    // compute FLOPs of rank 0
  double reduced = 0;  // all-reduced bytes of rank 0's group
  int all_reduces = 0;
  std::map<std::string, int> streams;  // of rank 0's tasks, by stream name
};

// Forward and backward of transformer layer 1 of a tiny GPT with t = 2 (full recomputation when
// `recompute`), and of the embedding before it, at sub-pipelining `level`.
Emitted Emit(int level, bool recompute = false) {
  Scenario s = testing::TinyGptScenario({2, 1, 2, 2, 2, 4});
  if (recompute) s.model.recompute = Recompute::kFull;
  const Workload w =
      TensorParallelShard(BuildWorkload(s.model, 2, DType::kBF16), 2, false, s.model);
  Emitted e;
  const int compute = e.g.Stream("compute");
  TensorLayerEmitter em(e.g, DType::kBF16, compute, false, 2.0 * 128 * 256 * 2);
  em.SubPipeline(level);
  std::vector<TaskId> last(2, -1);
  const std::vector<std::vector<int>> groups = {{0, 1}};
  for (int i = 0; i < 3; ++i) em.Forward(w.layers[i], groups, 0, "mb0/", last);
  for (int i = 2; i >= 0; --i) em.Backward(w.layers[i], groups, 0, "mb0/", last);
  e.g.Validate();
  for (const Task& t : e.g.tasks()) {
    if (t.rank != 0) continue;
    if (t.kind == TaskKind::kCompute) e.flops += t.flops;
    if (t.kind == TaskKind::kCollective) {
      const Collective& c = e.g.collective(t.collective);
      e.reduced += c.bytes;
      ++e.all_reduces;
    }
    ++e.streams[e.g.streams()[t.stream]];
  }
  return e;
}

TEST(SubPipelinedTensorParallel, SplitsTheWorkAndTheAllReducesInHalves) {
  const Emitted plain = Emit(0);
  for (int level = 1; level <= 3; ++level) {
    const Emitted split = Emit(level);
    EXPECT_NEAR(split.flops, plain.flops, 1e-9 * plain.flops) << level;
    EXPECT_NEAR(split.reduced, plain.reduced, 1e-9 * plain.reduced) << level;
    // Layers 1 and 2 (the embedding's all-reduce stays whole): 2 forward and 2 backward each.
    EXPECT_EQ(split.all_reduces, plain.all_reduces + 8) << level;
    EXPECT_EQ(split.streams.count("tp_subpipe"), 1u) << level;
    EXPECT_EQ(split.streams.at("tp_subpipe"), 16) << level;
  }
  EXPECT_EQ(plain.streams.count("tp_subpipe"), 0u);
  // Level 3 runs the second half's last elementwise kernels beside the next layer.
  EXPECT_EQ(Emit(2).streams.count("tp_subpipe_compute"), 0u);
  EXPECT_GT(Emit(3).streams.at("tp_subpipe_compute"), 0);
}

TEST(SubPipelinedTensorParallel, RecomputationRunsInHalvesToo) {
  const Emitted plain = Emit(0, true), split = Emit(2, true);
  EXPECT_NEAR(split.flops, plain.flops, 1e-9 * plain.flops);
  // Each recomputed layer's forward all-reduces again, in halves.
  EXPECT_EQ(split.streams.at("tp_subpipe"), 24);
}

TEST(SubPipelinedTensorParallel, LevelOneSplitsOnlyTheGemmBeforeEachAllReduce) {
  const Emitted e = Emit(1);
  int proj_halves = 0, qkv_forward_halves = 0;
  for (const Task& t : e.g.tasks()) {
    const std::string name = t.name.str();
    if (t.rank != 0) continue;
    if (name.find("layer1/proj/fwd/half") != std::string::npos) ++proj_halves;
    if (name.find("layer1/qkv/fwd/half") != std::string::npos) ++qkv_forward_halves;
  }
  EXPECT_EQ(proj_halves, 2);
  EXPECT_EQ(qkv_forward_halves, 0);
}

TEST(SubPipelinedTensorParallel, RejectsWhatItDoesNotCombineWith) {
  TaskGraph g(2);
  const int compute = g.Stream("compute");
  TensorLayerEmitter bad_level(g, DType::kBF16, compute, false, 1);
  try {
    bad_level.SubPipeline(4);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "sub-pipelined tensor parallelism has levels 0 to 3, not 4");
  }
  TensorLayerEmitter sp(g, DType::kBF16, compute, true, 1);
  try {
    sp.SubPipeline(1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "sub-pipelined tensor parallelism does not combine with sequence parallelism, "
                 "tp_comm_overlap or context parallelism");
  }
  sp.SubPipeline(0);  // off is always fine
}

}  // namespace
}  // namespace stratasim
