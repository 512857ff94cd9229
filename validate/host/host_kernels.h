// The host backend's "kernels": the real work a compute or copy task does on a CPU thread.
//
//   GEMM        C[m, n] = A[m, k] · B[k, n], `batch` times, through Eigen's blocked GEMM
//               (single-threaded: one rank is one thread), in the task's dtype (fp32 and tf32
//               as float, fp16 as Eigen::half, bf16 as Eigen::bfloat16; Eigen has no FP8/INT
//               kernels worth measuring, so those are refused).
//   memory      y[i] = a * x[i] + b over `bytes` in total (half read, half written): a
//               STREAM-style "scale" that is bound by memory bandwidth, as elementwise,
//               optimizer and other shape-less GPU kernels are.
//   copy        memcpy of `bytes` (host<->device copies: both sides are host memory here).
//   fused attention (kFusedAttention)  FlashAttention's blocked forward (phase forward,
//               recompute or other) or backward (phase backward) of host_attention.h, with
//               batch = gemm.batch entries of s_q = m, s_kv = n, d = k, in the task's dtype
//               (fp32/tf32, fp16, bf16); the entries reuse one entry's buffers, as the GEMM's
//               batch does.
//
// Buffers come from the caller's workspace, allocated and touched before the run's time
// origin, so that page faults are not timed.
#ifndef STRATASIM_VALIDATE_HOST_HOST_KERNELS_H_
#define STRATASIM_VALIDATE_HOST_HOST_KERNELS_H_

#include <cstddef>

#include "core/task_graph.h"
#include "validate/host/host_attention.h"

namespace stratasim::validate::host {

// The shape a compute task runs as a GEMM: its own when known; for a GEMM or attention task
// without one, a cube of the task's FLOPs (m = n = k = cbrt(flops / 2)); m == 0 for a task that
// runs the memory loop instead.
GemmShape HostGemmShape(const Task& t);

// Where a kFusedAttention task's buffers lie in its workspace, in bytes from its start, for one
// batch entry: Q, K, V, O in the task's format, the FP32 logsumexp, then (backward only) dO,
// dQ, dK, dV, then the FP32 scratch; each 64-byte aligned. The forward and the backward of one
// shape place Q..lse alike, so a backward reads the O and lse its forward wrote on that lane.
struct FusedAttentionBuffers {
  FusedAttentionDims dims;  // batch 1: the task's entries run one after the other
  bool backward = false;
  double q = 0, k = 0, v = 0, o = 0, lse = 0, dout = 0, dq = 0, dk = 0, dv = 0, scratch = 0;
  double total = 0;
};
// Throws stratasim::Error when the task has no shape, a dimension of 2^31 or more, a causal
// mask with s_q != s_kv, or a dtype other than fp32, tf32, fp16, bf16.
FusedAttentionBuffers FusedAttentionLayout(const Task& t);

// Bytes of workspace a compute task needs (A, B and C of its GEMM, or its memory loop's
// buffers). Throws stratasim::Error for a dtype the host cannot run.
double ComputeWorkspaceBytes(const Task& t);

// Runs compute task `t` on `workspace` (at least ComputeWorkspaceBytes(t)). Throws
// stratasim::Error for an unsupported dtype.
void RunCompute(const Task& t, unsigned char* workspace);

// y[i] = a * x[i] + b over float arrays of `bytes` / 2 each.
void RunMemoryLoop(double bytes, unsigned char* workspace);

}  // namespace stratasim::validate::host

#endif  // STRATASIM_VALIDATE_HOST_HOST_KERNELS_H_
