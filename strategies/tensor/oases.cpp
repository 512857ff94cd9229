#include "strategies/tensor/oases.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/limits.h"
#include "core/units.h"
#include "models/memory.h"
#include "models/recompute.h"
#include "models/sub_layers.h"
#include "strategies/batching.h"
#include "strategies/distributed_optimizer.h"
#include "strategies/layer_tasks.h"
#include "strategies/tensor/megatron.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim {
namespace {

using Groups = std::vector<std::vector<int>>;

bool IsSubLayer(const LayerCost& L) {
  const auto ends = [&](const std::string& tail) {
    return L.name.size() > tail.size() &&
           L.name.compare(L.name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".attn") || ends(".mlp");
}

// Consecutive ranks: the tensor groups of degree t over `gpus` GPUs.
Groups TensorGroups(int gpus, int t) {
  Groups groups;
  for (int k = 0; k < gpus / t; ++k) {
    groups.emplace_back();
    for (int j = 0; j < t; ++j) groups.back().push_back(k * t + j);
  }
  return groups;
}

// Ranks j, j + t, j + 2t...: the data-parallel groups of degree t.
Groups DataGroups(int gpus, int t) {
  Groups groups(t);
  for (int j = 0; j < t; ++j) {
    for (int q = 0; q < gpus / t; ++q) groups[j].push_back(q * t + j);
  }
  return groups;
}

// Re-sharding between degrees `small` and `large` (large a multiple of small): within each
// large group, the ranks at the same position x of its large/small small groups.
Groups TransGroups(int gpus, int small, int large) {
  Groups groups;
  for (int k = 0; k < gpus / large; ++k) {
    for (int x = 0; x < small; ++x) {
      groups.emplace_back();
      for (int q = 0; q < large / small; ++q) groups.back().push_back(k * large + q * small + x);
    }
  }
  return groups;
}

// The workload of one GPU at tensor degree t with micro-batches of b samples: sharded, split
// into sub-layers, with Oases' communication-free recomputation when asked.
Workload OasesWorkload(const Scenario& s, int t, int b, bool recompute) {
  ModelSpec plain = s.model;
  plain.recompute = Recompute::kNone;
  const Workload full = BuildWorkload(plain, b, s.training.precision, s.training.seed);
  Workload w = SplitSubLayers(TensorParallelShard(full, t, false, plain));
  if (!recompute) return w;
  ApplyRecompute(w, Recompute::kFull);
  const double output_bytes = static_cast<double>(b) * s.model.sequence * s.model.hidden *
                              BytesPerElement(StorageDType(s.training.precision));
  for (LayerCost& L : w.layers) {
    if (!L.recomputable) continue;
    for (OpCost& op : L.ops) {
      if (IsRowParallel(op) && op.recomputed) {
        // Its all-reduced output is kept (Oases' checkpoint of the post-all-reduce tensor), so
        // the recomputation neither re-runs it nor all-reduces again.
        op.recomputed = false;
        L.activation_bytes += output_bytes;
      }
    }
  }
  return w;
}

}  // namespace

OasesShape OasesCutpointShape(int layers, int first_tensor, int tensor, int cutpoint,
                              bool recompute) {
  OasesShape shape;
  for (int i = 0; i < layers; ++i) {
    const int t = i < cutpoint ? first_tensor : tensor;
    shape.sublayer_tensor.push_back(t);
    shape.sublayer_tensor.push_back(t);
  }
  shape.recompute = recompute;
  return shape;
}

double OasesSmInterference(const Scenario& s) {
  if (s.simulation.calibration && !s.cluster.groups.empty()) {
    const GpuCalibration* gpu = s.simulation.calibration->FindGpu(s.cluster.groups.front().gpu);
    if (gpu != nullptr && gpu->sm_interference) return *gpu->sm_interference;
  }
  return kDefaultSmInterference;
}

std::string OasesShapeError(const Scenario& s, const OasesShape& shape) {
  const ModelSpec& m = s.model;
  if (m.kind != "gpt" && m.kind != "bert" && m.kind != "llama") {
    return "Oases splits transformer layers: model kind \"" + m.kind +
           "\" is not supported (gpt, bert, llama)";
  }
  const size_t want = 2 * static_cast<size_t>(m.layers);
  if (shape.sublayer_tensor.size() != want) {
    return "needs one tensor degree per sub-layer: " + std::to_string(want) + " (2 x " +
           std::to_string(m.layers) + " layers), not " +
           std::to_string(shape.sublayer_tensor.size());
  }
  if (shape.sm_interference > 1) return "sm_interference must be at most 1";
  const int gpus = s.cluster.NumGpus();
  const int t_max = *std::max_element(shape.sublayer_tensor.begin(), shape.sublayer_tensor.end());
  for (size_t k = 0; k < want; ++k) {
    const int t = shape.sublayer_tensor[k];
    const std::string where = "sub-layer " + std::to_string(k) + " (layer" + std::to_string(k / 2) +
                              (k % 2 == 0 ? ".attn" : ".mlp") +
                              "): tensor degree t=" + std::to_string(t);
    if (t < 1) return where + " must be at least 1";
    if (gpus % t != 0) return where + " must divide the GPU count (" + std::to_string(gpus) + ")";
    if (m.heads % t != 0) {
      return where + " must divide the model's attention heads (" + std::to_string(m.heads) + ")";
    }
    if (m.kv_heads > 0 && m.kv_heads % t != 0) {
      return where + " must divide the model's key/value heads (" + std::to_string(m.kv_heads) +
             ")";
    }
    if (k > 0) {
      const int before = shape.sublayer_tensor[k - 1];
      if (t % before != 0 && before % t != 0) {
        return where + " and the degree before it (" + std::to_string(before) +
               ") must divide one another (the re-shard gathers whole groups)";
      }
    }
    const long long samples = static_cast<long long>(s.training.micro_batch) * t;
    if (samples % t_max != 0 || (samples / t_max) % 2 != 0) {
      char b[32];
      std::snprintf(b, sizeof b, "%g", static_cast<double>(samples) / t_max);
      return where + ": its micro-batches of training.micro_batch x t / " + std::to_string(t_max) +
             " (the largest degree) = " + b +
             " samples must be a whole even number, to split into two sub-batches";
    }
  }
  const long long per_iteration = static_cast<long long>(s.training.micro_batch) * (gpus / t_max);
  if (s.training.global_batch % per_iteration != 0) {
    return "training.global_batch (" + std::to_string(s.training.global_batch) +
           ") must be a multiple of training.micro_batch x " + std::to_string(gpus / t_max) +
           " replicas at the largest degree " + std::to_string(t_max);
  }
  return "";
}

Plan LowerOases(const Scenario& s, const OasesShape& shape) {
  const std::string error = OasesShapeError(s, shape);
  if (!error.empty()) throw Error("oases: " + error);
  const ModelSpec& m = s.model;
  const TrainingSpec& tr = s.training;
  const int gpus = s.cluster.NumGpus();
  const std::vector<int>& sub = shape.sublayer_tensor;
  const int t_max = *std::max_element(sub.begin(), sub.end());
  const int micro_batches = tr.global_batch / (tr.micro_batch * (gpus / t_max));
  const double sm = shape.sm_interference >= 0 ? shape.sm_interference : OasesSmInterference(s);
  const DType dtype = StorageDType(tr.precision);

  // One workload per degree; each layer of the plan taken from its degree's.
  std::map<int, Workload> by_degree;
  for (int t : sub) {
    if (by_degree.count(t) == 0) {
      by_degree[t] = OasesWorkload(s, t, tr.micro_batch * t / t_max, shape.recompute);
    }
  }
  const Workload& first = by_degree.begin()->second;
  std::vector<int> degree;  // per layer of the plan
  {
    size_t k = 0;
    for (const LayerCost& L : first.layers) {
      const bool sublayer = IsSubLayer(L);
      degree.push_back(sublayer ? sub[std::min(k, sub.size() - 1)] : sub[k == 0 ? 0 : k - 1]);
      if (sublayer) ++k;
    }
  }
  const int n = static_cast<int>(first.layers.size());
  Workload w = first;  // the plan's layers, for the notes
  w.params = 0;
  for (int i = 0; i < n; ++i) {
    w.layers[i] = by_degree.at(degree[i]).layers[i];
    w.params += w.layers[i].params;
  }
  const auto comm_bytes = [&](int i) {
    return static_cast<double>(tr.micro_batch) * degree[i] / t_max * m.sequence * m.hidden *
           BytesPerElement(dtype);
  };

  Plan plan;
  plan.graph = TaskGraph(gpus);
  if (s.simulation.max_tasks > 0) plan.graph.SetTaskLimit(s.simulation.max_tasks);
  plan.samples_per_iteration = static_cast<double>(tr.global_batch);
  plan.tokens_per_sample = w.tokens_per_sample;
  TaskGraph& g = plan.graph;
  const int compute = g.Stream("compute");
  const int comm = g.Stream("comm");
  TensorLayerEmitter em(g, dtype, compute, false, comm_bytes(0));
  em.SubPipeline(3);
  em.SetSmInterference(sm);
  if (shape.recompute) em.OverlapRecompute();
  std::map<int, Groups> tensor_groups, data_groups;
  for (int t : sub) {
    tensor_groups[t] = TensorGroups(gpus, t);
    data_groups[t] = DataGroups(gpus, t);
  }
  // The re-shard between layers i - 1 and i: an all-gather of the activation (forward, when
  // the degree grows) or of its gradient (backward, when it shrinks) over the trans groups,
  // on the compute stream (the next kernel needs it).
  const auto reshard = [&](int i, Phase phase, int it, const std::string& prefix,
                           std::vector<TaskId>& last) {
    const int before = degree[i - 1], after = degree[i];
    const bool grows = after > before;
    if (before == after || grows != (phase == Phase::kForward)) return;
    const int small = std::min(before, after), large = std::max(before, after);
    const double bytes = static_cast<double>(tr.micro_batch) * large / t_max * m.sequence *
                         m.hidden * BytesPerElement(dtype);
    const std::vector<TaskId> members = AddGroupCollectives(
        g, TransGroups(gpus, small, large), CollectiveKind::kAllGather, bytes, dtype, compute, it,
        Name(prefix + w.layers[i].name +
             (grows ? "/reshard_all_gather" : "/reshard_grad_all_gather")),
        last, "tp_reshard", phase);
    for (int r = 0; r < gpus; ++r) {
      if (members[r] >= 0) last[r] = members[r];
    }
  };

  // Runs of layers at one degree: each all-reduces its gradients once, coalesced.
  struct Run {
    int t;
    double params;
  };
  std::vector<Run> runs;
  for (int i = 0; i < n; ++i) {
    if (runs.empty() || degree[i] != degree[i - 1]) runs.push_back({degree[i], 0});
    runs.back().params += w.layers[i].params;
  }
  const DataParallelOptimizer dpo;
  std::vector<TaskId> last(gpus, -1);
  const int iterations = tr.warmup_iterations + tr.measured_iterations;
  for (int it = 0; it < iterations; ++it) {
    if (it == 0) {
      for (int r = 0; r < gpus; ++r) {
        AddModelStates(g, TaskPlace{r, compute, 0, ""}, w.params, tr.precision, {},
                       dpo.StateGradBytes());
      }
    }
    for (int mb = 0; mb < micro_batches; ++mb) {
      const std::string prefix = "it" + std::to_string(it) + "/mb" + std::to_string(mb) + "/";
      for (int i = 0; i < n; ++i) {
        if (i > 0) reshard(i, Phase::kForward, it, prefix, last);
        em.SetCommBytes(comm_bytes(i));
        em.Forward(w.layers[i], tensor_groups[degree[i]], it, prefix, last);
      }
      std::vector<bool> recomputed(n, false);
      for (int i = n - 1; i >= 0; --i) {
        const Groups& groups = tensor_groups[degree[i]];
        em.SetCommBytes(comm_bytes(i));
        if (!recomputed[i]) em.Recompute(w.layers[i], groups, it, prefix, last);
        em.Backward(w.layers[i], groups, it, prefix, last, /*recomputed=*/true);
        // Cross-pass overlap: the layer before recomputes (locally) while this one's last
        // input-gradient all-reduce runs.
        if (shape.recompute && i > 0 && degree[i - 1] == degree[i] &&
            w.layers[i - 1].recomputable) {
          em.SetCommBytes(comm_bytes(i - 1));
          em.Recompute(w.layers[i - 1], groups, it, prefix, last);
          recomputed[i - 1] = true;
        }
        if (i > 0) reshard(i, Phase::kBackward, it, prefix, last);
      }
    }
    // Oases: one blocking gradient all-reduce per run of layers at one degree, after the
    // backward, over that run's data-parallel groups.
    std::vector<TaskId> reduced = last;
    for (size_t k = 0; k < runs.size(); ++k) {
      if (gpus / runs[k].t < 2) continue;
      const std::vector<TaskId> members = AddGroupCollectives(
          g, data_groups[runs[k].t], CollectiveKind::kAllReduce,
          runs[k].params * dpo.GradBytes(tr.precision), dpo.GradDType(tr.precision), comm, it,
          Name("it" + std::to_string(it) + "/allreduce/run" + std::to_string(k)), last);
      for (int r = 0; r < gpus; ++r) reduced[r] = members[r];
    }
    for (int r = 0; r < gpus; ++r) {
      Task step = AdamStepTask(w.params, tr.precision);
      step.rank = r;
      step.stream = compute;
      step.iteration = it;
      step.name = "it" + std::to_string(it) + "/adam";
      step.deps.push_back(reduced[r]);
      last[r] = g.Add(std::move(step));
    }
  }

  std::string degrees;
  for (const Run& run : runs) degrees += (degrees.empty() ? "" : ", ") + std::to_string(run.t);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "Oases: tensor degree(s) %s by runs of layers, each micro-batch as two "
                "sub-batches; %d micro-batch(es) of %d samples at degree %d; recompute %s; SM "
                "interference %.3g; %.3g M parameters per GPU",
                degrees.c_str(), micro_batches, tr.micro_batch, t_max,
                shape.recompute ? "communication-free" : "off", sm, w.params / 1e6);
  plan.notes.push_back(buf);
  plan.notes.push_back("memory per GPU: model states " +
                       FormatBytes(AdamStateBytes(w.params, tr.precision, {}, 0).Total()) +
                       ", activations " + FormatBytes(PeakActivationBytes(w, 1)));
  return plan;
}

