// How long a compute task keeps a GPU busy when it runs alone: a roofline with an efficiency
// that depends on the op and its size.
//
//   t = max(flops / (peak(dtype) * compute_eff(task)),
//           bytes / (memory_bandwidth * memory_eff)) + kernel_launch
//
// compute_eff, without a calibration for the GPU kind:
//   SimulationSpec::compute_efficiency (what a large GEMM achieves), times, for a task with a
//   matrix shape (Task::gemm) on a GPU whose SM count is known, the GEMM's quantisation
//   efficiency: cuBLAS computes the [m, n] output in tiles, one thread block per tile per SM,
//   in waves over the SMs, so a product whose tiles do not fill the last wave, or whose edges
//   do not fill the last tile, pays for the idle part (NVIDIA Deep Learning Performance Guide,
//   "Matrix Multiplication Background", sections on tile and wave quantisation):
//       tiles       = ceil(m / T) * ceil(n / T) * batch,   T = 128 (a common cuBLAS tile)
//       tile_eff    = m n / (ceil(m / T) T * ceil(n / T) T)
//       wave_eff    = tiles / (ceil(tiles / SMs) * SMs)
//   Small GEMMs are therefore slow: a 128 x 128 output occupies one SM of 108. Split-K and the
//   smaller tiles cuBLAS picks for small outputs are not modelled (a calibration captures them).
//   Tasks without a shape (elementwise, optimizer, or made by hand) use compute_efficiency.
//   A fused attention kernel (OpKind::kFusedAttention; FlashAttention-2, Dao 2023, §3.2) is not
//   tiled like a GEMM over its [m, n] = [s, s] scores: it runs one thread block per query tile
//   of each sequence and head, and each block sweeps all the key tiles (the backward, one per
//   key tile sweeping the query tiles: the same count, as m = n), so its waves count blocks,
//   not score tiles:
//       blocks      = ceil(m / T) * batch
//       tile_eff    = m n / (ceil(m / T) T * ceil(n / T) T)   (the padded last tiles)
//       wave_eff    = blocks / (ceil(blocks / SMs) * SMs)
//   Counting score tiles instead would make the waves s/T times finer and hide the idle SMs of
//   a short sequence with few heads per GPU (e.g. under tensor parallelism). A causal kernel's
//   blocks do unequal work (query tile i sweeps i + 1 key tiles); FlashAttention-2 launches the
//   longest first, and that imbalance is not modelled (a calibration captures it).
// With a calibration listing the task's GPU kind (SimulationSpec::calibration), its measured
// efficiency for the op kind and FLOP range replaces all of the above, and its memory
// efficiency and launch overhead replace the scenario's.
//
// The executor hands this to SimGrid as work on the GPU host, so concurrent kernels on one GPU
// share it and the time passes in the simulation.
#ifndef STRATASIM_CORE_COMPUTE_MODEL_H_
#define STRATASIM_CORE_COMPUTE_MODEL_H_

#include "core/hardware.h"
#include "core/scenario.h"
#include "core/task_graph.h"

namespace stratasim {

// Output tile edge of the quantisation model.
inline constexpr double kGemmTile = 128;

// tile_eff * wave_eff of `shape` on `sm_count` SMs (1 when the shape or the SM count is
// unknown).
double GemmQuantizationEfficiency(const GemmShape& shape, int sm_count);

// tile_eff * wave_eff of a fused attention kernel of `shape` (batch = sequences x heads, m query
// rows, n key columns) on `sm_count` SMs (1 when either is unknown).
double FusedAttentionQuantizationEfficiency(const GemmShape& shape, int sm_count);

// The achieved fraction of peak FLOP/s for `t` on `gpu`.
double ComputeEfficiency(const Task& t, const GpuSpec& gpu, const SimulationSpec& s);

// Throws stratasim::Error when the GPU has no units for the task's dtype.
double ComputeTaskSeconds(const Task& t, const GpuSpec& gpu, const SimulationSpec& s);

}  // namespace stratasim

#endif  // STRATASIM_CORE_COMPUTE_MODEL_H_
