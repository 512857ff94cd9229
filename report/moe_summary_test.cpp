#include "report/moe_summary.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace stratasim {
namespace {

// Two ranks, three iterations (one warm-up): per rank and iteration a compute task, an
// all-to-all member and, in iteration 2, a placement transfer; the times are set by hand.
struct Fixture {
  TaskGraph g{2};
  ExecutionTrace t;

  void Add(int rank, int it, TaskKind kind, const std::string& category, double start, double end) {
    Task task;
    task.kind = kind == TaskKind::kCollective ? TaskKind::kSend : kind;
    task.rank = rank;
    task.stream = g.Stream(category.empty() ? "compute" : category);
    task.iteration = it;
    task.category = category;
    if (task.kind == TaskKind::kSend) {
      // A lone send needs its receive: pair it on the other rank.
      Task recv = task;
      recv.kind = TaskKind::kRecv;
      recv.rank = 1 - rank;
      const auto ids = g.AddTransfer(rank, 1 - rank, 1, task, recv);
      Record(ids.first, start, end);
      Record(ids.second, start, end);
      return;
    }
    Record(g.Add(task), start, end);
  }
  void Record(TaskId id, double start, double end) {
    if (static_cast<int>(t.records.size()) <= id) t.records.resize(id + 1);
    t.records[id].task = id;
    t.records[id].start_s = start;
    t.records[id].end_s = end;
  }
};

TEST(MoeSummaryTest, DistributionExposureAndFigures) {
  Fixture f;
  // Iteration 0 (warm-up) ends at 1; iteration 1 at 3; iteration 2 at 6.
  for (int r = 0; r < 2; ++r) {
    f.Add(r, 0, TaskKind::kCompute, "", 0, 1);
    f.Add(r, 1, TaskKind::kCompute, "", 1, 2);
    f.Add(r, 2, TaskKind::kCompute, "", 3, 5);
  }
  // All-to-all of iteration 1 on rank 0: [1.5, 3], of which [2, 3] exposed (x2 for the pair).
  f.Add(0, 1, TaskKind::kCollective, "a2a", 1.5, 3);
  // Placement in iteration 2 on rank 0: [4.5, 6]: [5, 6] exposed.
  f.Add(0, 2, TaskKind::kCollective, "placement", 4.5, 6);
  MoeFigures figures;
  figures.top_k = 2;
  figures.tokens_per_iteration = 600;
  figures.load_std_before = 30;
  figures.load_std_after = 10;
  figures.replicas = 1.5;
  figures.gpu_tokens_per_iteration = {{400, 200}, {350, 250}};
  figures.expert_parallel = 64;
  figures.expert_data_parallel = 4;
  Metrics m;
  m.peak_memory_bytes = {5, 7};
  const MoeSummary s = SummarizeMoe(f.g, f.t, 1, 2, figures, m);
  EXPECT_EQ(s.top_k, 2);
  EXPECT_EQ(s.iteration_s, (std::vector<double>{2, 3}));
  EXPECT_DOUBLE_EQ(s.mean_s, 2.5);
  EXPECT_EQ(s.p50_s, 2);
  EXPECT_EQ(s.p95_s, 3);
  EXPECT_EQ(s.min_s, 2);
  EXPECT_EQ(s.max_s, 3);
  EXPECT_DOUBLE_EQ(s.tokens_per_s, 240);
  EXPECT_DOUBLE_EQ(s.load_balance_ratio, 3);
  // Both ranks hold a member of each transfer: (1 + 1) exposed a2a seconds over 2 ranks x 2
  // iterations.
  EXPECT_DOUBLE_EQ(s.exposed_a2a_s, 2.0 / 4);
  EXPECT_DOUBLE_EQ(s.placement_s, 3.0 / 4);
  EXPECT_DOUBLE_EQ(s.placement_exposed_s, 2.0 / 4);
  EXPECT_EQ(s.peak_memory_bytes, 7);
  EXPECT_EQ(s.replicas, 1.5);
  const std::string json = MoeSummaryJson(s);
  EXPECT_NE(json.find("\"load_balance_ratio\":3.0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"speedup\":null"), std::string::npos) << json;
  EXPECT_EQ(s.gpu_tokens_per_iteration, figures.gpu_tokens_per_iteration);
  EXPECT_NE(json.find("\"gpu_tokens_per_iteration\":[[400.0,200.0],[350.0,250.0]]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"expert_parallel\":64,\"expert_data_parallel\":4"), std::string::npos)
      << json;
}

TEST(MoeSummaryTest, RatioWhenNothingWasUnbalanced) {
  Fixture f;
  f.Add(0, 0, TaskKind::kCompute, "", 0, 1);
  f.Add(1, 0, TaskKind::kCompute, "", 0, 1);
  Metrics m;
  MoeFigures figures;
  figures.top_k = 1;
  EXPECT_EQ(SummarizeMoe(f.g, f.t, 0, 1, figures, m).load_balance_ratio, 1);
  figures.load_std_before = 4;
  const MoeSummary perfect = SummarizeMoe(f.g, f.t, 0, 1, figures, m);
  EXPECT_TRUE(std::isinf(perfect.load_balance_ratio));
  EXPECT_NE(MoeSummaryJson(perfect).find("\"load_balance_ratio\":null"), std::string::npos);
  // Not recorded (more than kMaxMoeLoadSeriesGpus GPUs): null, not an empty list.
  EXPECT_NE(MoeSummaryJson(perfect).find("\"gpu_tokens_per_iteration\":null"), std::string::npos);
}

TEST(MoeSummaryTest, BadTraces) {
  Fixture f;
  f.Add(0, 0, TaskKind::kCompute, "", 0, 1);
  Metrics m;
  ExecutionTrace empty;
  EXPECT_THROW(SummarizeMoe(f.g, empty, 0, 1, {}, m), Error);
  EXPECT_THROW(SummarizeMoe(f.g, f.t, 0, 0, {}, m), Error);
}

}  // namespace
}  // namespace stratasim
