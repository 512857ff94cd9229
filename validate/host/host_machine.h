// This machine as the host backend's "hardware": each rank is one CPU thread, its "GPU" a core
// and its share of the memory. The figures become a custom GPU kind ("host-cpu") in a one-server
// cluster that the simulator builds like any other, so the simulation a host run is compared
// with runs on a model of this machine.
//
// Where the figures come from (the CPU analogue of a datasheet):
//   peak FLOP/s per rank  estimated: clock x SIMD lanes x 2 x 2. Lanes are those of the
//                         instruction set this binary was compiled for (Eigen uses what the
//                         compiler enables: SSE2 = 4 FP32 lanes by default, AVX2 = 8, AVX-512 =
//                         16), times 2 FLOPs per lane per fused multiply-add (or a multiply and
//                         an add issued together without FMA), times 2 vector pipes that can
//                         each issue one per cycle (Intel Skylake and later, AMD Zen 2 and
//                         later; Agner Fog, "Instruction tables"). The clock is cpufreq's
//                         cpuinfo_max_freq, else /proc/cpuinfo's "cpu MHz" (often the base
//                         clock in a VM). A peak must bound what the part achieves, and turbo
//                         clocks or extra pipes (Zen issues SSE multiplies and adds on four
//                         pipes) can beat the estimate, so it is raised to the best rate of a
//                         256^3 FP32 GEMM measured at start when that is higher. FP16 and BF16
//                         get the FP32 figure: a CPU without AVX512-FP16/BF16 converts to FP32
//                         (Eigen's emulated types do so element by element, and are far
//                         slower), so their default efficiency is far off and calibrating with
//                         `--dtype bf16` is what corrects it.
//   memory bandwidth      measured: a STREAM "scale" loop (y = a x + b) over 2 x 32 MiB by one
//                         thread, best of 3 (McCalpin, STREAM benchmark). One thread's share,
//                         which is what one rank uses.
//   rank-to-rank link     measured: memcpy of 32 MiB between two buffers by one thread, best of
//                         3, as the collectives move data between rank threads that way; its
//                         latency is the median wake-up time of a two-thread barrier.
//   host<->device copies  the same memcpy rate (both sides are host memory), through a PCIe
//                         section so that the simulator's copies take it rather than its
//                         PCIe 4.0 default.
//   memory per rank       MemTotal of /proc/meminfo divided by the ranks.
#ifndef STRATASIM_VALIDATE_HOST_HOST_MACHINE_H_
#define STRATASIM_VALIDATE_HOST_HOST_MACHINE_H_

#include <string>

#include "core/cluster.h"

namespace stratasim::validate::host {

inline constexpr const char* kHostGpuName = "host-cpu";

struct HostMachine {
  std::string cpu_model;  // /proc/cpuinfo "model name"
  int hardware_threads = 1;
  double clock_hz = 0;
  int simd_fp32_lanes = 4;         // of the compiled instruction set
  std::string isa;                 // "sse2", "avx2+fma", "avx512f"
  double estimated_flops = 0;      // clock x lanes x 4
  double measured_gemm_flops = 0;  // best 256^3 FP32 GEMM rate
  double peak_flops = 0;           // per rank (one thread), FP32: the larger of the two
  double memory_bytes = 0;         // the whole machine
  double memory_bandwidth_Bps = 0;
  double copy_bandwidth_Bps = 0;
  double handoff_latency_s = 0;
};

// Reads /proc and /sys and runs the three short measurements (about 0.3 s).
HostMachine ProbeHostMachine();

// A one-server cluster of `ranks` host-cpu "GPUs" joined by a switch of the measured copy
// bandwidth.
ClusterSpec HostClusterSpec(const HostMachine& m, int ranks);

// The same cluster as a scenario's `cluster:` section (docs/scenario-format.md), with comments
// saying where each figure comes from: what `validate --backend host` writes beside its
// results, so that `stratasim run` can simulate plans on this machine.
std::string HostClusterYaml(const HostMachine& m, int ranks);

}  // namespace stratasim::validate::host

#endif  // STRATASIM_VALIDATE_HOST_HOST_MACHINE_H_