const OptionSpecs& OasesOptions() {
  static const OptionSpecs options = {
      Integer("tensor", 1, limits::kMaxGpus,
              "the tensor-parallel degree of the layers from `cutpoint` on; must divide the GPU "
              "count and the model's (key/value) heads")
          .Derived("the GPUs of a server of the first group"),
      Integer("first_tensor", 1, limits::kMaxGpus,
              "the tensor-parallel degree of the first `cutpoint` layers (more data "
              "parallelism); it and `tensor` must divide one another")
          .Derived("tensor"),
      Integer("cutpoint", 0, limits::kMaxGpus,
              "the layers that run at first_tensor; a re-shard all-gather over the trans groups "
              "joins the two regions")
          .Default("0"),
      Flag("recompute",
           "communication-free recomputation: the forward keeps each sub-layer's input and "
           "all-reduced output, the backward re-runs local kernels only; also on when "
           "model.recompute is full")
          .Default("false"),
      Number("sm_interference", 0, 1,
             "extra work of each compute kernel that runs beside a sub-batch's all-reduce, as a "
             "fraction of its own (NCCL kernels take SMs); mean 0.189 measured by Lee et al. "
             "2025, arXiv 2507.03114")
          .Derived("the calibration's sm_interference for the GPU kind, else 0.189"),
  };
  return options;
}

