#include "strategies/plan.h"

#include "strategies/async/async.h"
#include "strategies/chakra/chakra_strategy.h"
#include "strategies/comm/compressed_ddp.h"
#include "strategies/data/ddp.h"
#include "strategies/gnn/gnn_training.h"
#include "strategies/moe/moe_strategies.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/trirace.h"
#include "strategies/planners/autopipe_strategy.h"
#include "strategies/planners/baselines.h"
#include "strategies/planners/hph_strategy.h"
#include "strategies/planners/merak.h"
#include "strategies/precision/precision_strategies.h"
#include "strategies/sharded/hsdp.h"
#include "strategies/sharded/zero.h"
#include "strategies/tensor/megatron.h"
#include "strategies/tensor/oases.h"

namespace stratasim {
namespace {

struct Entry {
  const char* kind;
  Plan (*plan)(const Scenario&, const StrategySpec&);
  const OptionSpecs& (*options)();
  const char* summary;
  const char* example;  // see StrategyKindInfo
};

// Every strategy kind: the planner that lowers it, its options and what it is. Adding a kind is
// one row here (docs/architecture.md, "Adding a thing").
const Entry kPlanners[] = {
    {"ddp", PlanDdp, DdpOptions, "data parallel, PyTorch DDP: bucketed, overlapped all-reduce",
     "{}"},
    {"zero1", PlanZero, []() -> const OptionSpecs& { return ZeroOptions(1); },
     "ZeRO-1: optimizer states sharded", "{}"},
    {"zero2", PlanZero, []() -> const OptionSpecs& { return ZeroOptions(2); },
     "ZeRO-2: optimizer states and gradients sharded", "{}"},
    {"zero3", PlanZero, []() -> const OptionSpecs& { return ZeroOptions(3); },
     "ZeRO-3 / FSDP: weights, gradients and optimizer states sharded; hybrid sharding", "{}"},
    {"tensor", PlanTensorParallel, TensorParallelOptions,
     "Megatron-LM tensor parallel (+ sequence parallel) x data parallel", "{degree: 4}"},
    {"pipeline", PlanPipeline, []() -> const OptionSpecs& { return PipelineOptions(false); },
     "pipeline parallel: GPipe, 1F1B, interleaved, PipeDream-2BW", "{stages: 2}"},
    {"3d", PlanPipeline, []() -> const OptionSpecs& { return PipelineOptions(true); },
     "Megatron-LM 3D: data x tensor x pipeline", "{tensor: 2, stages: 2, data: 2}"},
    {"dapple", planners::PlanDappleStrategy, planners::DappleOptions,
     "DAPPLE's planner (PPoPP'21): partition and placement policies scored by its latency model, "
     "early-backward (1F1B) schedule",
     "{stages: 2}"},
    {"piper", planners::PlanPiperStrategy, planners::PiperOptions,
     "Piper's planner (NeurIPS'21): DP over stages with tensor/data degrees and knapsack "
     "recomputation under memory",
     "{stages: 2}"},
    {"deepspeed-moe", PlanDeepSpeedMoe, DeepSpeedMoeOptions,
     "expert parallel MoE, DeepSpeed-MoE's capacity gate", "{}"},
    {"fastermoe", PlanFasterMoe, FasterMoeOptions,
     "MoE with FasterMoE's dynamic shadowing and smart scheduling", "{}"},
    {"prophet", PlanProphet, ProphetOptions, "MoE with Prophet's fine-grained expert placement",
     "{}"},
    {"pro-prophet", PlanProProphet, ProProphetOptions,
     "MoE with Pro-Prophet's planner and block-wise scheduler", "{}"},
    {"autopipe", PlanAutoPipeStrategy, AutoPipeOptions,
     "AutoPipe: sub-layer partition by a search around the critical stage of a simulated 1F1B, "
     "micro-batch slicer",
     "{stages: 4}"},
    {"autopipe-h", PlanAutoPipeHStrategy, AutoPipeHOptions,
     "AutoPipe-H: AutoPipe's partitioner on heterogeneous servers, contention-aware device "
     "mapping",
     "{stages: 4}"},
    {"hph", PlanHphStrategy, HphOptions,
     "HPH: topology designer, speed-weighted partition, recomputation where memory overflows",
     "{stages: 2}"},
    {"merak", planners::PlanMerak, planners::MerakOptions,
     "Merak 3D: shifted critical path, stage-aware recomputation, sub-pipelined TP",
     "{stages: 4, tensor: 2, micro_batches: 8}"},
    {"oases", PlanOases, OasesOptions,
     "Oases (TPDS): tensor parallel in two sub-batches whose all-reduces overlap compute, "
     "communication-free recomputation, two degrees with a cutpoint",
     "{tensor: 4, recompute: true}"},
    {"trirace", PlanTriRace, TriRaceOptions,
     "TriRace: PipeDream-2BW with prioritised point-to-point, deferred dense and sparse "
     "embedding communication classes, topology-aware gating",
     "{stages: 2}"},
    {"hsdp", PlanHsdp, HsdpOptions,
     "HSDP (ISPA'24): each FSDP unit split into a fragment sharded inside servers and one "
     "sharded across them, collectives on both links at once; MILP planner for the split",
     "{}"},
    {"s2reducer", PlanCompressedDdp, CompressedDdpOptions,
     "DDP with S2Reducer (Ge et al., TPDS): count sketch + row bitmap of the sparse embedding "
     "gradient, one sum all-reduce of 4rc + n/8 bytes",
     "{scope: all}"},
    {"casq", PlanCompressedDdp, CompressedDdpOptions,
     "DDP with CASQ (CLUSTER'21): q-bit cluster codes + hash tables, all-gathered", "{}"},
    {"coo", PlanCompressedDdp, CompressedDdpOptions,
     "DDP whose sparse embedding rows + indices are all-gathered, padded to the most rows",
     "{scope: all}"},
    {"omnireduce", PlanCompressedDdp, CompressedDdpOptions,
     "DDP with OmniReduce (SIGCOMM'21): bitmap all-reduce, then union-row all-reduce",
     "{scope: all}"},
    {"topk", PlanCompressedDdp, CompressedDdpOptions,
     "DDP with top-k sparsification (DGC): k values + indices all-gathered", "{}"},
    {"qsgd", PlanCompressedDdp, CompressedDdpOptions,
     "DDP with QSGD (NeurIPS'17): stochastic s-level quantization, all-gathered", "{}"},
    {"terngrad", PlanCompressedDdp, CompressedDdpOptions,
     "DDP with TernGrad (NeurIPS'17): 2-bit ternary gradients, all-gathered", "{}"},
    {"uniform-fp16", PlanCompressedDdp, CompressedDdpOptions,
     "DDP whose gradients are all-reduced in FP16", "{}"},
    {"uniform-fp8", PlanCompressedDdp, CompressedDdpOptions,
     "DDP whose gradients are all-reduced in FP8", "{}"},
    {"uniform-int8", PlanCompressedDdp, CompressedDdpOptions,
     "DDP with blockwise INT8 gradients + FP32 scales, all-gathered", "{}"},
    {"dpc", PlanDpc, DpcOptions,
     "DPC (Frontiers of CS 2025): data parallel with each weight layer's GEMMs and gradient in a "
     "format of decreasing precision with its parameter count",
     "{formats: \"bf16,int8\"}"},
    {"uniform-precision", PlanUniformPrecision, UniformPrecisionOptions,
     "data parallel with every weight layer's GEMMs and gradient in one format (DPC's baseline)",
     "{format: int8}"},
    {"parameter-server", PlanParameterServer, ParameterServerOptions,
     "data parallel through sharded parameter servers, bulk-synchronous: workers push gradient "
     "slices, shards run Adam, workers pull parameters",
     "{servers: 2}"},
    {"ssp", PlanParameterServer, SspOptions,
     "stale-synchronous parallel parameter server (Ho et al., NIPS'13): no worker more than "
     "`staleness` iterations ahead of the slowest",
     "{servers: 2, staleness: 2}"},
    {"dc-s3gd", PlanDcS3gd, DcS3gdOptions,
     "DC-S3GD (Rigazzi et al. 2019): decentralised, the update all-reduce overlaps the next "
     "iteration, delay-compensated gradients (DC-ASGD)",
     "{}"},
    {"gnn-no-cache", PlanGnnNoCache, GnnNoCacheOptions,
     "data-parallel sampled GraphSAGE, every input feature row copied host-to-device", "{}"},
    {"gnn-static-cache", PlanGnnStaticCache, GnnStaticCacheOptions,
     "sampled GraphSAGE with PaGraph's (SoCC'20) static GPU cache of the highest-degree "
     "vertices' features",
     "{cache_fraction: 0.2}"},
    {"brgraph", PlanBrGraph, BrGraphOptions,
     "sampled GraphSAGE with BRGraph's (CCPE'22) batch reuse: the last batch's (or two "
     "batches') features kept on the GPU, hits gathered on the GPU, misses copied",
     "{levels: 2}"},
    {"chakra", PlanChakra, ChakraOptions,
     "the workload of Chakra execution traces (ASTRA-sim's format, docs/chakra.md) on the "
     "scenario's cluster",
     "{traces: chakra/testdata/astra-sim-all_reduce-4npus_1MB/all_reduce}"},
};

}  // namespace

std::vector<std::string> StrategyKinds() {
  std::vector<std::string> kinds;
  for (const Entry& e : kPlanners) kinds.emplace_back(e.kind);
  return kinds;
}

const StrategyKindInfo* FindStrategyKind(const std::string& kind) {
  static const std::vector<StrategyKindInfo> infos = [] {
    std::vector<StrategyKindInfo> v;
    for (const Entry& e : kPlanners) v.push_back({e.kind, e.summary, e.options(), e.example});
    return v;
  }();
  for (const StrategyKindInfo& i : infos) {
    if (kind == i.kind) return &i;
  }
  return nullptr;
}

Plan PlanStrategy(const Scenario& s, const StrategySpec& spec) {
  for (const Entry& e : kPlanners) {
    if (spec.kind != e.kind) continue;
    const bool own = !spec.own.empty() || spec.stragglers_off;
    Plan plan = own ? e.plan(ScenarioFor(s, spec), spec) : e.plan(s, spec);
    for (const std::string& changed : DescribeOverrides(s, spec)) {
      plan.notes.push_back("trained with " + changed);
    }
    // The stragglers this strategy runs with (core/stragglers.h), for the report.
    if (!spec.stragglers_off) {
      for (const std::string& line : s.cluster.stragglers.Describe()) plan.notes.push_back(line);
    }
    if (plan.fold.empty()) {
      // Planners that do not fold say nothing; the report says why they ran in full.
      const bool moe = s.model.kind == "moe";
      plan.fold =
          !s.simulation.fold ? "full: simulation.fold is off"
          : moe              ? "full: MoE routing differs per GPU"
                : "full: folding is implemented for kinds ddp, zero1/2/3, tensor, pipeline and 3d";
    }
    return plan;
  }
  std::string known;
  for (const std::string& k : StrategyKinds()) known += (known.empty() ? "" : ", ") + k;
  throw ConfigError(spec.where, spec.key_path + ".kind", spec.kind,
                    "unknown strategy kind (known: " + known + ")");
}

}  // namespace stratasim
