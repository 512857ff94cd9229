// Shrink to fit (`stratasim validate --fit`, docs/validate.md "Shrink to fit"): a scenario with
// more GPUs than the validate run has ranks is validated on a smaller copy of each plan that
// keeps the plan's shape.
//
// What is kept: the tensor degree t, the context degree c, the pipeline stages p (unless
// dropping them is allowed), the rank order, every option of the strategy, the micro-batch and
// the work of one data-parallel replica. What is dropped, in this order:
//   1. data-parallel replicas: d -> d' = floor(ranks / (t x c x p)); the global batch is scaled
//      by d'/d so that each replica runs the same micro-batches as in the full plan;
//   2. only with `--fit dp,pp`, when not even one replica fits: pipeline stages, p -> p' =
//      floor(ranks / (t x c)) with the same transformer layers in each kept stage as the full
//      plan's partition gave it, so the model loses the dropped stages' layers (the output head
//      moves onto the new last stage).
// Each kept position (replica, stage, tensor index, context index) has the same coordinates in
// both plans; with the default order "tpd" the shrunk plan's rank r is the full plan's rank r.
//
// Kinds whose shape cannot be kept are refused with the reason (FitRefused), never silently
// changed: planners that choose their layout from the cluster they are given (dapple, piper,
// autopipe, autopipe-h, hph, merak, hsdp, oases with planner: ilp), expert parallelism (the
// experts are spread over every GPU), parameter servers (placed per server) and Chakra traces
// (one per NPU). A kind this file does not know is refused too.
#ifndef STRATASIM_VALIDATE_FIT_H_
#define STRATASIM_VALIDATE_FIT_H_

#include <string>
#include <vector>

#include "core/error.h"
#include "core/scenario.h"

namespace stratasim::validate {

// What --fit may drop: data-parallel replicas always, pipeline stages when `stages`.
struct FitPolicy {
  bool stages = false;
};

// --fit's value: "dp" (also "", the flag alone) or "dp,pp". Throws Error naming the accepted
// values otherwise.
FitPolicy ParseFitPolicy(const std::string& text);

// The degrees of a plan: tensor x context x stages x data = its GPUs.
struct PlanShape {
  int tensor = 1;
  int context = 1;
  int stages = 1;
  int data = 1;
  std::string order = "tpd";  // strategies/parallel_layout.h
};

// A strategy that cannot be shrunk, with why; what() is located at the strategy's kind
// ("file:line:col: strategies[2].kind = \"hph\": ...").
class FitRefused : public Error {
 public:
  using Error::Error;
};

struct Fit {
  bool shrunk = false;  // false: the plan fits as it is, and `scenario`/`strategy` are the input
  // The scenario to plan and validate: the cluster's first `gpus` GPUs (whole servers, then a
  // part of one), the global batch scaled, with pipeline stages dropped the model's layers cut;
  // `strategies` holds `strategy` only.
  Scenario scenario;
  // The strategy with its degrees written out (a derived degree would be derived again from the
  // smaller cluster) and the data (or stages) option reduced.
  StrategySpec strategy;
  PlanShape full, fitted;
  int full_gpus = 0;
  int gpus = 0;
  // full_rank[r]: the rank of the full plan whose (replica, stage, tensor, context) position the
  // shrunk plan's rank r holds.
  std::vector<int> full_rank;
  // What changed, one item each, for the report: "data-parallel replicas 4 -> 1",
  // "GPUs 16 -> 4 (servers 2 -> 1)", "global batch 256 -> 64 (64 per replica, as before)", ...
  std::vector<std::string> changes;
};

// Shrinks strategy `spec` of scenario `s` to at most `ranks` ranks: the number a validate run
// has (one process: the backend's NumRanks(); under mpirun: the processes). Throws FitRefused
// when the shape cannot be kept or even t x c x p (x 1 replica) does not fit, and ConfigError
// for options the planner would reject anyway.
Fit FitToRanks(const Scenario& s, const StrategySpec& spec, int ranks, const FitPolicy& policy);

// The changes joined with "; ", or "" when nothing was shrunk.
std::string DescribeFit(const Fit& f);

// The first `gpus` GPUs of `c` in rank order: whole servers of the groups in order, then the
// first GPUs of one more server (its NICs, PCIe switches and NVLink pairs cut to those GPUs);
// stragglers of dropped GPUs and servers are dropped. Throws Error when gpus is not in
// [1, c.NumGpus()].
ClusterSpec FirstGpus(const ClusterSpec& c, int gpus);

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_FIT_H_
