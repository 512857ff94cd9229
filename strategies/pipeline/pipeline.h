// Pipeline parallelism: the model's layers split into p stages on p GPUs, each micro-batch's
// activations sent point to point from stage to stage and its gradients sent back.
//
// Schedules (option `schedule`):
//   gpipe        all forwards, then all backwards (last micro-batch first), then a flush and the
//                optimizer step (Huang et al. 2019, "GPipe", Fig. 2c). Stage 0 holds the
//                activations of all m micro-batches at once.
//   1f1b         PipeDream-Flush (Narayanan et al. 2021, "Memory-Efficient Pipeline-Parallel DNN
//                Training", ICML, §3.2): stage s runs min(p - s - 1, m) warm-up forwards, then
//                alternates one forward and one backward, then drains the remaining backwards;
//                stage s holds at most p - s micro-batches' activations. Same bubble as GPipe.
//   interleaved  Megatron-LM's interleaved 1F1B (Narayanan et al. 2021, "Efficient Large-Scale
//                Language Model Training on GPU Clusters Using Megatron-LM", SC, §2.2.2): the
//                layers are split into p * v chunks, chunk c on stage c mod p; the order is that
//                of Megatron's forward_backward_pipelining_with_interleaving (schedules.py). The
//                bubble shrinks to (p - 1) / (v m + p - 1) of the iteration for v times more
//                point-to-point traffic. Needs m to be a multiple of p, as Megatron does.
//   pipedream_2bw  PipeDream-2BW (Narayanan et al. 2021, ICML, §3.1): 1F1B without a flush
//                between iterations (the pipeline fills once); every stage keeps two versions of
//                its weights (one extra 16-bit copy in memory, category "weights") and updates
//                them after the m-th backward of each batch without waiting for other stages.
//                Limit: the step waits for the stage's gradient all-reduce (when d > 1) on the
//                compute stream instead of overlapping it with the next batch.
//
// Options: PipelineOptions(three_d) (pipeline.cpp) declares them; `stratasim strategies pipeline`
// and `stratasim strategies 3d` list them. Kind "3d" is the same planner with tensor, stages
// and data all required, stages >= 1, and schedule 1f1b by default.
//
// Boundary traffic: the input activation of the next stage's first layer
// (LayerCost::input_bytes: micro_batch x sequence x hidden x dtype bytes for a transformer,
// / t with sequence parallelism); when unknown, micro_batch x tokens_per_sample x hidden x
// dtype bytes. The same size goes back as its gradient. Sends and receives run on their own
// streams per direction ("p2p_fwd_send", "p2p_fwd_recv", "p2p_bwd_send", "p2p_bwd_recv"), as
// NCCL's non-blocking send/recv do, so they overlap compute (stream "compute").
//
// Memory per rank: model states of the stage's parameters (mixed-precision Adam; / t), and
// activations allocated at each forward and freed at the matching backward. The data-parallel
// all-reduce runs on stream "dp"; each replica's Adam step follows it. Kind 3d also takes the
// distributed optimizer (strategies/distributed_optimizer.h) and tp_comm_overlap
// (strategies/tensor/tp_layer.h).
#ifndef STRATASIM_STRATEGIES_PIPELINE_PIPELINE_H_
#define STRATASIM_STRATEGIES_PIPELINE_PIPELINE_H_

#include <string>
#include <utility>
#include <vector>

#include "models/workload.h"
#include "strategies/plan.h"

