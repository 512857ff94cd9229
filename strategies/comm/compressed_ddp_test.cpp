#include "strategies/comm/compressed_ddp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/calibration.h"
#include "core/compute_model.h"
#include "core/hardware.h"
#include "models/token_distribution.h"
#include "models/workload.h"
#include "strategies/comm/codec_work.h"
#include "strategies/test_scenario.h"

namespace stratasim {
namespace {

constexpr int kVocabulary = 20000;
constexpr int kHidden = 256;

// A tiny GPT (2 layers, hidden 256, sequence 128) with a sparse embedding over a 20,000-token
// vocabulary, on `gpus` GPUs of one NVSwitch server, global batch 2 per GPU; 1 warm-up and 1
// measured iteration.
Scenario SparseGpt(int gpus) {
  Scenario s = testing::TinyGptScenario({gpus, 1, 2 * gpus, 1, 2, 4});
  s.model.vocabulary = kVocabulary;
  s.model.sparse_embedding = true;
  s.training.warmup_iterations = 1;
  s.training.measured_iterations = 1;
  s.training.seed = 11;
  return s;
}

Plan PlanOf(const Scenario& s, const std::string& kind,
            std::map<std::string, std::string> options = {}) {
  return PlanStrategy(s, testing::SpecOf("c", kind, options));
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The collectives of iteration `it` whose member name contains `part`.
std::vector<const Collective*> CollectivesNamed(const Plan& plan, const std::string& part,
                                                int it = 0) {
  std::vector<const Collective*> out;
  for (const Collective& c : plan.graph.collectives()) {
    const Task& t = plan.graph.task(c.members[0]);
    if (t.iteration == it && Contains(t.name.str(), part)) out.push_back(&c);
  }
  return out;
}

const Task* TaskNamed(const Plan& plan, int rank, const std::string& name) {
  for (const Task& t : plan.graph.tasks()) {
    if (t.rank == rank && t.name.str() == name) return &t;
  }
  return nullptr;
}

// The distinct ids of each replica's batch in iteration `it`, as the lowering draws them.
std::vector<long long> DrawnRows(const Scenario& s, int it) {
  const TokenDistribution tokens = TokenDistribution::Of(s.model);
  const int gpus = s.cluster.NumGpus();
  const long long draws = (s.training.global_batch / gpus) * s.model.sequence;
  std::vector<long long> rows;
  for (int q = 0; q < gpus; ++q) {
    rows.push_back(tokens.DistinctIds(draws, BatchSeed(s.training.seed, q, it)));
  }
  return rows;
}

TEST(CompressedDdp, S2ReducerSendsTheSketchAndBitmapWhateverTheWorkers) {
  // 4rc + n/8 bytes with r = 2, c = 1000 and n = 20,000 rows: 8,000 + 2,500.
  for (int gpus : {2, 4, 8}) {
    SCOPED_TRACE(gpus);
    const Plan plan =
        PlanOf(SparseGpt(gpus), "s2reducer", {{"sketch_rows", "2"}, {"sketch_columns", "1000"}});
    const auto sketch = CollectivesNamed(plan, "/embedding/sketch+bitmap");
    ASSERT_EQ(sketch.size(), 1u);
    EXPECT_EQ(sketch[0]->kind, CollectiveKind::kAllReduce);
    EXPECT_DOUBLE_EQ(sketch[0]->bytes, 4.0 * 2 * 1000 + kVocabulary / 8.0);
    EXPECT_EQ(sketch[0]->ranks.size(), static_cast<size_t>(gpus));
  }
  // Unset, c is sized by sketch_ratio: ceil(0.005 x 20,000 x 256) = 25,600.
  const auto sized = CollectivesNamed(PlanOf(SparseGpt(4), "s2reducer"), "sketch+bitmap");
  EXPECT_DOUBLE_EQ(sized[0]->bytes, 4.0 * 25600 + kVocabulary / 8.0);
}

TEST(CompressedDdp, CasqAllGatherGrowsLinearlyWithTheWorkers) {
  // One worker's block for the 20,000 x 256 table at q = 2: codes 4 ceil(n q / 32), tables
  // 4 ceil(0.01 n), centres 4 x 2^q.
  const double n = static_cast<double>(kVocabulary) * kHidden;
  const double block = 4 * std::ceil(n * 2 / 32) + 4 * std::ceil(0.01 * n) + 4 * 4;
  std::vector<double> bytes;
  for (int gpus : {2, 4, 8}) {
    const auto gather =
        CollectivesNamed(PlanOf(SparseGpt(gpus), "casq"), "/embedding/codes+tables");
    ASSERT_EQ(gather.size(), 1u);
    EXPECT_EQ(gather[0]->kind, CollectiveKind::kAllGather);
    bytes.push_back(gather[0]->bytes);
  }
  // The slope is exactly one block per worker: codes do not add, so nothing merges.
  EXPECT_DOUBLE_EQ((bytes[1] - bytes[0]) / 2, block);
  EXPECT_DOUBLE_EQ((bytes[2] - bytes[1]) / 4, block);
  EXPECT_DOUBLE_EQ(bytes[0], 2 * block);
}

TEST(CompressedDdp, CooPadsToTheMostRowsOfAnyReplica) {
  const Scenario s = SparseGpt(4);
  for (int it : {0, 1}) {
    const std::vector<long long> rows = DrawnRows(s, it);
    const long long most = *std::max_element(rows.begin(), rows.end());
    // The draws differ per replica, so the padding is real.
    EXPECT_NE(most, *std::min_element(rows.begin(), rows.end()));
    const auto gather = CollectivesNamed(PlanOf(s, "coo"), "/embedding/rows+indices", it);
    ASSERT_EQ(gather.size(), 1u);
    // BF16 gradients: 2 bytes a value, 4 an index.
    EXPECT_DOUBLE_EQ(gather[0]->bytes, 4.0 * most * (4 + kHidden * 2));
  }
}

TEST(CompressedDdp, OmniReduceSendsTheBitmapThenTheUnionRows) {
  const Scenario s = SparseGpt(4);
  const Plan plan = PlanOf(s, "omnireduce");
  const auto bitmap = CollectivesNamed(plan, "/embedding/bitmap");
  const auto rows = CollectivesNamed(plan, "/embedding/union rows");
  ASSERT_EQ(bitmap.size(), 1u);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(bitmap[0]->bytes, kVocabulary / 8.0);
  // The union: the expected distinct ids over all replicas' draws, at least the largest
  // replica's count.
  const long long draws = 4LL * 2 * 128;
  const double expected = std::llround(TokenDistribution::Of(s.model).ExpectedDistinctIds(draws));
  const std::vector<long long> drawn = DrawnRows(s, 0);
  const double most = static_cast<double>(*std::max_element(drawn.begin(), drawn.end()));
  EXPECT_DOUBLE_EQ(rows[0]->bytes, std::max(expected, most) * kHidden * 2);
  // In order: the union's members wait for the bitmap's on every rank.
  for (int r = 0; r < 4; ++r) {
    const Task& member = plan.graph.task(rows[0]->members[r]);
    EXPECT_NE(std::find(member.deps.begin(), member.deps.end(), bitmap[0]->members[r]),
              member.deps.end());
  }
}

TEST(CompressedDdp, EncodePayloadsDecodeThenAdam) {
  const Plan plan = PlanOf(SparseGpt(4), "s2reducer");
  for (int r = 0; r < 4; ++r) {
    const Task* encode = TaskNamed(plan, r, "it0/encode/embedding");
    const Task* decode = TaskNamed(plan, r, "it0/decode/embedding");
    const Task* adam = TaskNamed(plan, r, "it0/adam");
    ASSERT_TRUE(encode && decode && adam);
    EXPECT_EQ(encode->op, OpKind::kElementwise);
    const Collective* sketch = CollectivesNamed(plan, "sketch+bitmap")[0];
    const Task& member = plan.graph.task(sketch->members[r]);
    EXPECT_EQ(member.deps, std::vector<TaskId>{encode->id});
    EXPECT_EQ(decode->deps, std::vector<TaskId>{member.id});
    EXPECT_NE(std::find(adam->deps.begin(), adam->deps.end(), decode->id), adam->deps.end());
    // The rest of the gradients stay in DDP's dense buckets, all-reduced before Adam.
    EXPECT_FALSE(CollectivesNamed(plan, "/allreduce/bucket").empty());
  }
}

TEST(CompressedDdp, ScopeAllCompressesEveryBucket) {
  const Plan plan = PlanOf(SparseGpt(4), "uniform-int8", {{"int8_block", "128"}});
  EXPECT_TRUE(CollectivesNamed(plan, "/allreduce/bucket").empty());
  const auto buckets = CollectivesNamed(plan, "/all_gather/bucket");
  ASSERT_FALSE(buckets.empty());
  for (const Collective* c : buckets) EXPECT_EQ(c->kind, CollectiveKind::kAllGather);
  // The table and the buckets hold every parameter once: each worker's blocks carry one INT8
  // code per parameter plus one FP32 scale per 128 of each gradient (rounded up per gradient).
  const Scenario s = SparseGpt(4);
  const double params = BuildWorkload(s.model, 1, DType::kBF16, s.training.seed).params;
  double per_worker = 0;
  int gradients = 0;
  for (const Collective& c : plan.graph.collectives()) {
    if (plan.graph.task(c.members[0]).iteration != 0) continue;
    per_worker += c.bytes / 4;
    ++gradients;
  }
  EXPECT_GE(per_worker, params * (1 + 4.0 / 128));
  EXPECT_LE(per_worker, params * (1 + 4.0 / 128) + 4.0 * gradients);
}

TEST(CompressedDdp, RowSparseKindsNeedASparseEmbedding) {
  Scenario dense = SparseGpt(4);
  dense.model.sparse_embedding = false;
  EXPECT_EQ(testing::PlanErrorOf(dense, testing::SpecOf("c", "s2reducer", {})),
            "s.yaml:8:5: strategies[0]: scope embedding (the default of kind "
            "s2reducer) compresses the sparse token table: needs a model with sparse_embedding: "
            "true (a gpt model key, docs/models.md, \"Sparse embedding\"), or scope: all");
  EXPECT_EQ(testing::PlanErrorOf(dense, testing::SpecOf("c", "casq", {{"scope", "embedding"}})),
            "s.yaml:9:5: strategies[0].options.scope = \"embedding\": scope embedding compresses "
            "the sparse token table: needs a model with sparse_embedding: true (a gpt model key, "
            "docs/models.md, \"Sparse embedding\"), or scope: all");
  EXPECT_EQ(testing::PlanErrorOf(dense, testing::SpecOf("c", "coo", {{"scope", "all"}})),
            "no error");
  EXPECT_EQ(testing::PlanErrorOf(dense, testing::SpecOf("c", "casq", {{"casq_bits", "9"}})),
            "s.yaml:9:5: strategies[0].options.casq_bits = \"9\": must be an integer in [1, 8]");
}

TEST(CompressedDdp, CalibratedEncodeAndDecodeTakeTheMeasuredTime) {
  Scenario s = SparseGpt(4);
  s.cluster.gpu_kinds.push_back(*FindBuiltinGpu("A100-SXM4-80GB"));
  s.simulation.calibration = LoadCalibrationText(R"(format: stratasim-calibration
version: 1
gpus:
  - gpu: A100-SXM4-80GB
    kernel_launch: "3us"
    compression:
      - {method: s2reducer, encode: "2.1ns", decode: "0.9ns"}
)",
                                                 "c.yaml");
  const Plan plan = PlanOf(s, "s2reducer");
  const Plan plain = PlanOf(SparseGpt(4), "s2reducer");
  const GpuSpec& gpu = s.cluster.GpuOfRank(0);
  const double n = static_cast<double>(kVocabulary) * kHidden;
  // The executor's roofline turns the task into exactly elements x the measured time.
  for (auto [name, per_element] :
       {std::pair<const char*, double>{"it0/encode/embedding", 2.1e-9},
        std::pair<const char*, double>{"it0/decode/embedding", 0.9e-9}}) {
    const Task* t = TaskNamed(plan, 1, name);
    ASSERT_NE(t, nullptr);
    EXPECT_NEAR(ComputeTaskSeconds(*t, gpu, s.simulation), per_element * n, 1e-12 * per_element * n)
        << name;
    // Without the calibration: the mechanism's bytes, a different time.
    const Task* model = TaskNamed(plain, 1, name);
    EXPECT_NE(model->bytes, t->bytes);
  }
  // Another method on the same GPU keeps the cost model.
  const Plan coo = PlanOf(s, "coo");
  const Plan coo_plain = PlanOf(SparseGpt(4), "coo");
  EXPECT_DOUBLE_EQ(TaskNamed(coo, 1, "it0/encode/embedding")->bytes,
                   TaskNamed(coo_plain, 1, "it0/encode/embedding")->bytes);
}

TEST(CompressedDdp, EncodeBytesFollowTheMechanism) {
  const Scenario s = SparseGpt(4);
  const Plan plan = PlanOf(s, "s2reducer", {{"sketch_columns", "1000"}});
  const std::vector<long long> rows = DrawnRows(s, 0);
  for (int r = 0; r < 4; ++r) {
    // Zero the 1 x 1000 table, read the z x 256 BF16 values and read-modify-write one FP32
    // counter each, write the 20,000-bit bitmap.
    const double z = static_cast<double>(rows[r]);
    EXPECT_DOUBLE_EQ(TaskNamed(plan, r, "it0/encode/embedding")->bytes,
                     4.0 * 1000 + z * kHidden * (2 + 8) + kVocabulary / 8.0);
  }
}

TEST(CompressedDdp, FoldsOnlyWhenTheReplicasAreIdentical) {
  Scenario s = testing::TinyGptScenario({4, 2, 16, 1, 2, 4});
  s.model.vocabulary = kVocabulary;
  s.model.sparse_embedding = true;
  // The row-sparse methods' work follows each replica's own batch.
  EXPECT_EQ(PlanOf(s, "coo").fold,
            "full: the compressed embedding's non-zero rows differ per replica");
  // A quantizer does the same work on every replica.
  EXPECT_EQ(PlanOf(s, "casq").fold.rfind("folded", 0), 0u) << PlanOf(s, "casq").fold;
}

}  // namespace
}  // namespace stratasim