Plan PlanOases(const Scenario& s, const StrategySpec& spec) {
  OptionReader opt(spec, OasesOptions());
  const int gpus = s.cluster.NumGpus();
  const int per_server = s.cluster.groups.empty() ? 1 : s.cluster.groups.front().gpus_per_server;
  const int t = opt.Int("tensor", std::min(per_server, gpus));
  const int first = opt.Int("first_tensor", t);
  const int cutpoint = opt.Int("cutpoint");
  const ModelSpec& m = s.model;
  if (m.recompute == Recompute::kSelective) {
    throw opt.Fail("recompute",
                   "Oases recomputes whole sub-layers: model.recompute: selective is not "
                   "supported (use full or none)");
  }
  const bool recompute = opt.Bool("recompute") || m.recompute == Recompute::kFull;
  const double sm = opt.Double("sm_interference", OasesSmInterference(s));
  opt.Finish();

  for (const char* key : {"tensor", "first_tensor"}) {
    const int d = std::string(key) == "tensor" ? t : first;
    if (gpus % d != 0) {
      throw opt.Fail(key, std::string(key) + " t=" + std::to_string(d) +
                              " must divide the GPU count (" + std::to_string(gpus) + ")");
    }
    CheckTensorDegree(m, d, opt, key);
  }
  if (cutpoint > m.layers) {
    throw opt.Fail("cutpoint",
                   "must be at most the model's layers (" + std::to_string(m.layers) + ")");
  }
  if (cutpoint > 0 && t % first != 0 && first % t != 0) {
    throw opt.Fail("first_tensor", "first_tensor=" + std::to_string(first) + " and tensor=" +
                                       std::to_string(t) + " must divide one another");
  }
  OasesShape shape = OasesCutpointShape(m.layers, first, t, cutpoint, recompute);
  shape.sm_interference = sm;
  const int t_max = *std::max_element(shape.sublayer_tensor.begin(), shape.sublayer_tensor.end());
  MicroBatchesPerReplica(
      s.training, gpus / t_max,
      "Oases at tensor degree " + std::to_string(t_max) + " on " + std::to_string(gpus) + " GPUs",
      opt);
  const std::string error = OasesShapeError(s, shape);
  if (!error.empty()) throw opt.Fail(t_max == t ? "tensor" : "first_tensor", error);
  return LowerOases(s, shape);
}

}  // namespace stratasim
