// The lowering of PyTorch-DDP-style data parallelism (strategies/data/ddp.h), shared by the
// kinds that run DDP's schedule over a changed workload or changed gradient sizes (layer-wise
// precision, strategies/precision/).
//
// Every GPU runs its micro-batches' forward and backward passes on a compute stream; during the
// last micro-batch's backward, each gradient bucket is all-reduced over all GPUs on a
// communication stream once its layers' gradients are final (or after the backward pass without
// overlap); optionally a decode kernel per bucket follows its all-reduce on the compute stream;
// the Adam step runs after every bucket.
#ifndef STRATASIM_STRATEGIES_DATA_DATA_PARALLEL_H_
#define STRATASIM_STRATEGIES_DATA_DATA_PARALLEL_H_

#include <string>
#include <vector>

#include "core/strategy_options.h"
#include "models/workload.h"
#include "strategies/gradient_buckets.h"
#include "strategies/plan.h"

namespace stratasim {

// DDP's options (DdpOptions(), strategies/data/ddp.cpp), read.
struct DdpSettings {
  double bucket_cap_bytes = 0;
  bool overlap = true;
  std::string algorithm;
  bool gradient_as_bucket_view = false;
};

// Reads DdpOptions()'s options from `opt`, whose kind must declare them (it may declare more;
// the caller calls opt.Finish()).
DdpSettings ReadDdpSettings(OptionReader& opt);

// What each GPU runs and sends.
struct DataParallelWork {
  Workload workload;                    // one micro-batch's kernels
  std::vector<GradientBucket> buckets;  // GradientBucket::bytes is what each all-reduce moves
  // Per bucket (empty: none), the device-memory bytes of a memory-bound kernel that runs on
  // the compute stream after the bucket's all-reduce and before the optimizer step (e.g.
  // dequantizing a low-precision gradient); a bucket with 0 has none.
  std::vector<double> decode_bytes;
};

// Lowers `work` with DDP's schedule: warm-up + measured iterations of `micro_batches`
// micro-batches per GPU, on all GPUs of `s`, folded where strategies/fold.h allows. Adds DDP's
// notes (micro-batches, buckets, parameters, memory).
Plan LowerDataParallel(const Scenario& s, const DdpSettings& o, const DataParallelWork& work,
                       int micro_batches);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_DATA_DATA_PARALLEL_H_
