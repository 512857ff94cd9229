// A scenario: the cluster, the model, the training setup and the strategies to compare.
// Plain structs; core/scenario_loader.cpp fills them from YAML.
#ifndef STRATASIM_CORE_SCENARIO_H_
#define STRATASIM_CORE_SCENARIO_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/calibration.h"
#include "core/cluster.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/task_graph.h"

namespace stratasim {

// Activation recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation in
// Large Transformer Models"): kFull keeps only each layer's input and re-runs the whole layer's
// forward before its backward; kSelective drops and re-runs only the attention core (scores,
// softmax, dropout, product with V), whose activations grow with s^2 but whose FLOPs are few
// (moot with flash attention, which keeps no s^2 activation: models/recompute.h).
enum class Recompute { kNone, kSelective, kFull };
std::string_view ToString(Recompute r);

// How a transformer runs its attention core (docs/models.md, "Attention: flash or unfused"):
// kFlash as one fused kernel that never writes the s x s scores to memory (FlashAttention; Dao
// et al. 2022, Dao 2023), kUnfused as separate kernels for the scores, softmax, dropout and the
// product with V, whose s x s outputs are written and kept for the backward.
enum class Attention { kFlash, kUnfused };
std::string_view ToString(Attention a);

// A workload model. `kind` selects the family in models/ (models/workload.h lists them); the
// dimensions are filled from `preset` when one is named, else given one by one. A field that a
// kind does not use stays 0 (the loader rejects it for that kind).
struct ModelSpec {
  std::string kind = "gpt";  // gpt | bert | llama | moe | resnet50 | vgg16 | graphsage
  std::string preset;        // e.g. "gpt2-medium"; empty for a custom model

  // Transformers (gpt, bert, llama, moe).
  int layers = 0;  // also graphsage: the number of hops (= fanouts.size())
  int hidden = 0;  // also graphsage: the hidden feature width
  int heads = 0;
  int sequence = 0;
  int vocabulary = 0;
  int kv_heads = 0;    // llama: grouped-query attention's key/value heads; 0 = heads
  int ffn_hidden = 0;  // MLP width; 0 = the kind's rule (4 * hidden; llama: SwiGLU's 8h/3 rule)
  Attention attention = Attention::kFlash;
  // Whether query i attends to keys 0..i only; unset: the kind's (decoders gpt, llama and moe
  // are causal, bert is not). A fused kernel skips the masked half of the scores.
  std::optional<bool> causal;
  // gpt only (docs/models.md, "Sparse embedding"): the token embedding is its own table, not
  // tied to the output head, so that its gradient is sparse: per iteration only the rows of the
  // distinct token ids of the batch are non-zero. The ids are drawn from `token_distribution`
  // ("zipf" over the vocabulary ranks with `zipf_exponent`, or "uniform") with the training seed.
  bool sparse_embedding = false;
  std::string token_distribution = "zipf";
  double zipf_exponent = 1.0;

  // Mixture of experts (moe): every layer's MLP is `experts` expert MLPs behind a top-k gate.
  int experts = 0;
  int top_k = 0;
  double capacity_factor = 0;
  // The dense design around the experts: "gpt" (GELU experts, biases, LayerNorm, learned
  // positions, tied embeddings, dropout) or "llama" (SwiGLU experts, RMSNorm, rotary, no
  // biases, untied output, no dropout, grouped-query attention over kv_heads), as Mixtral.
  std::string architecture;

  // CNNs (resnet50, vgg16) and classifiers.
  int image_size = 0;  // square input images, pixels per side
  int classes = 0;     // also graphsage: output classes

  // GraphSAGE: neighbour sampling over a synthetic uniform random graph.
  std::vector<int> fanouts;  // neighbours sampled per vertex, hop 1 first
  int feature_dim = 0;       // input feature width (FP32 on the host)
  double graph_vertices = 0;
  double graph_degree = 0;  // mean degree: a hop samples min(fanout, degree) neighbours
  // Which graph (docs/gnn.md): "uniform" (every vertex has graph_degree neighbours drawn anew
  // at each draw), "power-law" (Chung-Lu weights of exponent graph_exponent, generated from the
  // seed, never stored) or "edge-list" (graph_file, "src dst" per line, held as CSR; it gives
  // the vertex count and mean degree).
  std::string graph = "uniform";
  double graph_exponent = 2.5;  // power-law: P(degree = k) ~ k^-exponent, > 2
  std::string graph_file;       // edge-list: the path, resolved against the scenario's folder
  SourceLocation graph_file_where;

  Recompute recompute = Recompute::kNone;
  int recompute_layers = 0;  // recompute only the first N transformer layers; 0 = all

