#include "validate/fabric_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "validate/fabric_fit.h"
#include "validate/host/host_backend.h"
#include "validate/local_process_group.h"

namespace stratasim::validate {
namespace {

TEST(FabricSweep, LinkClassesFollowTheServers) {
  std::vector<std::string> unmeasured;
  auto groups = FabricClassGroups({"a", "a", "b", "b"}, &unmeasured);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].link_class, "intra");
  EXPECT_EQ(groups[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(groups[1].link_class, "inter");
  EXPECT_EQ(groups[1].ranks, (std::vector<int>{0, 2}));
  EXPECT_TRUE(unmeasured.empty());

  groups = FabricClassGroups({"a", "a", "a"}, &unmeasured);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].ranks, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(unmeasured.size(), 1u);
  EXPECT_EQ(unmeasured[0], "inter: every process runs on a (run on two or more servers)");

  unmeasured.clear();
  groups = FabricClassGroups({"a", "b"}, &unmeasured);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].link_class, "inter");
  EXPECT_EQ(unmeasured.at(0), "intra: one process on a (run two or more processes per server)");
}

// A transport that follows the alpha-beta model of fabric_fit.h exactly: per hop `hop_s`
// (intra) or 3x that (inter), bandwidth `Bps` (intra) or a quarter of it (inter). Each
// repetition starts a second after the previous, members join 1 us apart and end together, so
// the slowest member's time is the model's. `own` >= 0: only that rank's records are measured,
// as in a multi-process run.
struct ModelTransport {
  double hop_s = 2e-6;
  double Bps = 40e9;
  std::vector<std::string> hosts;

  ExecutionTrace Run(const TaskGraph& g, int own) const {
    ExecutionTrace t;
    t.num_ranks = g.num_ranks();
    t.records.resize(g.tasks().size());
    for (const Task& task : g.tasks()) {
      TraceRecord& r = t.records[static_cast<std::size_t>(task.id)];
      r.task = task.id;
      r.rank = task.rank;
      if (own >= 0 && task.rank != own) {
        r.start_s = r.end_s = -1;
        continue;
      }
      std::vector<int> ranks;
      int rep = 0;
      if (task.kind == TaskKind::kCollective) {
        ranks = g.collectives()[static_cast<std::size_t>(task.collective)].ranks;
        rep = task.collective;
      } else {
        ranks = {std::min(task.rank, task.peer), std::max(task.rank, task.peer)};
        rep = task.tag;
      }
      const FabricOp op = *ParseFabricOp(task.name.str());
      const int n = static_cast<int>(ranks.size());
      const bool inter = hosts[ranks[0]] != hosts[ranks[1]];
      const double hop = inter ? 3 * hop_s : hop_s, bw = inter ? Bps / 4 : Bps;
      const double model = LatencySteps(op, n) * hop + task.bytes * BusBandwidthFactor(op, n) / bw;
      const int position =
          static_cast<int>(std::find(ranks.begin(), ranks.end(), task.rank) - ranks.begin());
      r.start_s = rep + position * 1e-6;
      r.end_s = rep + (n - 1) * 1e-6 + model;
      r.peers_joined_s = rep + (n - 1) * 1e-6;
    }
    return t;
  }
};

FabricSweep Quick() {
  FabricSweep s;
  s.max_bytes = 1 << 20;
  s.bench.warmup = 1;
  s.bench.repetitions = 2;
  s.bench.min_total_s = 0;
  return s;
}

