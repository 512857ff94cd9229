// The one interface of the pipeline and 3D planners of the studied papers (AutoPipe, AutoPipe-H,
// Merak, HPH, and their baselines DAPPLE and Piper; docs/strategies.md, "Pipeline planners").
//
// A planner is a pure, deterministic function from a PlannerInput to a PlannedPipeline:
//   in:  a cost profile of the model's sub-layer blocks (a transformer layer's attention half and
//        its MLP half separately, the embedding, the head) on every GPU kind of the cluster: the
//        forward, backward and recomputation times of one micro-batch, and the activation,
//        parameter and boundary bytes (profile.h builds it from the cost model,
//        core/compute_model.h, which a calibration file written by validate mode overrides);
//        and a view of the cluster: each GPU's kind, memory, server, NIC and PCIe switch, and
//        the links' bandwidths;
//   out: the partition of the blocks into stages, the stage -> GPU mapping, the schedule, what
//        each stage recomputes, the micro-batch sizes, and what the planner predicted.
// The lowering (lower_plan.h) turns the plan into a task graph with the existing pipeline/3D
// lowering (strategies/pipeline/pipeline_lowering.h), and the simulator measures what the
// planner chose: a planner's own cost model only decides, it never reports the time.
#ifndef STRATASIM_STRATEGIES_PLANNERS_PLANNER_H_
#define STRATASIM_STRATEGIES_PLANNERS_PLANNER_H_

#include <string>
#include <vector>

namespace stratasim::planners {

// One block's costs for one micro-batch on one GPU of its stage's tensor group.
struct BlockCost {
  std::string name;       // "embedding", "layer3.attn", "layer3.mlp", "head"
  double forward_s = 0;   // the forward kernels (tensor-parallel collectives included)
  double backward_s = 0;  // the input- and weight-gradient kernels (and collectives)
  // Seconds the forward takes again when the block is fully recomputed (0: not recomputable).
  double recompute_s = 0;
  double activation_bytes = 0;  // kept from the forward to the backward without recomputation
  double checkpoint_bytes = 0;  // kept with full recomputation: the block's input
  double params = 0;            // parameters held by one GPU of the tensor group
  // The activation a stage that ends with this block sends to the next (per GPU of the group);
  // its gradient comes back with the same size.
  double output_bytes = 0;
  bool recomputable = false;
};

// The blocks' costs on each GPU kind of the cluster; the same blocks in the same order for each.
struct CostProfile {
  std::vector<std::string> kinds;             // GPU kind names, as ClusterView::Device::kind
  std::vector<std::vector<BlockCost>> costs;  // [kind][block]
  int micro_batch = 1;                        // samples the costs are for
  int tensor = 1;                             // tensor-parallel degree they are sharded for
  // Model-state bytes per parameter (mixed-precision Adam: 16 for BF16/FP16 training).
  double state_bytes_per_param = 16;

  int Blocks() const { return costs.empty() ? 0 : static_cast<int>(costs.front().size()); }
};

// The cluster as the planners see it. Ranks are the cluster's (core/cluster.h: server-major).
struct ClusterView {
  struct Device {
    int kind = 0;          // index into CostProfile::kinds
    int server = 0;        // global server index
    int nic = 0;           // global index of the NIC it sends through
    int pcie_switch = -1;  // global index of its PCIe switch; -1 when it has none
    double memory_bytes = 0;
    double peak_flops = 0;  // dense 16-bit peak, for speed ratios
  };
  std::vector<Device> devices;    // by rank
  std::vector<double> intra_Bps;  // per server: achievable GPU-to-GPU bandwidth inside it
  std::vector<double> nic_Bps;    // per NIC: achievable bandwidth per direction
  double intra_latency_s = 0, inter_latency_s = 0;

  int Gpus() const { return static_cast<int>(devices.size()); }
  int Servers() const { return static_cast<int>(intra_Bps.size()); }
};

struct PlannerInput {
  CostProfile profile;
  ClusterView cluster;
  // The degrees the strategy fixed (stages x tensor x data = GPUs); micro-batches per replica
  // and iteration, each of profile.micro_batch samples.
  int stages = 1, tensor = 1, data = 1;
  int micro_batches = 1;
  // The share of each GPU's memory a plan may fill (the rest is the framework's and the
  // allocator's): plans whose predicted peak exceeds it are not chosen.
  double memory_fraction = 1;
};

// What a planner decided, for lower_plan.h to lower.
struct PlannedPipeline {
  int stages = 1, tensor = 1, data = 1;
  // Index of each stage's first block, then the block count (stages + 1 entries, increasing).
  std::vector<int> bounds;
  // ranks[(replica * stages + stage) * tensor + tensor_index]: the GPU of each position; empty:
  // the default order (tensor fastest, then stages, then replicas).
  std::vector<int> ranks;
  // A schedule the pipeline lowering knows (strategies/pipeline/pipeline.h), or one of Merak's.
  std::string schedule = "1f1b";
  // Per block: whether it is fully recomputed (empty: none is).
  std::vector<bool> recompute;
  // Samples of each micro-batch of one replica's iteration, in order (empty: micro_batches of
  // profile.micro_batch each). AutoPipe's slicer splits the first ones.
  std::vector<int> micro_batch_sizes;
  int micro_batches = 1;  // when micro_batch_sizes is empty
  // Merak's sub-pipelined tensor parallelism: 0 off, levels 1-3.
  int tp_subpipeline = 0;

  // What the planner predicted and how long it took, for the report and the notes.
  std::vector<double> stage_seconds;  // forward + backward of one micro-batch per stage
  double predicted_seconds = 0;       // the planner's own estimate of the iteration
  double planning_seconds = 0;        // wall time of the planning (not of building the profile)
  std::vector<std::string> notes;     // why it chose what it chose
};

// Helpers every planner shares (planner.cpp).

// Throws stratasim::Error naming what is inconsistent in `in` for a pipeline planner: its
// degrees, the profile's kinds and blocks, the devices' kinds, servers and NICs.
void CheckPlannerInput(const PlannerInput& in);

// Prefix sums of forward + backward seconds of `costs` (size n + 1).
std::vector<double> PrefixTimes(const std::vector<BlockCost>& costs);
// Forward + backward (+ recomputation where `recompute` says) seconds of blocks [first, end).
double RangeSeconds(const std::vector<BlockCost>& costs, int first, int end,
                    const std::vector<bool>& recompute = {});
// Peak bytes one GPU of a stage holding blocks [first, end) needs: its model states plus
// `in_flight` micro-batches' activations (checkpoint bytes for the recomputed blocks, and one
// recomputed block's full activations while its backward runs).
double StageMemoryBytes(const CostProfile& profile, int kind, int first, int end, int in_flight,
                        const std::vector<bool>& recompute = {});
// "6,7,7,6": the blocks per stage of `bounds`.
std::string PartitionText(const std::vector<int>& bounds);

}  // namespace stratasim::planners

#endif  // STRATASIM_STRATEGIES_PLANNERS_PLANNER_H_