namespace stratasim {

Plan PlanPipeline(const Scenario& s, const StrategySpec& spec);
// The options of kind "pipeline", or of kind "3d" when `three_d`.
const OptionSpecs& PipelineOptions(bool three_d);

// Reads and checks the degrees and the settings every pipelined plan shares, as kinds pipeline
// and 3d declare them (PipelineOptions): stages, tensor, data (and context, the training-stack
// options for `three_d`), rank_order, sequence_parallel, scatter_gather, dp_overlap,
// bucket_size. The schedule, micro-batches and partition are left to the caller.
struct PipelineShape;
PipelineShape ReadPipelineDegrees(const Scenario& s, OptionReader& opt, bool three_d);
// Option micro_batches, or by default global_batch / (micro_batch x data) (an error when that is
// not an integer).
int ReadMicroBatches(const Scenario& s, OptionReader& opt, int data);

// One step of a stage's schedule: the forward or backward of micro-batch `micro_batch` through
// the stage's model chunk `chunk` (0 <= chunk < v; global chunk chunk * p + stage).
struct PipelineOp {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
  // Merak's schedules (merak_schedule.cpp). A checkpointed forward keeps only the inputs of the
  // stage's recomputable layers, whatever the stage's recomputation; a recompute op (forward
  // false) re-runs their forward before the micro-batch's gradient arrives, and its backward
  // then does not re-run it.
  bool checkpoint = false;
  bool recompute = false;
  bool operator==(const PipelineOp& o) const {
    return forward == o.forward && micro_batch == o.micro_batch && chunk == o.chunk &&
           checkpoint == o.checkpoint && recompute == o.recompute;
  }
};

// The order in which `stage` of `stages` runs `micro_batches` micro-batches (`virtual_stages`
// chunks per stage; 1 unless interleaved). `schedule`: gpipe | 1f1b | interleaved |
// pipedream_2bw (the latter's order within one batch is 1F1B's), or one of Merak's
// (IsMerakSchedule).
std::vector<PipelineOp> PipelineSchedule(const std::string& schedule, int stages, int stage,
                                         int micro_batches, int virtual_stages);

// Merak's 1F1B variants (Lai et al. 2023, "Merak: An Efficient Distributed DNN Training
// Framework with Automated 3D Parallelism for Giant Foundation Models", TPDS, §4.1;
// merak_schedule.cpp): last_no_recompute, pre_recompute, shifted_critical_path. One chunk per
// stage; the last two need micro_batches >= stages (shifted_critical_path also >= 4), which
// MerakSchedule checks (stratasim::Error).
bool IsMerakSchedule(const std::string& schedule);
// Whether `schedule` keeps the last stage from recomputing (last_no_recompute,
// shifted_critical_path): its lowering builds that stage without recomputation.
bool LastStageNeverRecomputes(const std::string& schedule);
std::vector<PipelineOp> MerakSchedule(const std::string& schedule, int stages, int stage,
                                      int micro_batches);

// The first and last index in w.layers of the repeated blocks (the contiguous recomputable
// layers: transformer layers, CNN blocks), or of all layers when they are not contiguous.
std::pair<int, int> RepeatedBlocks(const Workload& w);

// Stage (chunk) boundaries from layer counts such as "6,6,6,6" over the repeated blocks, the
// embedding joining the first part and the head the last; raises opt.Fail("partition", ...)
// when the text or the counts are wrong.
std::vector<int> PartitionFromCounts(const Workload& w, const std::string& text, int parts,
                                     OptionReader& opt);

// Contiguous split of `w`'s layers into `parts` parts minimising the largest forward FLOPs.
// Returns the index of each part's first layer, followed by w.layers.size().
std::vector<int> EvenPartition(const Workload& w, int parts);

// Contiguous split into stages x virtual_stages chunks for the interleaved schedule (chunk c
// on stage c mod stages) balancing the stages' forward FLOPs, each the sum of its chunks.
std::vector<int> EvenInterleavedPartition(const Workload& w, int stages, int virtual_stages);

// Compact form, e.g. "F0 B0 ..." ("F3" forward of micro-batch 3, "B3c1": chunk 1, "F3*" a
// checkpointed forward, "R3" a recompute), for tests.
std::string ScheduleString(const std::vector<PipelineOp>& ops);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PIPELINE_PIPELINE_H_