  SourceLocation where;  // of the `model` key, for errors raised when the model is built
};

struct TrainingSpec {
  int global_batch = 0;  // samples per iteration, over all replicas
  int micro_batch = 1;   // samples per forward/backward pass on one GPU
  DType precision = DType::kBF16;
  SourceLocation precision_where;  // of training.precision (default: the `training` key)
  int warmup_iterations = 1;       // simulated but not measured
  int measured_iterations = 2;
  std::uint64_t seed = 0;
};

// How much detail the simulator spends on collectives (chosen per scenario).
enum class Fidelity {
  kStep,      // every algorithm step is a flow: most faithful, most events
  kStream,    // each pipelined edge is one flow carrying its whole volume, plus latency terms
  kAnalytic,  // alpha-beta time of each collective, no contention: for quick sweeps
};
std::string_view ToString(Fidelity f);

// How collectives are run. Algorithm names per kind are listed by CollectiveAlgorithms()
// (core/collective_names.h); "auto" lets the simulator's tuner choose by size, group and
// topology, as NCCL does.
struct CollectiveSettings {
  std::map<CollectiveKind, std::string> algorithm;  // a kind absent here is "auto"
  std::string protocol = "auto";                    // auto | ll | ll128 | simple
  int channels = 0;                                 // rings/trees in parallel; 0 = auto
};

// Cost-model parameters of the simulator. Defaults are documented starting points, meant to be
// replaced by a calibration file written by `stratasim calibrate`.
struct SimulationSpec {
  // Achieved fraction of a GPU's dense peak FLOP/s on compute-bound kernels. 0.7 is typical of
  // large cuBLAS GEMMs on A100/H100 (NVIDIA Deep Learning Performance Guide, "Matrix
  // multiplication background"); small or oddly shaped GEMMs achieve less.
  double compute_efficiency = 0.7;
  // Achieved fraction of peak memory bandwidth on memory-bound kernels (STREAM-like copies on
  // HBM reach 80-90% of the datasheet figure).
  double memory_efficiency = 0.8;
  // Fixed cost added to every compute task: CUDA kernel launch latency is a few microseconds
  // (CUDA C++ Best Practices Guide). Set 0 for closed-form tests.
  double kernel_launch_s = 4e-6;
  // stream: as faithful as step for large uncontended messages and far cheaper for big groups
  // (docs/collectives.md); step for studies of small messages and pipeline fill.
  Fidelity fidelity = Fidelity::kStream;
  CollectiveSettings collectives;
  // Optimisations that do not change the model (docs/scale.md); each is exact or refuses, and
  // tests hold each against the plain run. `fold`: simulate the compute of one data-parallel
  // replica when the replicas are provably identical (strategies say when; others run in
  // full). `fuse`: run a chain of compute kernels that nothing else observes as one SimGrid
  // activity, the parts' times following from their durations.
  bool fold = true;
  bool fuse = true;
  // Largest task graph a strategy may build (docs/scale.md); 0 ("auto"): what the memory
  // available when the run starts holds, at kBytesPerTaskEstimate each. A plan that passes it
  // is refused with advice instead of running the machine out of memory.
  long long max_tasks = 0;
  // Measured efficiencies per GPU kind (core/calibration.h); where it lists a GPU kind, its
  // figures replace the three above and the shape model for that kind.
  std::optional<Calibration> calibration;
};

// One option value as written in the file, with where it was written.
struct OptionValue {
  std::string text;
  SourceLocation where;
};

// The keys of `model:` and `training:` a strategy may give for itself: how the model is trained,
// not what it is or how long (docs/scenario-format.md).
struct TrainingChoices {
  std::optional<Attention> attention;
  std::optional<Recompute> recompute;
  std::optional<int> recompute_layers;
  std::optional<int> micro_batch;
  std::optional<DType> precision;
  SourceLocation precision_where;

  bool empty() const {
    return !attention && !recompute && !recompute_layers && !micro_batch && !precision;
  }
};

struct StrategySpec {
  std::string name;  // unique within the scenario; names output files
  std::string kind;  // e.g. "ddp"
  SourceLocation where;
  std::string key_path;  // "strategies[2]" for error messages
  std::map<std::string, OptionValue> options;
  // The strategy's own choices of how the model is trained (its `model:` / `training:` maps),
  // applied over the scenario's by ScenarioFor; unset: the scenario's.
  TrainingChoices own;
  // `stragglers: off`: this strategy runs without the cluster's stragglers (ScenarioFor), so
  // that one scenario compares a strategy with and without them.
  bool stragglers_off = false;
};

// One job of a shared-cluster scenario (docs/multi-job.md): its own model, training and
// strategy, planned on a cluster of `gpus` GPUs of the scenario's server design, then placed on
// the scenario's cluster beside the other jobs.
struct JobSpec {
  std::string name;  // unique among the jobs; also its strategy's name
  int gpus = 0;
  SourceLocation gpus_where;
  ModelSpec model;
  TrainingSpec training;
  StrategySpec strategy;
  double arrival_s = 0;  // when its GPUs start work (TaskGraph::SetRankStart)
  SourceLocation where;
  std::string key_path;  // "jobs[1]", for error messages
};

// One placement policy to compare (core/placement.h); each is one run of all the jobs.
struct PlacementChoice {
  std::string policy;
  SourceLocation where;
  std::string key_path;  // "placement[0]"
};

struct Scenario {
  std::string name;
  std::string file;  // where it was loaded from
  ClusterSpec cluster;
  ModelSpec model;
  TrainingSpec training;
  SimulationSpec simulation;
  std::vector<StrategySpec> strategies;
  // A shared-cluster scenario lists `jobs` and `placement` instead of `strategies` (and has no
  // top-level model or training: `model` and `training` then hold the first job's).
  std::vector<JobSpec> jobs;
  std::vector<PlacementChoice> placement;
};

// The scenario `spec` runs in: `s` with the strategy's own model and training choices.
Scenario ScenarioFor(const Scenario& s, const StrategySpec& spec);
// What the strategy trains differently from the scenario, one "key = value (the scenario's:
// value)" per changed field, for its notes.
std::vector<std::string> DescribeOverrides(const Scenario& s, const StrategySpec& spec);

// Loads and checks a scenario file. Throws ConfigError (file, line, column, key, value, rule)
// on any bad input: unknown keys, wrong types, missing fields, impossible values.
Scenario LoadScenarioFile(const std::string& path);
// Same, from text; `file_label` is what error messages call the source.
Scenario LoadScenarioText(const std::string& text, const std::string& file_label);

}  // namespace stratasim

#endif  // STRATASIM_CORE_SCENARIO_H_
