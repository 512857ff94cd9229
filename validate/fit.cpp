#include "validate/fit.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

#include "core/strategy_options.h"
#include "strategies/parallel_layout.h"
#include "strategies/pipeline/pipeline.h"
#include "strategies/pipeline/pipeline_lowering.h"
#include "strategies/plan.h"

namespace stratasim::validate {
namespace {

std::string Str(long n) { return std::to_string(n); }

// How a kind's GPUs divide into data-parallel replicas.
enum class Family {
  kEveryGpu,  // every GPU is a replica (DDP and its compressed/precision variants, ZeRO, GNN)
  kTensor,    // tensor groups of `degree` consecutive ranks, GPUs / degree replicas
  kOases,     // as kTensor at the larger of its two degrees
  kPipeline,  // kinds pipeline and 3d: ParallelLayout of t x c x p x d
  kTriRace,   // PipeDream-2BW stages x data, ParallelLayout with t = 1
};

const std::map<std::string, Family>& Families() {
  static const std::map<std::string, Family> families = {
      {"ddp", Family::kEveryGpu},
      {"zero1", Family::kEveryGpu},
      {"zero2", Family::kEveryGpu},
      {"zero3", Family::kEveryGpu},
      {"s2reducer", Family::kEveryGpu},
      {"casq", Family::kEveryGpu},
      {"coo", Family::kEveryGpu},
      {"omnireduce", Family::kEveryGpu},
      {"topk", Family::kEveryGpu},
      {"qsgd", Family::kEveryGpu},
      {"terngrad", Family::kEveryGpu},
      {"uniform-fp16", Family::kEveryGpu},
      {"uniform-fp8", Family::kEveryGpu},
      {"uniform-int8", Family::kEveryGpu},
      {"dpc", Family::kEveryGpu},
      {"uniform-precision", Family::kEveryGpu},
      {"dc-s3gd", Family::kEveryGpu},
      {"gnn-no-cache", Family::kEveryGpu},
      {"gnn-static-cache", Family::kEveryGpu},
      {"brgraph", Family::kEveryGpu},
      {"tensor", Family::kTensor},
      {"oases", Family::kOases},
      {"pipeline", Family::kPipeline},
      {"3d", Family::kPipeline},
      {"trirace", Family::kTriRace},
  };
  return families;
}

// Why a kind's shape cannot be kept on fewer GPUs.
const std::map<std::string, std::string>& Refusals() {
  static const std::string planner =
      "its planner chooses the layout (partition, degrees, placement) from the cluster it is "
      "given: on fewer GPUs it would choose again, so the validated plan would not be the full "
      "plan's shape";
  static const std::string moe =
      "expert parallelism spreads model.experts over every GPU and runs one micro-batch per GPU: "
      "fewer GPUs would each hold more experts, which changes the plan's shape";
  static const std::map<std::string, std::string> refusals = {
      {"dapple", planner},
      {"piper", planner},
      {"autopipe", planner},
      {"autopipe-h", planner},
      {"hph", planner},
      {"merak", planner},
      {"hsdp", planner + " (each unit's split between the servers' inside and across them)"},
      {"deepspeed-moe", moe},
      {"fastermoe", moe},
      {"prophet", moe},
      {"pro-prophet", moe},
      {"parameter-server",
       "its parameter-server shards are placed per server of the cluster (option servers, "
       "placement): fewer GPUs would move them"},
      {"ssp",
       "its parameter-server shards are placed per server of the cluster (option servers, "
       "placement): fewer GPUs would move them"},
      {"chakra", "Chakra traces give the workload of each of their NPUs; they cannot be shrunk"},
  };
  return refusals;
}

FitRefused Refuse(const StrategySpec& spec, int ranks, const std::string& why) {
  return FitRefused(ConfigError(spec.where, spec.key_path + ".kind", spec.kind,
                                "strategy " + spec.name + " cannot be shrunk to " + Str(ranks) +
                                    " ranks (--fit): " + why)
                        .what());
}

// The full plan's shape as the kind's planner derives it, and what one replica takes.
struct Shape {
  Family family = Family::kEveryGpu;
  PlanShape shape;
  int replica_gpus = 1;  // GPUs of one data-parallel replica
  bool hybrid = false;   // ZeRO shard_group: server: a replica is one server's shard group
  bool sharded = false;  // ZeRO over every GPU: the replicas are also the shards
  bool interleaved = false;
  std::map<std::string, std::string> pinned;  // derived options, written out with these values
};

Shape ReadShape(const Scenario& s, const StrategySpec& spec, int ranks) {
  const auto family = Families().find(spec.kind);
  if (family == Families().end()) {
    const auto refusal = Refusals().find(spec.kind);
    throw Refuse(spec, ranks,
                 refusal != Refusals().end() ? refusal->second
                                             : "--fit does not know how kind " + spec.kind +
                                                   " divides its GPUs into data-parallel replicas");
  }
  const StrategyKindInfo* info = FindStrategyKind(spec.kind);
  if (info == nullptr) throw Error("strategy kind " + spec.kind + " is not registered");
  // The strategy's own model and training choices (ScenarioFor) are those its planner sees.
  const Scenario own = ScenarioFor(s, spec);
  OptionReader opt(spec, info->options);
  const int gpus = s.cluster.NumGpus();
  const int per_server = s.cluster.groups.empty() ? 1 : s.cluster.groups.front().gpus_per_server;
  Shape sh;
  sh.family = family->second;
  PlanShape& p = sh.shape;
  switch (sh.family) {
    case Family::kEveryGpu:
      p.data = gpus;
      if (spec.kind.rfind("zero", 0) == 0) {
        sh.hybrid = opt.Choice("shard_group") == "server";
        sh.sharded = !sh.hybrid;
      }
      if (sh.hybrid) {
        // Planned as one shard group per server (strategies/sharded/shard_groups.h); the
        // replicas are the servers, which must be equal for the planner too.
        sh.replica_gpus = per_server;
        p.data = s.cluster.NumServers();
        if (static_cast<long>(p.data) * per_server != gpus) {
          throw opt.Fail("shard_group", "hybrid sharding needs servers with equal GPU counts");
        }
      }
      break;
    case Family::kTensor: {
      p.tensor = opt.Int("degree", std::min(per_server, gpus));
      if (!opt.Given("degree")) sh.pinned["degree"] = Str(p.tensor);
      if (gpus % p.tensor != 0) {
        throw opt.Fail("degree", "degree t=" + Str(p.tensor) + " must divide the GPU count (" +
                                     Str(gpus) + ")");
      }
      sh.replica_gpus = p.tensor;
      p.data = gpus / p.tensor;
      break;
    }
    case Family::kOases: {
      if (opt.Choice("planner") == "ilp") {
        throw Refuse(spec, ranks,
                     "planner: ilp chooses every sub-layer's tensor degree from the GPUs it is "
                     "given: on fewer GPUs it would choose again");
      }
      const int t = opt.Int("tensor", std::min(per_server, gpus));
      const int first = opt.Int("first_tensor", t);
      const int cutpoint = opt.Int("cutpoint");
      if (!opt.Given("tensor")) sh.pinned["tensor"] = Str(t);
      if (!opt.Given("first_tensor")) sh.pinned["first_tensor"] = Str(first);
      int t_max = 1;
      if (cutpoint > 0) t_max = std::max(t_max, first);
      if (cutpoint < own.model.layers) t_max = std::max(t_max, t);
      if (gpus % t_max != 0) {
        throw opt.Fail("tensor",
                       "tensor t=" + Str(t_max) + " must divide the GPU count (" + Str(gpus) + ")");
      }
      p.tensor = t_max;
      sh.replica_gpus = t_max;
      p.data = gpus / t_max;
      break;
    }
    case Family::kPipeline: {
      const PipelineShape ps = ReadPipelineDegrees(own, opt, spec.kind == "3d");
      p.tensor = ps.t;
      p.context = ps.c;
      p.stages = ps.p;
      p.data = ps.d;
      p.order = ps.order;
      sh.interleaved = opt.Choice("schedule") == "interleaved";
      sh.replica_gpus = ps.t * ps.c * ps.p;
      break;
    }
    case Family::kTriRace: {
      p.stages = opt.Int("stages");
      if (gpus % p.stages != 0) {
        throw opt.Fail("stages", "stages (" + Str(p.stages) + ") must divide the GPU count (" +
                                     Str(gpus) + ")");
      }
      p.data = opt.Int("data", gpus / p.stages);
      if (static_cast<long>(p.data) * p.stages != gpus) {
        throw opt.Fail("data", "stages (" + Str(p.stages) + ") x data (" + Str(p.data) +
                                   ") must equal the GPU count (" + Str(gpus) + ")");
      }
      p.order = opt.Choice("rank_order");
      sh.replica_gpus = p.stages;
      break;
    }
  }
  return sh;
}

std::string Degrees(const PlanShape& p) {
  std::string out = "tensor " + Str(p.tensor);
  if (p.context > 1) out += " x context " + Str(p.context);
  return out + " x stages " + Str(p.stages);
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) parts.push_back(part);
  return parts;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

void SetOption(StrategySpec* spec, const std::string& key, const std::string& value) {
  OptionValue& v = spec->options[key];
  if (v.where.file.empty()) v.where = spec->where;  // written by --fit: located at the strategy
  v.text = value;
}

// Cuts the model to the first `stages` stages of the full plan's partition, with their layers.
// Returns the change's description.
std::string DropStages(const Scenario& s, const StrategySpec& spec, const Shape& sh, int stages,
                       int ranks, Scenario* out, StrategySpec* fitted) {
  const int p = sh.shape.stages;
  if (sh.interleaved) {
    throw Refuse(spec, ranks,
                 "dropping pipeline stages of the interleaved schedule would change every "
                 "stage's layers (each stage holds chunks spread over the whole model)");
  }
  // The partition the full plan uses, in transformer layers per stage (core/pipeline_figures.h).
  const Plan full = PlanStrategy(s, spec);
  if (!full.pipeline || full.pipeline->partition_unit != "layers" || s.model.layers <= 0) {
    throw Refuse(spec, ranks,
                 "dropping pipeline stages cuts transformer layers, and model kind " +
                     s.model.kind + " has no repeated layers to cut");
  }
  const std::vector<std::string> counts = Split(full.pipeline->partition, ',');
  if (static_cast<int>(counts.size()) != p) {
    throw Error("the full plan's partition \"" + full.pipeline->partition + "\" has " +
                Str(static_cast<long>(counts.size())) + " stages, not " + Str(p));
  }
  const std::vector<std::string> kept(counts.begin(), counts.begin() + stages);
  int layers = 0;
  for (const std::string& c : kept) layers += std::stoi(c);
  if (layers < 1) {
    throw Refuse(spec, ranks,
                 "the first " + Str(stages) + " stages of partition " + full.pipeline->partition +
                     " hold no transformer layer");
  }
  out->model.layers = layers;
  if (out->model.recompute_layers > layers) out->model.recompute_layers = layers;
  if (fitted->own.recompute_layers && *fitted->own.recompute_layers > layers) {
    fitted->own.recompute_layers = layers;
  }
  SetOption(fitted, "stages", Str(stages));
  SetOption(fitted, "partition", Join(kept, ","));
  const auto rc = spec.options.find("recompute");
  if (rc != spec.options.end() && rc->second.text.find(',') != std::string::npos) {
    const std::vector<std::string> per_stage = Split(rc->second.text, ',');
    if (static_cast<int>(per_stage.size()) >= stages) {
      SetOption(fitted, "recompute",
                Join(std::vector<std::string>(per_stage.begin(), per_stage.begin() + stages), ","));
    }
  }
  const std::string dropped =
      stages + 1 == p ? "stage " + Str(p - 1) : "stages " + Str(stages) + "-" + Str(p - 1);
  const int lost = s.model.layers - layers;
  return "pipeline stages " + Str(p) + " -> " + Str(stages) + ": " + dropped + " dropped with " +
         (stages + 1 == p ? "its " : "their ") + Str(lost) + " transformer layer" +
         (lost == 1 ? "" : "s") + " (model layers " + Str(s.model.layers) + " -> " + Str(layers) +
         ", partition " + full.pipeline->partition + " -> " + Join(kept, ",") +
         "); the output head moves from stage " + Str(p - 1) + " onto stage " + Str(stages - 1);
}

std::string RankMapping(const std::vector<int>& full_rank) {
  bool prefix = true;
  for (size_t r = 0; r < full_rank.size(); ++r) prefix = prefix && full_rank[r] == int(r);
  const long n = static_cast<long>(full_rank.size());
  if (prefix) {
    return n == 1 ? "rank 0 is the full plan's rank 0"
                  : "ranks 0-" + Str(n - 1) + " are the full plan's ranks 0-" + Str(n - 1);
  }
  constexpr size_t kShown = 16;
  std::string pairs;
  for (size_t r = 0; r < full_rank.size() && r < kShown; ++r) {
    pairs += (r ? ", " : "") + Str(static_cast<long>(r)) + "->" + Str(full_rank[r]);
  }
  if (full_rank.size() > kShown) pairs += ", ...";
  return "rank r holds the position of the full plan's rank: " + pairs;
}

}  // namespace

FitPolicy ParseFitPolicy(const std::string& text) {
  if (text.empty() || text == "dp") return FitPolicy{false};
  if (text == "dp,pp") return FitPolicy{true};
  throw Error("--fit " + text +
              ": must be dp (drop data-parallel replicas) or dp,pp (then pipeline stages too)");
}

Fit FitToRanks(const Scenario& s, const StrategySpec& spec, int ranks, const FitPolicy& policy) {
  if (ranks < 1) throw Error("--fit: the run has " + Str(ranks) + " ranks; it needs at least 1");
  const int gpus = s.cluster.NumGpus();
  Fit f;
  f.scenario = s;
  f.scenario.strategies = {spec};
  f.strategy = spec;
  f.full_gpus = gpus;
  f.gpus = gpus;
  if (gpus <= ranks) {
    // Nothing to shrink: the plan is validated as it is.
    f.full_rank.resize(static_cast<size_t>(gpus));
    std::iota(f.full_rank.begin(), f.full_rank.end(), 0);
    return f;
  }
  const Shape sh = ReadShape(s, spec, ranks);
  f.full = sh.shape;
  PlanShape& fit = f.fitted;
  fit = sh.shape;
  const bool pipelined = sh.family == Family::kPipeline || sh.family == Family::kTriRace;
  fit.data = ranks / sh.replica_gpus;
  std::string stage_change;
  if (fit.data < 1) {
    const std::string one = "one data-parallel replica needs " +
                            (sh.hybrid ? "a server of " : Degrees(sh.shape) + " = ") +
                            Str(sh.replica_gpus) + " GPUs, more than the " + Str(ranks) + " ranks";
    if (!pipelined || sh.shape.stages == 1) throw Refuse(spec, ranks, one);
    if (!policy.stages) {
      throw Refuse(spec, ranks, one + " (--fit dp,pp may drop pipeline stages too)");
    }
    fit.data = 1;
    fit.stages = ranks / (sh.shape.tensor * sh.shape.context);
    const int min_stages = spec.kind == "3d" ? 1 : 2;
    if (fit.stages < min_stages) {
      throw Refuse(spec, ranks,
                   "even " + Str(min_stages) + " pipeline stage" + (min_stages > 1 ? "s" : "") +
                       " of tensor " + Str(sh.shape.tensor) +
                       (sh.shape.context > 1 ? " x context " + Str(sh.shape.context) : "") +
                       " need more than the " + Str(ranks) + " ranks" +
                       (spec.kind == "pipeline" ? " (kind pipeline has at least 2 stages)" : ""));
    }
  }
  fit.data = std::min(fit.data, sh.shape.data);
  const TrainingSpec& tr = s.training;
  if (tr.global_batch % sh.shape.data != 0) {
    throw Refuse(spec, ranks,
                 "training.global_batch (" + Str(tr.global_batch) +
                     ") is not a multiple of the data-parallel replicas (" + Str(sh.shape.data) +
                     "): a replica's share of the batch is not whole");
  }
  const int per_replica = tr.global_batch / sh.shape.data;
  f.shrunk = true;
  f.gpus = fit.data * (sh.hybrid ? sh.replica_gpus : fit.tensor * fit.context * fit.stages);
  f.scenario.training.global_batch = per_replica * fit.data;
  for (const auto& [key, value] : sh.pinned) SetOption(&f.strategy, key, value);
  if (sh.family == Family::kPipeline || sh.family == Family::kTriRace) {
    SetOption(&f.strategy, "data", Str(fit.data));
  }
  if (fit.stages != sh.shape.stages) {
    stage_change = DropStages(s, spec, sh, fit.stages, ranks, &f.scenario, &f.strategy);
  }
  f.scenario.cluster = FirstGpus(s.cluster, f.gpus);
  f.scenario.strategies = {f.strategy};

  // Each kept position's rank in both plans (ParallelLayout numbers every family here: the
  // tensor kinds and the every-GPU kinds are "tpd" with their groups consecutive).
  ParallelLayout full{sh.shape.tensor, sh.shape.stages, sh.shape.data, sh.shape.order,
                      sh.shape.context};
  ParallelLayout kept{fit.tensor, fit.stages, fit.data, fit.order, fit.context};
  if (sh.hybrid) {
    full = ParallelLayout{sh.replica_gpus, 1, sh.shape.data, "tpd", 1};
    kept = ParallelLayout{sh.replica_gpus, 1, fit.data, "tpd", 1};
  }
  f.full_rank.assign(static_cast<size_t>(f.gpus), -1);
  for (int q = 0; q < kept.data; ++q) {
    for (int st = 0; st < kept.stages; ++st) {
      for (int tp = 0; tp < kept.tensor; ++tp) {
        for (int cp = 0; cp < kept.context; ++cp) {
          f.full_rank[static_cast<size_t>(kept.Rank(q, st, tp, cp))] = full.Rank(q, st, tp, cp);
        }
      }
    }
  }

  // What changed, for the report.
  if (fit.data != sh.shape.data) {
    std::string line = "data-parallel replicas " + Str(sh.shape.data) + " -> " + Str(fit.data);
    if (sh.hybrid) line += " (hybrid sharding: one shard group per server)";
    if (sh.sharded) {
      line += ", which are also ZeRO's shards: each GPU holds 1/" + Str(fit.data) +
              " of the sharded states instead of 1/" + Str(sh.shape.data);
    }
    f.changes.push_back(line);
  }
  if (!stage_change.empty()) f.changes.push_back(stage_change);
  const ClusterSpec& shrunk = f.scenario.cluster;
  f.changes.push_back("GPUs " + Str(gpus) + " -> " + Str(f.gpus) + " (servers " +
                      Str(s.cluster.NumServers()) + " -> " + Str(shrunk.NumServers()) + ")");
  if (f.scenario.training.global_batch != tr.global_batch) {
    f.changes.push_back("global batch " + Str(tr.global_batch) + " -> " +
                        Str(f.scenario.training.global_batch) + " (" + Str(per_replica) +
                        " per replica, as in the full plan)");
  }
  for (const auto& [key, value] : sh.pinned) {
    f.changes.push_back("option " + key + " = " + value +
                        " written out (derived from the full cluster, kept)");
  }
  f.changes.push_back(
      "kept: " + (sh.hybrid ? "shard groups of " + Str(sh.replica_gpus) + " GPUs" : Degrees(fit)) +
      ", rank order " + fit.order + "; " + RankMapping(f.full_rank));
  return f;
}

std::string DescribeFit(const Fit& f) { return f.shrunk ? Join(f.changes, "; ") : ""; }

ClusterSpec FirstGpus(const ClusterSpec& c, int gpus) {
  if (gpus < 1 || gpus > c.NumGpus()) {
    throw Error("cannot keep " + Str(gpus) + " GPUs of a cluster of " + Str(c.NumGpus()));
  }
  ClusterSpec out = c;
  out.groups.clear();
  int left = gpus;
  for (const ServerGroup& g : c.groups) {
    if (left == 0) break;
    const int whole = std::min(g.count, left / g.gpus_per_server);
    if (whole > 0) {
      ServerGroup k = g;
      k.count = whole;
      out.groups.push_back(k);
      left -= whole * g.gpus_per_server;
    }
    if (whole < g.count && left > 0) {
      // The first `left` GPUs of one more server: its NICs, PCIe switches and sockets cut to
      // counts that divide what is left, as the loader requires; NVLink pairs among them kept.
      ServerGroup k = g;
      k.name = g.name + "-first" + Str(left);
      k.count = 1;
      k.gpus_per_server = left;
      k.nics.count = std::gcd(g.nics.count, left);
      if (k.pcie) {
        k.pcie->gpus_per_switch = std::gcd(g.pcie->gpus_per_switch, left);
        k.pcie->sockets = std::gcd(g.pcie->sockets, left / k.pcie->gpus_per_switch);
      }
      if (k.nvlink) {
        std::vector<std::pair<int, int>> pairs;
        for (const auto& [a, b] : g.nvlink->pairs) {
          if (a < left && b < left) pairs.emplace_back(a, b);
        }
        k.nvlink->pairs = pairs;
      }
      out.groups.push_back(k);
      left = 0;
    }
  }
  const int servers = out.NumServers();
  out.stragglers.entries.clear();
  for (StragglerSpec e : c.stragglers.entries) {
    e.ranks.erase(std::remove_if(e.ranks.begin(), e.ranks.end(), [&](int r) { return r >= gpus; }),
                  e.ranks.end());
    e.servers.erase(
        std::remove_if(e.servers.begin(), e.servers.end(), [&](int sv) { return sv >= servers; }),
        e.servers.end());
    if (!e.ranks.empty()) out.stragglers.entries.push_back(e);
  }
  return out;
}

}  // namespace stratasim::validate
