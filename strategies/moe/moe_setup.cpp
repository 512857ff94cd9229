#include "strategies/moe/moe_setup.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/limits.h"
#include "models/moe.h"
#include "strategies/moe/routing_trace.h"

namespace stratasim {
namespace {

// The dispatch, the expert MLP (its projections, activation and FP8 casts) and the combine.
bool IsExpertOp(const std::string& name) {
  return name == "dispatch" || name.rfind("expert_", 0) == 0 || name == "combine";
}

MoeLayerParts Split(const LayerCost& layer, double expert_params, double experts) {
  MoeLayerParts p;
  bool after = false;
  for (const OpCost& op : layer.ops) {
    if (IsExpertOp(op.name)) {
      after = true;
      continue;
    }
    (after ? p.post : p.pre).push_back(op);
    p.activation_bytes += op.saved_bytes;
  }
  p.non_expert_params = layer.params - experts * expert_params;
  return p;
}

std::string Fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

}  // namespace

ConfigError StrategyError(const StrategySpec& spec, const std::string& rule) {
  return ConfigError(spec.where, spec.key_path, "", rule);
}

// Beyond any gate (top-1, top-2, top-8); the bound that matters is model.experts.
constexpr int kMaxTopK = 1 << 20;

const OptionSpecs& MoeRoutingOptions() {
  static const OptionSpecs options = {
      Integer("top_k", 1, kMaxTopK,
              "experts per token: 1 (Switch) or 2 (GShard); at most model.experts")
          .Derived("the model's top_k"),
      OneOf("routing", {"zipf", "uniform", "trace"},
            "zipf and uniform come from the seeded generator (strategies/moe/routing.h; uniform "
            "is zipf with skew 0) with training.seed; trace replays a routing trace file")
          .Default("zipf"),
      Number("skew", 0, 8, "Zipf exponent of expert popularity (routing: zipf only)")
          .Default("1.0"),
      Number("drift", 0, 4, "per-iteration drift of popularity (routing: zipf or uniform)")
          .Default("0.05"),
      Integer("expert_parallel", 1, limits::kMaxGpus,
              "GPUs per expert-parallel group (consecutive ranks, each group holding every expert "
              "once; DeepSpeed-MoE's ep_size): must divide the GPUs, model.experts a multiple of "
              "it; GPUs / it copies of each expert have their gradients all-reduced")
          .Derived("min(model.experts, GPUs)"),
      FreeText("trace",
               "path of a routing trace file (routing: trace), relative to the scenario file")
          .Default(""),
  };
  return options;
}

MoeSetup ReadMoeSetup(const Scenario& s, const StrategySpec& spec, OptionReader& opt) {
  const ModelSpec& m = s.model;
  if (m.kind != "moe") {
    throw StrategyError(spec, "MoE strategies need model.kind moe (the model is " + m.kind + ")");
  }
  MoeSetup st;
  st.ranks = s.cluster.NumGpus();
  st.experts = m.experts;
  st.expert_parallel = opt.Int("expert_parallel", std::min(st.experts, st.ranks));
  const std::string ep = std::to_string(st.expert_parallel);
  if (!opt.Given("expert_parallel")) {
    // The default: every GPU in one group when there are enough experts, else one expert per
    // GPU in groups of model.experts GPUs.
    if (st.experts >= st.ranks && st.experts % st.ranks != 0) {
      throw StrategyError(spec, "expert parallelism needs model.experts (" +
                                    std::to_string(m.experts) + ") to be a multiple of the GPUs (" +
                                    std::to_string(st.ranks) + ")");
    }
    if (st.ranks % st.expert_parallel != 0) {
      throw StrategyError(spec, "the default expert_parallel, model.experts (" + ep +
                                    "), must divide the GPUs (" + std::to_string(st.ranks) +
                                    "): set expert_parallel");
    }
  }
  if (st.ranks % st.expert_parallel != 0) {
    throw opt.Fail("expert_parallel",
                   "must divide the number of GPUs (" + std::to_string(st.ranks) + ")");
  }
  if (st.experts % st.expert_parallel != 0) {
    throw opt.Fail("expert_parallel",
                   "model.experts (" + std::to_string(m.experts) + ") must be a multiple of it");
  }
  st.experts_per_rank = st.experts / st.expert_parallel;
  const TrainingSpec& tr = s.training;
  if (static_cast<long>(tr.micro_batch) * st.ranks != tr.global_batch) {
    throw StrategyError(spec,
                        "MoE strategies run one micro-batch per GPU per iteration: "
                        "training.global_batch (" +
                            std::to_string(tr.global_batch) + ") must equal micro_batch (" +
                            std::to_string(tr.micro_batch) + ") x GPUs (" +
                            std::to_string(st.ranks) + ")");
  }
  if (m.recompute != Recompute::kNone) {
    throw StrategyError(spec,
                        "MoE strategies do not model activation recomputation: model.recompute "
                        "must be none");
  }
  st.top_k = opt.Int("top_k", m.top_k);
  if (st.top_k > m.experts) {
    throw opt.Fail("top_k", "must be <= model.experts (" + std::to_string(m.experts) + ")");
  }
  st.capacity_factor = m.capacity_factor;
  st.layers = m.layers;
  st.warmup = tr.warmup_iterations;
  st.iterations = tr.warmup_iterations + tr.measured_iterations;
  st.max_tasks = s.simulation.max_tasks;
  st.dtype = StorageDType(tr.precision);
  st.fp8 = tr.precision == DType::kFP8;
  const TransformerLayerShape shape = MoeLayerShape(m, tr.micro_batch, st.dtype);
  st.swiglu = shape.swiglu;
  st.hidden = m.hidden;
  st.ffn_hidden = shape.ffn_hidden;
  st.bytes_per_token = st.hidden * BytesPerElement(st.dtype);
  if (st.swiglu) {
    st.expert_params =
        3 * st.hidden * st.ffn_hidden + (shape.bias ? 2 * st.ffn_hidden + st.hidden : 0);
  } else {
    st.expert_params = 2 * st.hidden * st.ffn_hidden + st.ffn_hidden + st.hidden;
  }
  st.workload = BuildWorkload(m, tr.micro_batch, tr.precision, tr.seed);
  st.tokens_per_rank = static_cast<double>(tr.micro_batch) * m.sequence;
  // layers: embedding, transformer layers, head.
  st.non_expert_params = st.workload.layers.front().params + st.workload.layers.back().params;
  for (int l = 0; l < st.layers; ++l) {
    st.parts.push_back(Split(st.workload.layers[1 + l], st.expert_params, st.experts));
    st.non_expert_params += st.parts.back().non_expert_params;
  }

  const std::string routing = opt.Choice("routing");
  const double skew = opt.Double("skew");
  const double drift = opt.Double("drift");
  const std::string trace = opt.Text("trace");
  // A knob the chosen routing ignores is a mistake in the file, not something to drop silently.
  if (routing != "zipf" && opt.Given("skew")) {
    throw opt.Fail("skew", "only with routing: zipf (this strategy has routing: " + routing + ")");
  }
  if (routing == "trace" && opt.Given("drift")) {
    throw opt.Fail("drift", "not with routing: trace (the trace gives every iteration)");
  }
  if (routing == "trace") {
    if (trace.empty()) throw opt.Fail("trace", "routing: trace needs the trace file's path");
    const SourceLocation where = spec.options.at("trace").where;
    std::filesystem::path path(trace);
    if (path.is_relative() && !s.file.empty()) {
      path = std::filesystem::path(s.file).parent_path() / path;
    }
    st.routing = ReadRoutingTrace(path.string(), where);
    auto mismatch = [&](const std::string& what, int got, int want) {
      if (got != want) {
        throw opt.Fail("trace", path.string() + " has " + std::to_string(got) + " " + what +
                                    ", the scenario needs " + std::to_string(want));
      }
    };
    mismatch("ranks", st.routing.ranks(), st.ranks);
    mismatch("experts", st.routing.experts(), st.experts);
    mismatch("layers", st.routing.layers(), st.layers);
    if (st.routing.iterations() < st.iterations) {
      throw opt.Fail("trace", path.string() + " has " + std::to_string(st.routing.iterations()) +
                                  " iterations, the scenario simulates " +
                                  std::to_string(st.iterations) + " (warm-up + measured)");
    }
    // Tokens per row must be those of the micro-batch times top-k, or the workload and the
    // routing disagree on how many tokens enter each layer.
    const double want = st.tokens_per_rank * st.top_k;
    for (int t = 0; t < st.iterations; ++t) {
      for (int l = 0; l < st.layers; ++l) {
        for (int r = 0; r < st.ranks; ++r) {
          double sum = 0;
          for (int x = 0; x < st.experts; ++x) sum += st.routing.at(t, l, r, x);
          if (sum != want) {
            throw opt.Fail("trace", path.string() + ": iteration " + std::to_string(t) + " layer " +
                                        std::to_string(l) + " rank " + std::to_string(r) +
                                        " routes " + Fmt("%.0f", sum) +
                                        " tokens; micro-batch tokens x top_k is " +
                                        Fmt("%.0f", want));
          }
        }
      }
    }
    st.routing_note = "routing replayed from " + path.string();
  } else {
    if (!trace.empty()) throw opt.Fail("trace", "only with routing: trace");
    RoutingGeneratorConfig g;
    g.iterations = st.iterations;
    g.layers = st.layers;
    g.ranks = st.ranks;
    g.experts = st.experts;
    g.tokens_per_rank = static_cast<int>(st.tokens_per_rank);
    g.top_k = st.top_k;
    g.skew = routing == "uniform" ? 0.0 : skew;
    g.drift = drift;
    g.seed = tr.seed;
    st.routing = GenerateRouting(g);
    st.routing_note = "routing: generated, Zipf skew " + Fmt("%g", g.skew) + ", drift " +
                      Fmt("%g", g.drift) + ", top-" + std::to_string(st.top_k) + ", seed " +
                      std::to_string(tr.seed);
  }
  return st;
}

}  // namespace stratasim
