#include "strategies/planners/profile.h"

#include <algorithm>

#include "core/compute_model.h"
#include "strategies/layer_tasks.h"
#include "strategies/pipeline/stage_workload.h"
#include "strategies/tensor/tp_layer.h"

namespace stratasim::planners {
namespace {

// Seconds of `cost` run alone on `gpu` (0 for an empty kernel).
double KernelSeconds(const OpCost& op, const KernelCost& cost, DType dtype, const GpuSpec& gpu,
                     const SimulationSpec& sim) {
  if (cost.empty()) return 0;
  return ComputeTaskSeconds(KernelTask(TaskPlace{}, op.name, op.kind, dtype, cost, Phase::kForward),
                            gpu, sim);
}

// A ring collective of `bytes` over `t` GPUs of one server: `passes` x (t - 1) steps of
// bytes / t each (1 pass for a reduce-scatter or an all-gather, 2 for an all-reduce; Thakur et
// al. 2005, NCCL's ring).
double RingSeconds(double bytes, int t, int passes, double bandwidth, double latency) {
  if (t <= 1 || bandwidth <= 0) return 0;
  const double steps = passes * (t - 1.0);
  return steps * (bytes / t / bandwidth + latency);
}

// The achievable GPU-to-GPU bandwidth inside a server of `g` and its latency.
LinkSpec IntraLink(const ServerGroup& g) {
  if (g.nvswitch) return g.nvswitch->link;
  if (g.nvlink) return g.nvlink->link;
  if (g.pcie) return g.pcie->link;
  return LinkSpec{};
}

}  // namespace

Workload PlannerBlocks(const Scenario& s, int tensor, bool sequence_parallel, int micro_batch) {
  PipelineShape o;
  o.t = tensor;
  o.sp = sequence_parallel;
  StageWorkloadChoice choice;
  choice.micro_batch = micro_batch;
  choice.sub_layers = true;
  choice.recompute = Recompute::kNone;
  return PipelineStageWorkload(s, o, choice);
}

CostProfile ProfileBlocks(const Scenario& s, const Workload& blocks, int tensor,
                          bool sequence_parallel) {
  CostProfile p;
  p.micro_batch = blocks.micro_batch;
  p.tensor = tensor;
  p.state_bytes_per_param = AdamStateBytesPerParam(s.training.precision);
  const DType dtype = blocks.dtype;
  // One tensor-parallel collective moves b s h elements (TensorLayerEmitter's comm_bytes).
  const double comm_bytes = static_cast<double>(blocks.micro_batch) * s.model.sequence *
                            s.model.hidden * BytesPerElement(dtype);
  // Each GPU kind once, in the order the server groups name them; a tensor group's links are
  // those of the first group of its kind.
  for (int gi = 0; gi < static_cast<int>(s.cluster.groups.size()); ++gi) {
    const GpuSpec& gpu = s.cluster.GpuOfGroup(gi);
    if (std::find(p.kinds.begin(), p.kinds.end(), gpu.name) != p.kinds.end()) continue;
    const LinkSpec link = IntraLink(s.cluster.groups[gi]);
    auto collective = [&](int passes) {
      return RingSeconds(comm_bytes, tensor, passes, link.bandwidth_Bps, link.latency_s);
    };
    // With sequence parallelism a reduce-scatter replaces each all-reduce and an all-gather
    // comes before each column-parallel GEMM (forward) and row-parallel GEMM (backward).
    const double reduce = collective(sequence_parallel ? 1 : 2);
    const double gather = sequence_parallel ? collective(1) : 0;
    p.kinds.push_back(gpu.name);
    std::vector<BlockCost>& costs = p.costs.emplace_back();
    for (size_t i = 0; i < blocks.layers.size(); ++i) {
      const LayerCost& L = blocks.layers[i];
      BlockCost b;
      b.name = L.name;
      for (const OpCost& op : L.ops) {
        b.forward_s += KernelSeconds(op, op.forward, dtype, gpu, s.simulation);
        b.backward_s += KernelSeconds(op, op.backward_input, dtype, gpu, s.simulation) +
                        KernelSeconds(op, op.backward_weight, dtype, gpu, s.simulation);
        if (tensor > 1 && IsRowParallel(op)) b.forward_s += reduce, b.backward_s += gather;
        if (tensor > 1 && IsColumnParallel(op)) b.forward_s += gather, b.backward_s += reduce;
      }
      b.recomputable = L.recomputable;
      b.recompute_s = L.recomputable ? b.forward_s : 0;
      b.activation_bytes = L.activation_bytes;
      b.checkpoint_bytes = L.input_bytes;
      b.params = L.params;
      b.output_bytes = i + 1 < blocks.layers.size() ? blocks.layers[i + 1].input_bytes : 0;
      costs.push_back(b);
    }
  }
  return p;
}

ClusterView ViewCluster(const Scenario& s, const CostProfile& profile) {
  const ClusterSpec& c = s.cluster;
  ClusterView v;
  int nic_base = 0, switch_base = 0;
  for (int gi = 0; gi < static_cast<int>(c.groups.size()); ++gi) {
    const ServerGroup& g = c.groups[gi];
    const GpuSpec& gpu = c.GpuOfGroup(gi);
    const int gpus_per_nic = std::max(1, g.gpus_per_server / std::max(1, g.nics.count));
    const LinkSpec intra = IntraLink(g);
    const int kind = static_cast<int>(std::find(profile.kinds.begin(), profile.kinds.end(), g.gpu) -
                                      profile.kinds.begin());
    const int switches =
        g.pcie ? (g.gpus_per_server + g.pcie->gpus_per_switch - 1) / g.pcie->gpus_per_switch : 0;
    for (int server = 0; server < g.count; ++server) {
      const int index = v.Servers();
      v.intra_Bps.push_back(intra.bandwidth_Bps);
      v.intra_latency_s = std::max(v.intra_latency_s, intra.latency_s);
      for (int n = 0; n < g.nics.count; ++n) v.nic_Bps.push_back(g.nics.link.bandwidth_Bps);
      v.inter_latency_s =
          std::max(v.inter_latency_s, g.nics.link.latency_s * 2 + c.network.switch_latency_s);
      for (int local = 0; local < g.gpus_per_server; ++local) {
        ClusterView::Device d;
        d.kind = kind;
        d.server = index;
        d.nic = nic_base + std::min(g.nics.count - 1, local / gpus_per_nic);
        d.pcie_switch = g.pcie ? switch_base + local / g.pcie->gpus_per_switch : -1;
        d.memory_bytes = gpu.memory_bytes;
        d.peak_flops = gpu.Peak(DType::kFP16);
        v.devices.push_back(d);
      }
      nic_base += g.nics.count;
      switch_base += switches;
    }
  }
  return v;
}

PlannerInput BuildPlannerInput(const Scenario& s, const PlannerDegrees& d) {
  PlannerInput in;
  const Workload blocks = PlannerBlocks(s, d.tensor, d.sequence_parallel, s.training.micro_batch);
  in.profile = ProfileBlocks(s, blocks, d.tensor, d.sequence_parallel);
  in.cluster = ViewCluster(s, in.profile);
  in.stages = d.stages;
  in.tensor = d.tensor;
  in.data = d.data;
  in.micro_batches = d.micro_batches;
  return in;
}

}  // namespace stratasim::planners