TEST(FabricSweep, OneProcessMeasuresTheIntraClassAndTheFitRecoversTheModel) {
  ModelTransport model;
  model.hosts.assign(4, "localhost");
  std::ostringstream log;
  const FabricMeasurements m = MeasureFabric([&](const TaskGraph& g) { return model.Run(g, -1); },
                                             nullptr, 4, Quick(), "simple", &log);
  EXPECT_EQ(m.measured, (std::vector<std::string>{"intra"}));
  ASSERT_EQ(m.unmeasured.size(), 1u);
  // 8 B .. 1 MiB: 18 sizes x 2 timed repetitions, less the sizes under one fp32 per member
  // (all-gather, reduce-scatter, all-to-all over 4: 16 B and up; 8 B skipped).
  EXPECT_EQ(m.samples.size(), static_cast<std::size_t>(2 * (18 + 17 + 17 + 17 + 18)));
  const std::vector<FabricClassFit> fits = FitFabric(m.samples);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_NEAR(fits[0].latency_s, 2e-6, 2e-6 * 1e-6);
  EXPECT_NEAR(fits[0].bandwidth_Bps, 40e9, 40e9 * 1e-6);
  EXPECT_NE(log.str().find("all_reduce x4:"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("fabric inter: every process runs on localhost"), std::string::npos);
}

// The control plane of ProcessGroup over threads (the data plane is the model's): enough to
// run MeasureFabric's gather and broadcast as processes would.
class ThreadGroup : public ProcessGroup {
 public:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    int size = 0;
    long round = 0;
    int arrived = 0;
    std::vector<std::string> slots, result;
  };
  ThreadGroup(Shared* s, int rank, std::string host) : s_(s), rank_(rank), host_(host) {}
  int rank() const override { return rank_; }
  int size() const override { return s_->size; }
  std::string host() const override { return host_; }
  double timeout_s() const override { return 10; }
  void Send(int, int, const void*, std::size_t, const Wait&) override { throw Error("unused"); }
  void Recv(int, int, void*, std::size_t, const Wait&) override { throw Error("unused"); }
  void SendRecv(int, const void*, std::size_t, int, void*, std::size_t, int, const Wait&) override {
    throw Error("unused");
  }
  void Barrier() override { AllGather(""); }
  void Broadcast(std::string* text, int root) override { *text = AllGather(*text)[root]; }
  std::vector<std::string> AllGather(const std::string& mine) override {
    std::unique_lock<std::mutex> lock(s_->mu);
    const long round = s_->round;
    s_->slots[rank_] = mine;
    if (++s_->arrived == s_->size) {
      s_->result = s_->slots;
      s_->arrived = 0;
      ++s_->round;
      s_->cv.notify_all();
    } else {
      s_->cv.wait(lock, [&] { return s_->round != round; });
    }
    return s_->result;
  }
  std::vector<std::optional<std::string>> GatherToRoot(const std::string& mine) override {
    const std::vector<std::string> all = AllGather(mine);
    if (rank_ != 0) return {};
    return {all.begin(), all.end()};
  }

 private:
  Shared* s_;
  int rank_;
  std::string host_;
};

