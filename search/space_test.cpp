#include "search/space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/hardware.h"
#include "search/search_spec.h"
#include "strategies/test_scenario.h"

namespace stratasim::search {
namespace {

// Two servers of 8 A100s (16 GPUs), a GPT of 8 layers and 4 heads, global batch 16.
Scenario Sixteen() {
  testing::TinyGpt t;
  t.servers = 2;
  t.layers = 8;
  t.global_batch = 16;
  Scenario s = testing::TinyGptScenario(t);
  s.cluster.gpu_kinds = {*FindBuiltinGpu("A100-SXM4-80GB")};  // as the loader resolves them
  return s;
}

SearchSpec Spec() {
  SearchSpec spec;
  spec.tensor = {1, 2, 4, 3};
  spec.pipeline = {1, 2, 4};
  spec.micro_batch = {1, 2};
  spec.schedule = {"gpipe", "1f1b", "interleaved"};
  spec.virtual_stages = {2, 3};
  spec.recompute = {Recompute::kNone, Recompute::kFull};
  spec.sequence_parallel = {false, true};
  spec.zero = {Zero::kNone, Zero::kDistributedOptimizer, Zero::kZero1, Zero::kZero2, Zero::kZero3};
  spec.rank_order = {"tpd", "dpt"};
  return spec;
}

bool Same(const Candidate& a, const Candidate& b) {
  return a.data == b.data && a.tensor == b.tensor && a.pipeline == b.pipeline &&
         a.micro_batch == b.micro_batch && a.micro_batches == b.micro_batches &&
         a.schedule == b.schedule && a.virtual_stages == b.virtual_stages &&
         a.recompute == b.recompute && a.sequence_parallel == b.sequence_parallel &&
         a.zero == b.zero && a.rank_order == b.rank_order;
}

bool Contains(const std::vector<Candidate>& all, const Candidate& c) {
  return std::any_of(all.begin(), all.end(), [&](const Candidate& x) { return Same(x, c); });
}

Candidate Make(int t, int p, int d, int mb, int m, const std::string& schedule = "", int v = 1) {
  Candidate c;
  c.tensor = t;
  c.pipeline = p;
  c.data = d;
  c.micro_batch = mb;
  c.micro_batches = m;
  c.schedule = schedule;
  c.virtual_stages = v;
  return c;
}

TEST(SpaceTest, EnumerationCountIsTheSumOfTheStructuralProducts) {
  const Scenario s = Sixteen();
  const SearchSpec spec = Spec();
  const std::vector<Candidate> all = Enumerate(s, spec);
  // Per (t, p): micro-batches (2) x recomputation (2) x schedules (p > 1: gpipe, 1f1b and
  // interleaved with 2 or 3 chunks = 4; else 1) x sequence parallelism (t > 1: 2; else 1) x
  // sharding (t = p = 1: none, zero1, zero2, zero3 = 4; else none, distributed optimizer = 2)
  // x rank orders (2 when at least two of t, p, d exceed 1; else 1).
  long expected = 0;
  for (int t : spec.tensor) {
    for (int p : spec.pipeline) {
      const int d = 16 % (t * p) == 0 ? 16 / (t * p) : 0;
      const int schedules = p > 1 ? 4 : 1;
      const int sp = t > 1 ? 2 : 1;
      const int zero = t * p == 1 ? 4 : 2;
      const int orders = (t > 1) + (p > 1) + (d > 1) >= 2 ? 2 : 1;
      expected += 2 * 2 * schedules * sp * zero * orders;
    }
  }
  // By hand: t=1: p=1 16, p=2 64, p=4 64; t=2: p=1 32, p=2 128, p=4 128 (t=4 alike, d=1 at
  // p=4 still leaves two degrees above 1); t=3 (d = 0): p=1 16 (no rank orders: only t > 1),
  // p=2 128, p=4 128.
  EXPECT_EQ(expected, 16 + 64 + 64 + 32 + 128 + 128 + 32 + 128 + 128 + 16 + 128 + 128);
  EXPECT_EQ(static_cast<long>(all.size()), expected);

  // Tensor outermost, rank order innermost.
  EXPECT_EQ(all.front().tensor, 1);
  EXPECT_EQ(all.back().tensor, 3);
  EXPECT_EQ(all[0].zero, Zero::kNone);
  EXPECT_EQ(all[1].zero, Zero::kZero1);

  Candidate c = Make(2, 2, 4, 2, 2, "interleaved", 3);
  c.recompute = Recompute::kFull;
  c.sequence_parallel = true;
  c.zero = Zero::kDistributedOptimizer;
  c.rank_order = "dpt";
  EXPECT_TRUE(Contains(all, c));
  Candidate z3 = Make(1, 1, 16, 1, 1);
  z3.zero = Zero::kZero3;
  EXPECT_TRUE(Contains(all, z3));
  // t = 3 does not divide 16: data and micro_batches 0, left to Prune.
  EXPECT_TRUE(Contains(all, Make(3, 1, 0, 1, 0)));
  // Options that do not exist for a combination are not varied.
  Candidate sp1 = Make(1, 2, 8, 1, 2, "1f1b");
  sp1.sequence_parallel = true;
  EXPECT_FALSE(Contains(all, sp1));  // sequence parallelism with t = 1
  EXPECT_TRUE(Contains(all, Make(1, 2, 8, 1, 2, "1f1b")));
  Candidate zero1 = Make(2, 1, 8, 1, 2);
  zero1.zero = Zero::kZero1;
  EXPECT_FALSE(Contains(all, zero1));  // zero1 is a data-parallel kind (t = p = 1)
  Candidate do1 = Make(1, 1, 16, 1, 1);
  do1.zero = Zero::kDistributedOptimizer;
  EXPECT_FALSE(Contains(all, do1));                           // t = p = 1 shards with zero1 instead
  EXPECT_FALSE(Contains(all, Make(1, 1, 16, 1, 1, "1f1b")));  // a schedule without stages
  EXPECT_FALSE(Contains(all, Make(1, 2, 8, 1, 2, "1f1b", 2)));  // chunks without interleaving
  Candidate order = Make(1, 1, 16, 1, 1);
  order.rank_order = "dpt";
  EXPECT_FALSE(Contains(all, order));  // only d > 1: one order
}

TEST(SpaceTest, AZeroListWithoutAnyValueOfACombinationLeavesItOut) {
  SearchSpec spec = Spec();
  spec.zero = {Zero::kZero3};
  const std::vector<Candidate> all = Enumerate(Sixteen(), spec);
  for (const Candidate& c : all) {
    EXPECT_EQ(c.tensor * c.pipeline, 1);
    EXPECT_EQ(c.zero, Zero::kZero3);
  }
  EXPECT_EQ(all.size(), 4u);  // 2 micro-batch sizes x 2 recomputations
}

// A candidate that breaks no rule: 1F1B over 2 stages of 2-way tensor groups, 4 replicas.
Candidate Valid() {
  Candidate c = Make(2, 2, 4, 1, 4, "1f1b");
  return c;
}

TEST(SpaceTest, EachPruneReasonHasACandidateThatBreaksOnlyIt) {
  const Scenario s = Sixteen();
  SearchSpec spec = Spec();
  spec.rank_order = {"tpd", "tdp", "dtp"};
  EXPECT_EQ(Prune(s, spec, Valid()), std::nullopt);

  EXPECT_EQ(Prune(s, spec, Make(3, 1, 0, 1, 0)), PruneReason::kGpus);
  // 4 x 8 samples per micro-batch round do not divide the batch of 16.
  EXPECT_EQ(Prune(s, spec, Make(1, 2, 8, 4, 0, "1f1b")), PruneReason::kBatch);
  // t = 8 divides the GPUs but not the 4 heads.
  EXPECT_EQ(Prune(s, spec, Make(8, 1, 2, 1, 8)), PruneReason::kHeads);
  // 8 stages x 2 chunks for 8 layers.
  EXPECT_EQ(Prune(s, spec, Make(1, 8, 2, 1, 8, "interleaved", 2)), PruneReason::kLayers);
  EXPECT_EQ(Prune(s, spec, Make(1, 8, 2, 1, 8, "1f1b")), std::nullopt);
  // m = 16 / (2 x 4) = 2 micro-batches, not a multiple of the 4 stages.
  EXPECT_EQ(Prune(s, spec, Make(1, 4, 4, 2, 2, "interleaved", 2)), PruneReason::kInterleave);
  EXPECT_EQ(Prune(s, spec, Make(1, 4, 4, 1, 4, "interleaved", 2)), std::nullopt);
  // Rank order dtp puts a tensor group's 4 GPUs 4 ranks apart: ranks 0, 4, 8, 12 on both
  // servers. tpd keeps them on one.
  Candidate span = Make(4, 1, 4, 1, 4);
  span.rank_order = "dtp";
  EXPECT_EQ(Prune(s, spec, span), PruneReason::kTensorSpan);
  span.rank_order = "tpd";
  EXPECT_EQ(Prune(s, spec, span), std::nullopt);
  // The distributed optimizer over one replica is the plain plan.
  Candidate one = Make(4, 4, 1, 1, 16, "1f1b");
  one.zero = Zero::kDistributedOptimizer;
  EXPECT_EQ(Prune(s, spec, one), PruneReason::kDuplicate);
  SearchSpec only_do = spec;
  only_do.zero = {Zero::kDistributedOptimizer};
  EXPECT_EQ(Prune(s, only_do, one), std::nullopt);  // no plain twin in that space
  // With p = 1, tdp numbers the ranks as tpd does (listed first); dtp does not.
  Candidate order = Make(2, 1, 8, 1, 2);
  order.rank_order = "tdp";
  EXPECT_EQ(Prune(s, spec, order), PruneReason::kDuplicate);
  order.rank_order = "dtp";
  EXPECT_EQ(Prune(s, spec, order), PruneReason::kTensorSpan);  // 2 GPUs 8 ranks apart

  // Memory: the threshold sits at the estimate.
  const double capacity = 80e9;  // A100-SXM4-80GB (core/hardware_catalog.cpp)
  const double peak = EstimateMemory(s, Valid()).peak_bytes;
  spec.memory_fraction = peak / capacity * 0.999;
  EXPECT_EQ(Prune(s, spec, Valid()), PruneReason::kMemory);
  spec.memory_fraction = peak / capacity * 1.001;
  EXPECT_EQ(Prune(s, spec, Valid()), std::nullopt);
}

TEST(SpaceTest, LabelsAreTheDocumentedOnes) {
  EXPECT_EQ(Label(PruneReason::kGpus), "indivisible GPUs");
  EXPECT_EQ(Label(PruneReason::kBatch), "indivisible batch");
  EXPECT_EQ(Label(PruneReason::kHeads), "indivisible heads");
  EXPECT_EQ(Label(PruneReason::kLayers), "too few layers");
  EXPECT_EQ(Label(PruneReason::kInterleave), "interleave");
  EXPECT_EQ(Label(PruneReason::kTensorSpan), "tensor group spans servers");
  EXPECT_EQ(Label(PruneReason::kDuplicate), "duplicate");
  EXPECT_EQ(Label(PruneReason::kMemory), "out of memory");
}

// The estimate's parts move as the memory model says: the distributed optimizer shards the
// optimizer states d ways; 1F1B's first stage holds p micro-batches, GPipe's all m; full
// recomputation keeps less than none.
TEST(SpaceTest, MemoryEstimateFollowsTheModel) {
  const Scenario s = Sixteen();
  Candidate plain = Make(2, 2, 4, 1, 4, "1f1b");
  Candidate sharded = plain;
  sharded.zero = Zero::kDistributedOptimizer;
  const MemoryEstimate a = EstimateMemory(s, plain), b = EstimateMemory(s, sharded);
  EXPECT_LT(b.states_bytes, a.states_bytes);
  EXPECT_DOUBLE_EQ(b.activations_bytes, a.activations_bytes);
  Candidate gpipe = Make(1, 2, 8, 1, 2, "gpipe"), f1b = Make(1, 2, 8, 1, 2, "1f1b");
  gpipe.micro_batches = f1b.micro_batches = 2;
  // With m = p = 2 both hold 2 micro-batches on stage 0.
  EXPECT_DOUBLE_EQ(EstimateMemory(s, gpipe).activations_bytes,
                   EstimateMemory(s, f1b).activations_bytes);
  Candidate gpipe8 = Make(1, 2, 8, 1, 2, "gpipe"), f1b8 = Make(1, 2, 8, 1, 2, "1f1b");
  gpipe8.micro_batches = f1b8.micro_batches = 8;  // as if the batch were 64
  EXPECT_GT(EstimateMemory(s, gpipe8).activations_bytes,
            3 * EstimateMemory(s, f1b8).activations_bytes);
  Candidate full = plain;
  full.recompute = Recompute::kFull;
  EXPECT_LT(EstimateMemory(s, full).activations_bytes, a.activations_bytes);
  // More stage chunks than layers: Prune's layer rule says so first; a direct call is refused.
  try {
    EstimateMemory(s, Make(1, 8, 2, 1, 8, "interleaved", 4));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "memory estimate of d2-t1-p8-mb1-int4: 32 stage chunks for a model of 10 layers");
  }
  // Cached workloads are the scenario's: a wider model of the same shape needs more.
  Scenario wider = s;
  wider.model.hidden = 512;
  EXPECT_GT(EstimateMemory(wider, plain).peak_bytes, 2 * a.peak_bytes);
  Candidate ddp = Make(1, 1, 16, 1, 1), z3 = ddp;
  z3.zero = Zero::kZero3;
  EXPECT_LT(EstimateMemory(s, z3).states_bytes, EstimateMemory(s, ddp).states_bytes / 8);
}

// GPT-3 175B on 1,536 A100s (192 DGX servers), global batch 1,536: Megatron-LM's 175B run
// (Narayanan et al. 2021, SC, Table 1: t = 8, p = 12, d = 16). The time per candidate is
// printed (console only), as the memory estimate runs on every candidate of a search.
TEST(SpaceTest, Gpt175bOn1536GpusPrunesCheaply) {
  const std::string text =
      "name: gpt175b\n"
      "cluster:\n"
      "  servers:\n"
      "    - {name: dgx, count: 192, gpu: A100-SXM4-80GB, gpus_per_server: 8,\n"
      "       nvswitch: {bandwidth: 300GB/s, latency: 1us},\n"
      "       nics: {count: 8, bandwidth: 200Gb/s, latency: 1us}}\n"
      "  network: {kind: single_switch, latency: 1us}\n"
      "model: {preset: gpt3-175b}\n"
      "training: {global_batch: 1536}\n"
      "search:\n"
      "  tensor: [1, 2, 4, 8]\n"
      "  pipeline: [1, 2, 4, 8, 12, 16, 32, 64]\n"
      "  micro_batch: [1, 2, 4]\n"
      "  schedule: [gpipe, 1f1b, interleaved]\n"
      "  virtual_stages: [2, 4]\n";
  const SearchScenario ss = LoadSearchScenarioText(text, "gpt175b.yaml");
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Candidate> all = Enumerate(ss.scenario, ss.search);
  std::map<std::string, int> counts;
  int kept = 0;
  for (const Candidate& c : all) {
    const std::optional<PruneReason> r = Prune(ss.scenario, ss.search, c);
    if (r) {
      ++counts[std::string(Label(*r))];
    } else {
      ++kept;
    }
  }
  const double prune_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Again, with the workloads, partitions and schedules cached.
  const auto warm = std::chrono::steady_clock::now();
  for (const Candidate& c : all) Prune(ss.scenario, ss.search, c);
  const double warm_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - warm).count();
  // The estimate alone, on every candidate that reaches the memory rule.
  int estimated = 0;
  const auto again = std::chrono::steady_clock::now();
  for (const Candidate& c : all) {
    if (c.data <= 0 || c.micro_batches <= 0) continue;
    if (c.schedule == "interleaved" && c.micro_batches % c.pipeline != 0) continue;
    if (96 < c.pipeline * c.virtual_stages) continue;
    EstimateMemory(ss.scenario, c);
    ++estimated;
  }
  const double estimate_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count();
  std::printf(
      "%zu candidates, %d kept; Enumerate + Prune %.1f us per candidate (%.1f us "
      "cached); EstimateMemory %.1f us per estimate (%d, cached)\n",
      all.size(), kept, 1e6 * prune_s / all.size(), 1e6 * warm_s / all.size(),
      1e6 * estimate_s / estimated, estimated);
  for (const auto& [label, n] : counts) std::printf("  %s: %d\n", label.c_str(), n);
  EXPECT_GT(kept, 0);
  EXPECT_GT(counts["out of memory"], 0);

  // Megatron-LM's plan fits with full recomputation; plain data parallelism (2.8 TB of model
  // states per GPU) does not.
  Candidate megatron = Make(8, 12, 16, 1, 96, "1f1b");
  megatron.recompute = Recompute::kFull;
  megatron.sequence_parallel = true;
  EXPECT_EQ(Prune(ss.scenario, ss.search, megatron), std::nullopt);
  const MemoryEstimate m = EstimateMemory(ss.scenario, megatron);
  std::printf("t8 p12 d16 1f1b full sp: %.1f GB peak on stage %d (states %.1f GB)\n",
              m.peak_bytes / 1e9, m.stage, m.states_bytes / 1e9);
  EXPECT_EQ(Prune(ss.scenario, ss.search, Make(1, 1, 1536, 1, 1, "")), PruneReason::kMemory);
}

}  // namespace
}  // namespace stratasim::search
