#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/error.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/pipeline_lowering.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

std::string Order(const std::string& schedule, int stage, int stages = 4, int m = 8) {
  return ScheduleString(PipelineSchedule(schedule, stages, stage, m, 1));
}

std::string ErrorOf(const std::string& schedule, int stages, int m) {
  try {
    MerakSchedule(schedule, stages, 0, m);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(MerakSchedule, PreRecomputeCheckpointsTheCooldownAndRecomputesBeforeTheGradient) {
  // Stage 0 of 4: 3 warm-up forwards, so micro-batches 5-7 have their backward in the cool-down.
  EXPECT_EQ(Order("pre_recompute", 0),
            "F0 F1 F2 F3 B0 F4 B1 F5* B2 F6* B3 F7* B4 R5 B5 R6 B6 R7 B7");
  EXPECT_EQ(Order("pre_recompute", 2), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7* B6 R7 B7");
  // The last stage has no cool-down: plain 1F1B.
  EXPECT_EQ(Order("pre_recompute", 3), Order("1f1b", 3));
}

TEST(MerakSchedule, LastNoRecomputeRecomputesStageTwoFromLastsFirstMicroBatchEarly) {
  EXPECT_EQ(Order("last_no_recompute", 3), Order("1f1b", 3));
  EXPECT_EQ(Order("last_no_recompute", 2), "F0* F1 R0 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  EXPECT_EQ(Order("last_no_recompute", 1), Order("pre_recompute", 1));
  EXPECT_EQ(Order("last_no_recompute", 0), Order("pre_recompute", 0));
}

TEST(MerakSchedule, ShiftedCriticalPathRunsTheThirdForwardBeforeTheFirstBackward) {
  EXPECT_EQ(Order("shifted_critical_path", 3), Order("1f1b", 3));
  // Stage p - 2: F0 F1 F2 B0 B1 F3 B2 ..., micro-batches 0 and 1 checkpointed and recomputed
  // before their gradients arrive.
  EXPECT_EQ(Order("shifted_critical_path", 2),
            "F0* F1* F2 R0 B0 R1 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  // Stage p - 3: micro-batch 0 early, the cool-down as pre_recompute.
  EXPECT_EQ(Order("shifted_critical_path", 1),
            "F0* F1 F2 R0 B0 F3 B1 F4 B2 F5 B3 F6* B4 F7* B5 R6 B6 R7 B7");
  EXPECT_EQ(Order("shifted_critical_path", 0), Order("pre_recompute", 0));
  // Two stages: stage 0 is stage p - 2.
  EXPECT_EQ(Order("shifted_critical_path", 0, 2, 4), "F0* F1* F2 R0 B0 R1 B1 F3 B2 B3");
}

TEST(MerakSchedule, EveryStageRunsEachMicroBatchOnceAndRecomputesOnlyCheckpointedOnes) {
  for (const std::string schedule :
       {"pre_recompute", "last_no_recompute", "shifted_critical_path"}) {
    for (int stages : {2, 3, 4, 8}) {
      for (int m : {stages < 4 ? 4 : stages, 2 * stages + 1}) {
        for (int st = 0; st < stages; ++st) {
          std::map<int, int> forwards, backwards;
          std::map<int, bool> checkpointed, recomputed;
          for (const PipelineOp& op : PipelineSchedule(schedule, stages, st, m, 1)) {
            const std::string where = schedule + " stage " + std::to_string(st) + " of " +
                                      std::to_string(stages) + ", m " + std::to_string(m);
            if (op.recompute) {
              EXPECT_TRUE(checkpointed[op.micro_batch]) << where;
              EXPECT_EQ(backwards[op.micro_batch], 0) << where;
              recomputed[op.micro_batch] = true;
            } else if (op.forward) {
              ++forwards[op.micro_batch];
              checkpointed[op.micro_batch] = op.checkpoint;
            } else {
              EXPECT_EQ(forwards[op.micro_batch], 1) << where;
              // A checkpointed micro-batch is recomputed before its backward.
              EXPECT_EQ(recomputed[op.micro_batch], checkpointed[op.micro_batch]) << where;
              ++backwards[op.micro_batch];
            }
          }
          for (int mb = 0; mb < m; ++mb) {
            EXPECT_EQ(forwards[mb], 1);
            EXPECT_EQ(backwards[mb], 1);
            if (st == stages - 1) {
              EXPECT_FALSE(checkpointed[mb]);
            }
          }
        }
      }
    }
  }
}

TEST(MerakSchedule, RejectsTooFewMicroBatches) {
  EXPECT_EQ(ErrorOf("pre_recompute", 4, 3),
            "schedule pre_recompute needs micro_batches (3) >= stages (4), as Merak does");
  EXPECT_EQ(ErrorOf("shifted_critical_path", 2, 3),
            "schedule shifted_critical_path needs micro_batches (3) >= 4, as Merak does");
  EXPECT_EQ(ErrorOf("1f1b", 2, 3), "unknown Merak schedule 1f1b");
  EXPECT_TRUE(IsMerakSchedule("pre_recompute"));
  EXPECT_FALSE(IsMerakSchedule("1f1b"));
  EXPECT_TRUE(LastStageNeverRecomputes("shifted_critical_path"));
  EXPECT_FALSE(LastStageNeverRecomputes("pre_recompute"));
}

// A GPT of 8 layers on `stages` GPUs, one replica, `m` micro-batches, lowered with `schedule`
// and the model's recomputation `mode` on every stage.
Plan Lowered(const std::string& schedule, Recompute mode, int stages = 4, int m = 8) {
  const Scenario s = testing::TinyGptScenario({stages, 1, m, 1, 8, 4});
  PipelineShape o;
  o.p = stages;
  o.m = m;
  o.schedule = schedule;
  o.order = "tpd";
  o.bucket_cap = 25.0 * 1024 * 1024;
  ModelSpec model = s.model;
  model.recompute = mode;
  Workload w = BuildWorkload(model, 1, DType::kBF16);
  std::vector<int> bounds = EvenPartition(w, stages);
  Plan plan = PipelineLowering(s, o, std::move(w), {}, std::move(bounds)).Lower();
  plan.graph.Validate();
  return plan;
}

std::vector<double> FlopsPerRank(const Plan& plan, Phase phase) {
  std::vector<double> flops(plan.graph.num_ranks(), 0);
  for (const Task& t : plan.graph.tasks()) {
    if (t.kind == TaskKind::kCompute && t.phase == phase) flops[t.rank] += t.flops;
  }
  return flops;
}

// Whether task `id` depends, directly or through its dependencies, on a task named `name`.
bool Awaits(const TaskGraph& g, TaskId id, const std::string& name) {
  std::vector<TaskId> todo = {id};
  std::set<TaskId> seen;
  while (!todo.empty()) {
    const Task& t = g.task(todo.back());
    todo.pop_back();
    if (t.name.str() == name) return true;
    for (TaskId d : t.deps) {
      if (seen.insert(d).second) todo.push_back(d);
    }
  }
  return false;
}

TEST(MerakLowering, RecomputesACheckpointedMicroBatchWithoutWaitingForItsGradient) {
  // Two stages, two micro-batches: stage 0 runs F0 F1* B0 R1 B1 (pre_recompute).
  const Plan plan = Lowered("pre_recompute", Recompute::kNone, 2, 2);
  const TaskGraph& g = plan.graph;
  const std::string gradient = "it0/mb1/recv_gradient";
  int recomputes = 0, backwards = 0;
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::kCompute) continue;
    if (t.phase == Phase::kRecompute) {
      ++recomputes;
      EXPECT_EQ(t.rank, 0) << t.name.str();
      EXPECT_EQ(t.name.str().rfind("it0/mb1/", 0), 0u) << t.name.str();
      EXPECT_FALSE(Awaits(g, t.id, gradient)) << t.name.str();
    }
    // The backward of micro-batch 1 re-runs nothing, and follows the gradient.
    if (t.phase == Phase::kBackward && t.rank == 0 && t.name.str().rfind("it0/mb1/", 0) == 0) {
      ++backwards;
      EXPECT_TRUE(Awaits(g, t.id, gradient)) << t.name.str();
    }
  }
  EXPECT_GT(recomputes, 0);
  EXPECT_GT(backwards, 0);
}

TEST(MerakLowering, MovesTheRecomputationOfAFullyRecomputedModelWithoutAddingAny) {
  const Plan one_f_one_b = Lowered("1f1b", Recompute::kFull);
  const Plan pre = Lowered("pre_recompute", Recompute::kFull);
  EXPECT_EQ(FlopsPerRank(pre, Phase::kRecompute), FlopsPerRank(one_f_one_b, Phase::kRecompute));
  EXPECT_EQ(FlopsPerRank(pre, Phase::kBackward), FlopsPerRank(one_f_one_b, Phase::kBackward));
}

TEST(MerakLowering, TheLastStageNeverRecomputesUnderLastNoRecomputeAndShiftedCriticalPath) {
  for (const std::string schedule : {"last_no_recompute", "shifted_critical_path"}) {
    const std::vector<double> flops =
        FlopsPerRank(Lowered(schedule, Recompute::kFull), Phase::kRecompute);
    EXPECT_EQ(flops[3], 0) << schedule;
    for (int r = 0; r < 3; ++r) EXPECT_GT(flops[r], 0) << schedule << " rank " << r;
  }
  // Without the model's recomputation only the checkpointed micro-batches recompute: stage 2
  // of shifted_critical_path micro-batches 0 and 1, of last_no_recompute micro-batch 0.
  const std::vector<double> shifted =
      FlopsPerRank(Lowered("shifted_critical_path", Recompute::kNone), Phase::kRecompute);
  const std::vector<double> last =
      FlopsPerRank(Lowered("last_no_recompute", Recompute::kNone), Phase::kRecompute);
  EXPECT_DOUBLE_EQ(shifted[2], 2 * last[2]);
  EXPECT_GT(last[2], 0);
  EXPECT_EQ(shifted[3], 0);
}

}  // namespace
}  // namespace stratasim
