// Measured cost-model parameters: what `validate` learns on real GPUs and the simulator uses
// in place of its documented defaults (SimulationSpec in core/scenario.h).
//
// A calibration file lists, per GPU kind, the achieved fraction of peak per op kind in FLOP
// ranges (small kernels reach less of the peak than large ones), the achieved fraction of
// memory bandwidth, the kernel launch overhead, and per collective kind and group size an
// alpha-beta model (latency + bytes / bandwidth) that the collective lowering may use.
//
//   format: stratasim-calibration
//   version: 1
//   source: "8x H100 SXM5, stratasim validate, 2025-03-01"      # optional, free text
//   gpus:
//     - gpu: H100-SXM5                  # a GPU kind name as the cluster uses it
//       memory_efficiency: 0.85         # optional, in [0.0001, 1]
//       kernel_launch: "5us"            # optional, a time >= 0
//       sm_interference: 0.19           # optional, in [0.0001, 1]: slowdown of a kernel that
//                                       # overlaps a collective (NCCL takes SMs)
//       compute:                        # optional; op kinds: gemm attention elementwise
//         gemm:                         #   optimizer other
//           - {max_flops: 1e9, efficiency: 0.25}   # ops of at most 1 GFLOP
//           - {max_flops: 1e11, efficiency: 0.6}
//           - {efficiency: 0.75}                   # the rest: the last band has no max_flops
//       compression:                    # optional: a gradient compressor's measured encode and
//         - {method: s2reducer, encode: "2.1ns", decode: "0.9ns"}  # decode time per gradient
//                                       # element (core/compression.h methods; written by
//                                       # `stratasim compress-check`)
//   collectives:                        # optional
//     - {kind: all_reduce, gpu: H100-SXM5, group_size: 8, latency: "20us",
//        bandwidth: "180GB/s"}          # gpu optional: any GPU kind
//   links: {nvswitch: 0.85, nic: 0.97}  # optional: achievable fraction of line rate per link
//                                       # kind (nvswitch nvlink pcie socket nic), in [0.01, 1];
//                                       # replaces the default (core/link_efficiency.h) on every
//                                       # link whose scenario gives no efficiency of its own
//   fabric:                             # optional: written by `calibrate --fabric`
//     - {class: intra, protocol: simple, latency: "3us", bandwidth: "20GB/s"}
//     - {class: inter, protocol: simple, latency: "9us", bandwidth: "11GB/s", gpu: H100-SXM5}
//                                       # class: intra (GPU to GPU inside a server: NVSwitch
//                                       # port, NVLink, PCIe) or inter (NIC); protocol: simple,
//                                       # ll, ll128; latency: per algorithm step over such a hop,
//                                       # software included; bandwidth: achievable per direction;
//                                       # gpu optional: servers of that GPU kind only
//
// Every rule is checked; a bad file raises ConfigError with its file, line, key and rule, as
// the scenario loader does.
#ifndef STRATASIM_CORE_CALIBRATION_H_
#define STRATASIM_CORE_CALIBRATION_H_

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/compression.h"
#include "core/link_efficiency.h"
#include "core/task_graph.h"

namespace stratasim {

// Ops of at most `max_flops` FLOPs (and more than the previous band's) achieve `efficiency`.
struct EfficiencyBand {
  double max_flops = std::numeric_limits<double>::infinity();
  double efficiency = 1;
};

// A compressor's measured time per element of the gradient it compresses (rows x cols), for one
// worker: its encode, and its decode of the exchanged payloads into the summed gradient.
// strategies/comm/ charges elements x these as the encode and decode tasks' times.
struct CompressionCalibration {
  double encode_s_per_element = 0;
  double decode_s_per_element = 0;
};

struct GpuCalibration {
  std::string gpu;
  std::map<OpKind, std::vector<EfficiencyBand>> compute;  // bands by increasing max_flops
  std::optional<double> memory_efficiency;
  std::optional<double> kernel_launch_s;
  // Extra time of a compute kernel while an NCCL kernel runs beside it, as a fraction of its
  // time alone (strategies/tensor/oases.h); nullopt: the strategy's documented default.
  std::optional<double> sm_interference;
  std::map<CompressionMethod, CompressionCalibration> compression;

  // The measured efficiency of a `kind` op of `flops` FLOPs; nullopt when the file has no
  // table for that kind.
  std::optional<double> ComputeEfficiency(OpKind kind, double flops) const;
  // The measured times of `method`; nullptr when the file has none for it.
  const CompressionCalibration* FindCompression(CompressionMethod method) const;
};

// time = latency + bytes / bandwidth, with `bytes` the collective's size as Collective::bytes
// counts it (nccl-tests' "size"), so `bandwidth` is nccl-tests' algorithm bandwidth.
struct CollectiveCalibration {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::string gpu;  // empty: any GPU kind
  int group_size = 0;
  double latency_s = 0;
  double bandwidth_Bps = 0;

  double Seconds(double bytes) const { return latency_s + bytes / bandwidth_Bps; }
};

// One link class's fitted figures (validate/fabric_fit.h). The simulator gives every link of
// the class the bandwidth (the `simple` entry's: LL and LL128 keep their documented per-channel
// caps) and pays `latency_s` per algorithm step over such a hop with this protocol, in place of
// the route latency plus NCCL's documented step and base latencies (sim/collectives/protocol.h).
struct FabricCalibration {
  std::string link_class;  // "intra" or "inter"
  std::string protocol;    // "simple", "ll" or "ll128"
  std::string gpu;         // empty: servers of any GPU kind
  double latency_s = 0;
  double bandwidth_Bps = 0;
};

// The names the `fabric:` entries accept.
inline constexpr const char* kFabricClasses[] = {"intra", "inter"};
inline constexpr const char* kFabricProtocols[] = {"simple", "ll", "ll128"};

struct Calibration {
  std::string file;    // where it was read from
  std::string source;  // free text: how it was measured
  std::vector<GpuCalibration> gpus;
  std::vector<CollectiveCalibration> collectives;
  std::map<LinkKind, double> link_efficiency;  // measured; absent kinds keep their default
  std::vector<FabricCalibration> fabric;       // measured by `calibrate --fabric`

  // nullptr when the file does not list the GPU kind.
  const GpuCalibration* FindGpu(const std::string& gpu) const;
  // The entry for exactly this kind, group size and GPU kind (a GPU-specific entry wins over
  // one for any GPU); nullptr when there is none.
  const CollectiveCalibration* FindCollective(CollectiveKind kind, int group_size,
                                              const std::string& gpu) const;
  // The fabric entry for this class and protocol on servers of `gpu` (a GPU-specific entry
  // wins over one for any GPU); nullptr when there is none.
  const FabricCalibration* FindFabric(const std::string& link_class, const std::string& protocol,
                                      const std::string& gpu) const;
};

struct ClusterSpec;
// Sets the achievable rate of every scenario link that gives no efficiency of its own: the
// calibration's figure for its kind, else the default (core/link_efficiency.h); then, for
// servers the calibration's `fabric:` entries cover, the measured bandwidth on their
// GPU-to-GPU links (intra) and NICs (inter), and the measured per-hop latencies by protocol
// (ServerGroup::measured_*_step_s). Applying a second calibration replaces the first's figures.
void ApplyLinkCalibration(const Calibration* calibration, ClusterSpec* cluster);

// Throws ConfigError (file, line, column, key, value, rule) on any bad input.
Calibration LoadCalibrationFile(const std::string& path);
Calibration LoadCalibrationText(const std::string& text, const std::string& file_label);

}  // namespace stratasim

#endif  // STRATASIM_CORE_CALIBRATION_H_
