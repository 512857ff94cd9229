#include "validate/host/host_machine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "validate/host/host_kernels.h"
#include "validate/host/sync.h"

namespace stratasim::validate::host {
namespace {

constexpr std::size_t kProbeBytes = 32u << 20;  // past the last-level cache of most CPUs
constexpr int kProbeRepeats = 3;

// The value after "key<spaces>:" on the first line of `path` that starts with `key`.
std::string ProcField(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return "";
}

double ClockHz() {
  std::ifstream max_freq("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (max_freq >> khz && khz > 0) return khz * 1e3;
  const std::string mhz = ProcField("/proc/cpuinfo", "cpu MHz");
  const double v = mhz.empty() ? 0 : std::atof(mhz.c_str());
  // Without either (containers hiding /proc), 2 GHz: the order of magnitude of server cores.
  return v > 0 ? v * 1e6 : 2e9;
}

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double MeasureBandwidth(bool copy) {
  std::vector<unsigned char> buffer(2 * kProbeBytes, 0x3c);
  double best = 0;
  for (int r = 0; r < kProbeRepeats + 1; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    if (copy) {
      std::memcpy(buffer.data() + kProbeBytes, buffer.data(), kProbeBytes);
    } else {
      RunMemoryLoop(2.0 * kProbeBytes, buffer.data());
    }
    const auto t1 = std::chrono::steady_clock::now();
    // A copy moves kProbeBytes from one rank to another; the loop reads and writes 2x.
    const double bytes = copy ? kProbeBytes : 2.0 * kProbeBytes;
    if (r > 0) best = std::max(best, bytes / Seconds(t0, t1));  // r = 0 warms the pages
  }
  return best;
}

double MeasureGemmFlops() {
  Task t;
  t.op = OpKind::kGemm;
  t.dtype = DType::kFP32;
  t.gemm = GemmShape{256, 256, 256, 1};
  t.flops = 2.0 * 256 * 256 * 256;
  std::vector<unsigned char> buffer(static_cast<std::size_t>(ComputeWorkspaceBytes(t)), 0x3c);
  double best = 0;
  for (int r = 0; r < kProbeRepeats + 1; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    RunCompute(t, buffer.data());
    const auto t1 = std::chrono::steady_clock::now();
    if (r > 0) best = std::max(best, t.flops / Seconds(t0, t1));
  }
  return best;
}

double MeasureHandoffLatency() {
  constexpr int kRounds = 200;
  AbortFlag abort;
  Barrier barrier(2, &abort);
  Clock clock;
  std::vector<double> laps;
  std::thread peer([&] {
    for (int i = 0; i < kRounds; ++i) barrier.Wait(clock);
  });
  double last = clock.Now();
  for (int i = 0; i < kRounds; ++i) {
    barrier.Wait(clock);
    const double now = clock.Now();
    laps.push_back(now - last);
    last = now;
  }
  peer.join();
  std::nth_element(laps.begin(), laps.begin() + kRounds / 2, laps.end());
  return laps[kRounds / 2];
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace

HostMachine ProbeHostMachine() {
  HostMachine m;
  m.cpu_model = ProcField("/proc/cpuinfo", "model name");
  if (m.cpu_model.empty()) m.cpu_model = "unknown CPU";
  m.hardware_threads = std::max(1u, std::thread::hardware_concurrency());
  m.clock_hz = ClockHz();
#if defined(__AVX512F__)
  m.simd_fp32_lanes = 16;
  m.isa = "avx512f";
#elif defined(__AVX2__) && defined(__FMA__)
  m.simd_fp32_lanes = 8;
  m.isa = "avx2+fma";
#elif defined(__AVX__)
  m.simd_fp32_lanes = 8;
  m.isa = "avx";
#else
  m.simd_fp32_lanes = 4;
  m.isa = "sse2";
#endif
  m.estimated_flops = m.clock_hz * m.simd_fp32_lanes * 2 * 2;
  m.measured_gemm_flops = MeasureGemmFlops();
  m.peak_flops = std::max(m.estimated_flops, m.measured_gemm_flops);
  const std::string mem = ProcField("/proc/meminfo", "MemTotal");  // "24576000 kB"
  m.memory_bytes = mem.empty() ? 4.0 * (1ull << 30) : std::atof(mem.c_str()) * 1024;
  m.memory_bandwidth_Bps = MeasureBandwidth(false);
  m.copy_bandwidth_Bps = MeasureBandwidth(true);
  m.handoff_latency_s = MeasureHandoffLatency();
  return m;
}

ClusterSpec HostClusterSpec(const HostMachine& m, int ranks) {
  GpuSpec gpu;
  gpu.name = kHostGpuName;
  for (DType d : {DType::kFP32, DType::kTF32, DType::kFP16, DType::kBF16}) {
    gpu.peak_flops[d] = m.peak_flops;
  }
  gpu.memory_bytes = m.memory_bytes / std::max(1, ranks);
  gpu.memory_bandwidth_Bps = m.memory_bandwidth_Bps;
  gpu.source = "this machine (" + m.cpu_model + ", " + std::to_string(m.hardware_threads) +
               " threads): peak " +
               (m.measured_gemm_flops > m.estimated_flops ? "measured (256^3 GEMM)"
                                                          : "estimated from clock and " + m.isa) +
               ", bandwidths measured (validate/host/host_machine.h)";
  ServerGroup g;
  g.name = "host";
  g.count = 1;
  g.gpu = kHostGpuName;
  g.gpus_per_server = ranks;
  const LinkSpec link{m.copy_bandwidth_Bps, m.handoff_latency_s};
  g.nvswitch = NvSwitchSpec{link};
  PcieSpec pcie;
  pcie.gpus_per_switch = 1;
  pcie.sockets = 1;
  pcie.link = link;
  pcie.uplink = link;
  g.pcie = pcie;
  g.nics.count = 1;
  g.nics.link = link;
  ClusterSpec c;
  c.groups.push_back(g);
  c.gpu_kinds.push_back(gpu);
  return c;
}

std::string HostClusterYaml(const HostMachine& m, int ranks) {
  const ClusterSpec c = HostClusterSpec(m, ranks);
  const GpuSpec& gpu = c.gpu_kinds[0];
  const double link_gbps = m.copy_bandwidth_Bps / 1e9;
  const std::string latency = Fixed(m.handoff_latency_s * 1e6, 3) + "us";
  std::ostringstream y;
  y << "# This machine as the host backend's hardware (stratasim validate --backend host).\n"
    << "# " << m.cpu_model << ", " << m.hardware_threads << " hardware threads, clock "
    << Fixed(m.clock_hz / 1e9, 3) << " GHz, " << m.isa << ".\n"
    << "# peak: the larger of clock x " << m.simd_fp32_lanes
    << " FP32 lanes x 2 (FMA) x 2 vector pipes = " << Fixed(m.estimated_flops / 1e9, 2)
    << " GFLOP/s and a measured 256^3 GEMM, " << Fixed(m.measured_gemm_flops / 1e9, 2)
    << " GFLOP/s; per rank (one thread).\n"
    << "# memory_bandwidth: measured, STREAM scale by one thread; link: measured memcpy rate\n"
    << "# between rank buffers, latency the median two-thread barrier wake-up; measured rates\n"
    << "# are achieved ones already (efficiency: 1, docs/links.md).\n"
    << "cluster:\n"
    << "  gpus:\n"
    << "    - name: " << kHostGpuName << "\n"
    << "      peak: {fp32: \"" << Fixed(m.peak_flops / 1e9, 3) << "GFLOPS\", tf32: \""
    << Fixed(m.peak_flops / 1e9, 3) << "GFLOPS\", fp16: \"" << Fixed(m.peak_flops / 1e9, 3)
    << "GFLOPS\", bf16: \"" << Fixed(m.peak_flops / 1e9, 3) << "GFLOPS\"}\n"
    << "      memory: \"" << Fixed(gpu.memory_bytes, 0) << "B\"\n"
    << "      memory_bandwidth: \"" << Fixed(m.memory_bandwidth_Bps / 1e9, 3) << "GB/s\"\n"
    << "      source: \"" << gpu.source << "\"\n"
    << "  servers:\n"
    << "    - name: host\n"
    << "      gpu: " << kHostGpuName << "\n"
    << "      gpus_per_server: " << ranks << "\n"
    << "      nvswitch: {bandwidth: \"" << Fixed(link_gbps, 3) << "GB/s\", latency: \"" << latency
    << "\", efficiency: 1}\n"
    << "      pcie: {gpus_per_switch: 1, bandwidth: \"" << Fixed(link_gbps, 3)
    << "GB/s\", latency: \"" << latency << "\", efficiency: 1}\n"
    << "      nics: {count: 1, bandwidth: \"" << Fixed(link_gbps, 3) << "GB/s\", latency: \""
    << latency << "\", efficiency: 1}\n";
  return y.str();
}

}  // namespace stratasim::validate::host
