// The device work of a compressor's encode and decode: bytes of device-memory traffic (and the
// arithmetic where it is not negligible) from each mechanism, as compute tasks of kind
// elementwise that the executor's roofline (core/compute_model.h) turns into time. A GPU kind
// whose calibration lists the method (core/calibration.h, `compression:`) gets the measured time
// instead: CalibratedCodecBytes gives the byte count that the roofline turns into exactly it.
//
// Terms, for one worker: a gradient of n = rows x cols elements of v bytes (the training's
// gradient bytes, 2 in BF16); z of its rows non-zero on this worker, u on some worker (the
// union), z_max the most of any worker; W workers; FP32 sketches, tables, norms and scales.
// Reads and writes are counted once each; a read-modify-write counts twice.
//   coo        encode: gather the z rows into the send block: read z cols v, write z (cols v + i)
//              decode: scatter-add every worker's padded block into the dense gradient: read
//              W z_max (cols v + i), read-modify-write W z_max cols v
//   omnireduce encode: the row bitmap (write rows / 8) and the gather of the union rows once the
//              bitmap is known (read u cols v, write u cols v; placed before the bitmap
//              all-reduce: a copy moved across one small collective)
//              decode: scatter the summed union rows back: read u cols v, write u cols v
//   s2reducer  encode: zero the r x c table (write 4rc), read the z cols values and
//              read-modify-write r FP32 counters each (Ge et al., S2 Reducer: scatter-add over the
//              non-zeros, O(nnz r)), write the bitmap (rows / 8)
//              decode: read the summed bitmap (rows / 8), for the u cols elements of the union rows
//              read r counters (the median over r) and write the value: u cols (4r + v)
//   casq       encode: read n values, K = 2^q distances each (2K FLOPs: subtract and compare),
//              write the n q / 8 code bytes, read-modify-write a bucket's FP32 sum and count
//              (16 bytes), zero the tables first (8 T for T buckets); the k-means of sampled
//              values every 100 iterations is left out (CASQ, LSSkernel.cu)
//              decode: one fused pass over the W workers' codes and bucket means (W n (q / 8 + 4)),
//              one add per worker and element (W n FLOPs), write n v (the authors' shared-memory
//              tree reduction over workers)
//   topk       encode: a radix select reads the values twice (2 n v), write k (v + i)
//              decode: zero the output (n v), scatter-add the W k entries: read W k (v + i),
//              read-modify-write W k v
//   qsgd       encode: the bucket norms (read n v), stochastic rounding (read n v), write the
//              payload; terngrad and uniform-int8 likewise (a max pass, then the quantization)
//              decode: one fused pass over the W payloads (one add per worker and element:
//              W n FLOPs), write n v
//   fp16, fp8  encode: a cast (read n v, write the n-element payload); decode: the cast back
//              (read the payload, write n v); the sum runs inside the all-reduce
#ifndef STRATASIM_STRATEGIES_COMM_CODEC_WORK_H_
#define STRATASIM_STRATEGIES_COMM_CODEC_WORK_H_

#include "core/compression.h"
#include "core/hardware.h"
#include "core/scenario.h"

namespace stratasim {

// One compressed gradient of one step, as seen by one worker.
struct CodecInput {
  GradientShape shape;
  double value_bytes = 2;
  int workers = 1;
  long long nonzero_rows = 0;  // z: this worker's non-zero rows
  RowSparsity rows;            // z_max and u over the workers
};

struct CodecWork {
  double bytes = 0;  // device-memory traffic
  double flops = 0;  // FP32 arithmetic, where it is not negligible against the bytes
};

CodecWork EncodeWork(const CompressionSpec& spec, const CodecInput& in);
CodecWork DecodeWork(const CompressionSpec& spec, const CodecInput& in);

// The bytes a memory-bound task needs to take `seconds` on `gpu` under `sim`: the roofline
// charges bytes / (memory bandwidth x memory efficiency) + kernel launch (core/compute_model.h,
// with the calibration's efficiency and launch where it gives them), so this is
// (seconds - launch) x bandwidth x efficiency, and 0 when `seconds` is under one launch (the task
// then takes the launch alone).
double CalibratedCodecBytes(double seconds, const GpuSpec& gpu, const SimulationSpec& sim);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_COMM_CODEC_WORK_H_
