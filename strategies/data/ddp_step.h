// The step of PyTorch DDP (strategies/data/ddp.h) that every data-parallel kind shares: the
// model states, the micro-batches' forward and backward passes with gradient accumulation, the
// folding of identical replicas and the Adam step; what happens to the gradients between the
// backward pass and Adam (DDP's bucket all-reduces, or a compressor's encode, payloads and
// decode: strategies/comm/) is the caller's Exchange.
#ifndef STRATASIM_STRATEGIES_DATA_DDP_STEP_H_
#define STRATASIM_STRATEGIES_DATA_DDP_STEP_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/workload.h"
#include "strategies/layer_tasks.h"
#include "strategies/plan.h"

namespace stratasim {

// DDP's options (DdpOptions()) as read.
struct DdpSettings {
  double bucket_cap_bytes = 0;
  bool overlap = true;
  std::string algorithm = "auto";
  bool bucket_view = false;
};
DdpSettings ReadDdpSettings(OptionReader& opt);

// One iteration's gradients as the backward pass leaves them on the simulated ranks.
struct GradientsReady {
  int iteration = 0;
  // [rank][layer]: the task after which rank r's gradients of `layer` are final (-1 on ranks
  // that are not simulated, past the fold block).
  std::vector<std::vector<TaskId>> after_layer;
  std::vector<TaskId> backward_end;  // [rank]
};

class DdpStep {
 public:
  // Reads nothing more from `opt` than the training's micro-batching (its errors located at
  // the strategy); builds the workload.
  DdpStep(const Scenario& s, const DdpSettings& o, const OptionReader& opt);

  const Workload& workload() const { return w_; }
  const DdpSettings& settings() const { return o_; }
  int gpus() const { return gpus_; }
  int micro_batches() const { return micro_batches_; }
  double grad_bytes() const { return grad_bytes_; }  // per parameter, as all-reduced
  DType act() const { return act_; }                 // of kernels and gradients
  DType precision() const { return s_.training.precision; }

  // Before Lower: a kind that changes the kernels (layer-wise precision, strategies/precision/)
  // gives its own workload, built from workload().
  void ReplaceWorkload(Workload w) { w_ = std::move(w); }

  // Refuse folding (before Lower) when the replicas are not identical: `why` for the report.
  void RefuseFold(const std::string& why) { fold_refusal_ = why; }

  // What the exchange of one iteration adds; it returns, per rank (every rank, those past the
  // fold block ignored), the tasks that rank's Adam step waits for.
  using Exchange = std::function<std::vector<std::vector<TaskId>>(const GradientsReady&)>;
  // Memory a rank holds from the start besides its model states (at: rank, compute stream).
  using StartMemory = std::function<void(TaskGraph&, const TaskPlace&)>;
  // Lowers warm-up + measured iterations and returns the plan with DDP's common notes
  // (micro-batches) to which the caller adds its own.
  Plan Lower(const Exchange& exchange, const StartMemory& start_memory);

  // During Lower: the graph, the communication stream, the ranks simulated in full ([0, block))
  // and the ranks in ring order.
  TaskGraph& graph() { return plan_.graph; }
  int comm_stream() const { return comm_; }
  int compute_stream() const { return compute_; }
  int block() const { return block_; }
  const std::vector<int>& all_ranks() const { return all_; }
  // The task after which rank r's gradients of `layer` may be sent: as soon as they are final
  // with `overlap`, else at the end of the backward pass.
  TaskId ReadyAfter(const GradientsReady& ready, int r, int layer) const;
  // Adds a collective over every rank, one member per rank on the communication stream (ranks
  // past the block mirror their representative), member r after deps(r) on simulated ranks.
  std::vector<TaskId> AddCollective(Collective c, int iteration, const std::string& name,
                                    const std::string& category,
                                    const std::function<std::vector<TaskId>(int r)>& deps);
  // DDP's all-reduce of `bytes` of gradients of the bucket completed by `layer`.
  std::vector<TaskId> AddBucketAllReduce(const GradientsReady& ready, int layer, double bytes,
                                         const std::string& name);

 private:
  const Scenario& s_;
  DdpSettings o_;
  int gpus_ = 0;
  int micro_batches_ = 0;
  Workload w_;
  double grad_bytes_ = 0;
  DType act_ = DType::kBF16;
  std::string fold_refusal_;
  Plan plan_;
  int compute_ = -1, comm_ = -1;
  int block_ = 0;
  std::vector<int> all_;
};

// DDP's notes on its buckets, parameters and memory, for a plan that all-reduces `grad_total`
// bytes in `buckets` buckets per iteration.
void AddDdpNotes(const DdpStep& step, size_t buckets, double grad_total, Plan& plan);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_DATA_DDP_STEP_H_