TEST(FabricSweep, ProcessesOnTwoServersAgreeOnBothClasses) {
  ModelTransport model;
  model.hosts = {"a", "a", "b", "b"};
  ThreadGroup::Shared shared;
  shared.size = 4;
  shared.slots.resize(4);
  std::vector<FabricMeasurements> results(4);
  std::vector<std::thread> threads;
  for (int p = 0; p < 4; ++p) {
    threads.emplace_back([&, p] {
      ThreadGroup group(&shared, p, model.hosts[p]);
      results[p] = MeasureFabric([&](const TaskGraph& g) { return model.Run(g, p); }, &group, 0,
                                 Quick(), "simple", nullptr);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(results[0].measured, (std::vector<std::string>{"intra", "inter"}));
  EXPECT_TRUE(results[0].unmeasured.empty());
  for (int p = 1; p < 4; ++p) {
    ASSERT_EQ(results[p].samples.size(), results[0].samples.size());
    for (std::size_t i = 0; i < results[0].samples.size(); ++i) {
      EXPECT_EQ(results[p].samples[i].seconds, results[0].samples[i].seconds);
    }
  }
  const std::vector<FabricClassFit> fits = FitFabric(results[0].samples);
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_NEAR(fits[0].latency_s, 2e-6, 2e-6 * 1e-6);
  EXPECT_NEAR(fits[0].bandwidth_Bps, 40e9, 40e9 * 1e-6);
  EXPECT_EQ(fits[1].link_class, "inter");
  EXPECT_NEAR(fits[1].latency_s, 6e-6, 6e-6 * 1e-6);
  EXPECT_NEAR(fits[1].bandwidth_Bps, 10e9, 10e9 * 1e-6);
}

TEST(FabricSweep, ARankThatSentNothingIsNamed) {
  ModelTransport model;
  model.hosts = {"a", "a"};
  try {
    // Rank 1 measures nothing: its records are missing (tasks 0-1 are the warm-up).
    MeasureFabric([&](const TaskGraph& g) { return model.Run(g, 0); }, nullptr, 2, Quick(),
                  "simple", nullptr);
    FAIL();
  } catch (const ProcessGroupError& e) {
    EXPECT_EQ(e.peer(), 1);
    EXPECT_STREQ(e.what(), "calibrate --fabric: rank 1 did not measure task 3");
  }
}

// The real host transport (threads of one process, shared memory): the loop runs and every
// size yields a positive time.
TEST(FabricSweep, HostBackendThreads) {
  HostBackendOptions o;
  o.ranks = 2;
  HostBackend backend(o);
  FabricSweep sweep = Quick();
  sweep.max_bytes = 1 << 16;
  sweep.ops = {FabricOp::kAllReduce, FabricOp::kSendRecv};
  const FabricMeasurements m =
      MeasureFabric([&](const TaskGraph& g) { return backend.Run(g, RunOptions{}); }, nullptr, 2,
                    sweep, "simple", nullptr);
  EXPECT_EQ(m.samples.size(), static_cast<std::size_t>(2 * 2 * 14));
  for (const FabricSample& s : m.samples) EXPECT_GT(s.seconds, 0) << s.bytes;
}

// The host backend one rank per process (RunOptions::processes) over thread-processes standing
// in for MPI's, on two "servers": real bytes over the process group's transport for both
// classes, and every process holds the same times.
TEST(FabricSweep, HostBackendOneRankPerProcessOnTwoServers) {
  const std::vector<std::string> hosts = {"a", "a", "b", "b"};
  std::vector<std::unique_ptr<ProcessGroup>> groups = LocalProcessGroups(4, 30, hosts);
  FabricSweep sweep = Quick();
  sweep.max_bytes = 1 << 14;
  std::vector<FabricMeasurements> results(4);
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (int p = 0; p < 4; ++p) {
    threads.emplace_back([&, p] {
      try {
        HostBackendOptions o;
        o.ranks = 1;
        HostBackend backend(o);
        RunOptions run;
        run.processes = groups[p].get();
        results[p] = MeasureFabric([&](const TaskGraph& g) { return backend.Run(g, run); },
                                   groups[p].get(), 0, sweep, "simple", nullptr);
      } catch (const std::exception& e) {
        errors[p] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int p = 0; p < 4; ++p) ASSERT_EQ(errors[p], "") << "process " << p;
  EXPECT_EQ(results[0].measured, (std::vector<std::string>{"intra", "inter"}));
  // 8 B .. 16 KiB: 12 sizes x 2 repetitions x 5 operations x 2 classes (pairs: 8 B is one
  // fp32 per member).
  EXPECT_EQ(results[0].samples.size(), static_cast<std::size_t>(12 * 2 * 5 * 2));
  for (const FabricSample& s : results[0].samples) EXPECT_GT(s.seconds, 0) << s.bytes;
  for (int p = 1; p < 4; ++p) {
    ASSERT_EQ(results[p].samples.size(), results[0].samples.size());
    for (std::size_t i = 0; i < results[0].samples.size(); ++i) {
      EXPECT_EQ(results[p].samples[i].seconds, results[0].samples[i].seconds);
    }
  }
}

}  // namespace
}  // namespace stratasim::validate
