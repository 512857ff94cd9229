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
// Options:
//   stages          p >= 2; p must divide the GPU count, d = GPUs / p data-parallel replicas.
//                   Rank of stage s of replica r: r * p + s, so that a replica's consecutive
//                   stages sit on consecutive ranks, inside a server when it has >= p GPUs.
//   micro_batches   m; default global_batch / (micro_batch * d), which must then be an integer.
//                   Samples per iteration are m * micro_batch * d.
//   schedule        gpipe (default) | 1f1b | interleaved | pipedream_2bw.
//   virtual_stages  v >= 2 for interleaved (default 2); not allowed for the other schedules.
//   partition       "even" (default): contiguous stages (chunks for interleaved) minimising
//                   the largest forward FLOPs of a stage; or layer counts per stage (per chunk
//                   for interleaved) such as "6,6,6,6". The counts are over the workload's
//                   repeated blocks (layers with recomputation, i.e. transformer layers or CNN
//                   blocks); the layers before the first block (embedding) join the first stage
//                   and those after the last (head) the last stage, as Megatron-LM places them.
//
// Boundary traffic: the input activation of the next stage's first layer
// (LayerCost::input_bytes: micro_batch x sequence x hidden x dtype bytes for a transformer);
// when unknown, micro_batch x tokens_per_sample x hidden x dtype bytes. The same size goes back
// as its gradient. Sends and receives run on their own streams per direction ("p2p_fwd_send",
// "p2p_fwd_recv", "p2p_bwd_send", "p2p_bwd_recv"), as NCCL's non-blocking send/recv do, so
// they overlap compute (stream "compute").
//
// Memory per rank: model states of the stage's parameters (mixed-precision Adam), activations
// allocated at each forward and freed at the matching backward. After the last backward of a
// stage (the flush), when d > 1, one gradient all-reduce per stage over its replicas (stream
// "dp"), then the stage's Adam step.
#ifndef STRATASIM_STRATEGIES_PIPELINE_PIPELINE_H_
#define STRATASIM_STRATEGIES_PIPELINE_PIPELINE_H_

#include <string>
#include <vector>

#include "models/workload.h"
#include "strategies/plan.h"

namespace stratasim {

Plan PlanPipeline(const Scenario& s, const StrategySpec& spec);

// One step of a stage's schedule: the forward or backward of micro-batch `micro_batch` through
// the stage's model chunk `chunk` (0 <= chunk < v; global chunk chunk * p + stage).
struct PipelineOp {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
  bool operator==(const PipelineOp& o) const {
    return forward == o.forward && micro_batch == o.micro_batch && chunk == o.chunk;
  }
};

// The order in which `stage` of `stages` runs `micro_batches` micro-batches (`virtual_stages`
// chunks per stage; 1 unless interleaved). `schedule`: gpipe | 1f1b | interleaved |
// pipedream_2bw (the latter's order within one batch is 1F1B's).
std::vector<PipelineOp> PipelineSchedule(const std::string& schedule, int stages, int stage,
                                         int micro_batches, int virtual_stages);

// Contiguous split of `w`'s layers into `parts` parts minimising the largest forward FLOPs.
// Returns the index of each part's first layer, followed by w.layers.size().
std::vector<int> EvenPartition(const Workload& w, int parts);

// Compact form, e.g. "ff fb ..." ("F3" forward of micro-batch 3, "B3c1": chunk 1), for tests.
std::string ScheduleString(const std::vector<PipelineOp>& ops);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PIPELINE_PIPELINE_H_
