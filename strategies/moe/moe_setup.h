// What every MoE strategy starts from: the scenario's MoE model cut into the parts expert
// parallelism treats differently, the gate's top-k, and the routing of every iteration.
//
// Options every MoE strategy reads: MoeRoutingOptions() (moe_setup.cpp) declares them
// (docs/moe.md; `stratasim strategies deepspeed-moe` lists them with the kind's own).
// The strategies of one scenario must give the same routing options to be compared on the
// same routing (the report's speed-up pairs a strategy with the baseline of its top_k).
#ifndef STRATASIM_STRATEGIES_MOE_MOE_SETUP_H_
#define STRATASIM_STRATEGIES_MOE_MOE_SETUP_H_

#include <string>
#include <vector>

#include "core/scenario.h"
#include "core/strategy_options.h"
#include "models/workload.h"
#include "strategies/moe/routing.h"

namespace stratasim {

// A transformer layer's ops split around the MoE block.
struct MoeLayerParts {
  std::vector<OpCost> pre;   // attention block, norm, router and top-k gate
  std::vector<OpCost> post;  // residual add (and a post-norm) after the combine
  double non_expert_params = 0;
  double activation_bytes = 0;  // saved by pre and post (the experts' are per token)
};

struct MoeSetup {
  int ranks = 0;
  int experts = 0;
  // Expert-data parallelism (DeepSpeed-MoE; deepspeed/utils/groups.py
  // _create_expert_and_data_parallel): expert-parallel groups of `expert_parallel` consecutive
  // ranks ({0..ep-1}, {ep..2ep-1}, ...), each holding every expert once; the ranks holding the
  // same experts ({i, i+ep, i+2ep, ...}) form an expert-data-parallel group whose expert
  // gradients are all-reduced. A rank's tokens go only to the experts of its own group.
  int expert_parallel = 0;
  int experts_per_rank = 0;  // experts/ep, in contiguous blocks: expert x on group rank x / this
  int layers = 0;            // MoE layers (every transformer layer is one)
  int iterations = 0;        // warm-up + measured
  long long max_tasks = 0;   // SimulationSpec::max_tasks: the graph's limit (0: none)
  int warmup = 0;
  int top_k = 1;
  double capacity_factor = 1.25;  // the model's
  double tokens_per_rank = 0;     // tokens of one rank's micro-batch
  double hidden = 0;
  double ffn_hidden = 0;
  DType dtype = DType::kBF16;  // of activations, gradients, all-to-alls (BF16 in FP8 training)
  bool fp8 = false;            // FP8 training: the expert GEMMs run in FP8 (models/fp8.h)
  bool swiglu = false;         // SwiGLU experts (architecture llama): gate and up, then down
  double bytes_per_token = 0;  // hidden values of dtype: one token through the all-to-all
  double expert_params = 0;    // one expert MLP (2 h f + f + h; SwiGLU without biases 3 h f)
  double non_expert_params = 0;
  Workload workload;  // one rank's micro-batch (embedding, layers, head)
  std::vector<MoeLayerParts> parts;
  Routing routing;
  std::string routing_note;

  // The position in its expert-parallel group of the GPU holding `expert`.
  int Owner(int expert) const { return expert / experts_per_rank; }
};

// Reads the shared options (the caller reads its own and calls opt.Finish()) and builds the
// setup. Throws ConfigError for a scenario MoE strategies cannot run: a model that is not
// kind moe, an expert_parallel that does not divide the GPUs or of which experts are not a
// multiple, global_batch != micro_batch x GPUs, a trace whose sizes differ from the scenario's.
MoeSetup ReadMoeSetup(const Scenario& s, const StrategySpec& spec, OptionReader& opt);

// The options ReadMoeSetup reads; each MoE kind declares them before its own.
const OptionSpecs& MoeRoutingOptions();

// A ConfigError about the strategy as a whole (located at it, key strategies[i]).
ConfigError StrategyError(const StrategySpec& spec, const std::string& rule);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_MOE_SETUP_H_
