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
//
// Buffers come from the caller's workspace, allocated and touched before the run's time
// origin, so that page faults are not timed.
#ifndef STRATASIM_VALIDATE_HOST_HOST_KERNELS_H_
#define STRATASIM_VALIDATE_HOST_HOST_KERNELS_H_

#include <cstddef>

#include "core/task_graph.h"

namespace stratasim::validate::host {

// The shape a compute task runs as a GEMM: its own when known; for a GEMM or attention task
// without one, a cube of the task's FLOPs (m = n = k = cbrt(flops / 2)); m == 0 for a task that
// runs the memory loop instead.
GemmShape HostGemmShape(const Task& t);

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
