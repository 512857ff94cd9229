#include "validate/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/device.h"
#include "kernels/device_buffer.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "validate/clock_sync.h"
#include "validate/cuda/cuda_executor.h"
#include "validate/cuda/nccl_ops.h"
#include "validate/cuda/task_kernels.h"

namespace stratasim::validate {
namespace {

using kernels::DeviceBuffer;

std::string Normalise(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  for (const char* noise : {"NVIDIA", "GEFORCE", "TESLA"}) {
    const std::size_t at = out.find(noise);
    if (at != std::string::npos) out.erase(at, std::string(noise).size());
  }
  return out;
}

CudaDeviceProperties QueryProperties(int device) {
  cudaDeviceProp prop{};
  STRATASIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  CudaDeviceProperties p;
  p.name = prop.name;
  p.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  p.sm_count = prop.multiProcessorCount;
  p.compute_capability = prop.major * 10 + prop.minor;
  int clock_khz = 0, mem_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  cudaGetLastError();
  p.clock_hz = clock_khz * 1e3;
  p.memory_bandwidth_Bps = 2.0 * mem_khz * 1e3 * bus_bits / 8;
  return p;
}

// Medians and minima of timed samples, repeating until the options' count and total are met.
template <typename Sample>
BenchResult Repeat(const BenchOptions& o, Sample sample) {
  for (int i = 0; i < o.warmup; ++i) sample();
  std::vector<double> times;
  double total = 0;
  while (static_cast<int>(times.size()) < std::max(1, o.repetitions) ||
         (total < o.min_total_s && times.size() < 100000)) {
    const double t = sample();
    times.push_back(t);
    total += t;
  }
  std::sort(times.begin(), times.end());
  BenchResult r;
  r.samples = static_cast<int>(times.size());
  r.min_s = times.front();
  r.median_s = times.size() % 2 == 1
                   ? times[times.size() / 2]
                   : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
  return r;
}

// A stream and an event pair on the current device, timing what `enqueue` puts on the stream.
class EventTimer {
 public:
  EventTimer() {
    STRATASIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    STRATASIM_CUDA_CHECK(cudaEventCreate(&begin_));
    STRATASIM_CUDA_CHECK(cudaEventCreate(&end_));
  }
  ~EventTimer() {
    cudaEventDestroy(end_);
    cudaEventDestroy(begin_);
    cudaStreamDestroy(stream_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  cudaStream_t stream() const { return stream_; }
  template <typename F>
  double Time(F&& enqueue) {
    STRATASIM_CUDA_CHECK(cudaEventRecord(begin_, stream_));
    enqueue(stream_);
    STRATASIM_CUDA_CHECK(cudaEventRecord(end_, stream_));
    STRATASIM_CUDA_CHECK(cudaEventSynchronize(end_));
    float ms = 0;
    STRATASIM_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
    return ms * 1e-3;
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
};

// Runs a benchmark body, turning kernels' errors into BackendErrors of the right kind.
template <typename F>
BenchResult Guard(const std::string& what, F&& body) {
  try {
    return body();
  } catch (const BackendError&) {
    throw;
  } catch (const kernels::DeviceError& e) {
    throw BackendError(
        e.out_of_memory() ? BackendError::Kind::kOutOfMemory : BackendError::Kind::kExecution,
        "cuda backend, " + what + ": " + e.what());
  } catch (const Error& e) {
    throw BackendError(BackendError::Kind::kExecution, "cuda backend, " + what + ": " + e.what());
  }
}

}  // namespace

const GpuSpec* CatalogGpuForDevice(const std::string& device_name) {
  const std::string dev = Normalise(device_name);
  const GpuSpec* best = nullptr;
  std::size_t best_len = 0;
  for (const GpuSpec& g : BuiltinGpuCatalog()) {
    const std::string full = Normalise(g.name);
    if (!full.empty() && dev.find(full) != std::string::npos && full.size() > best_len) {
      best = &g;
      best_len = full.size();
    }
  }
  if (best != nullptr) return best;
  // "H100-SXM5" for "NVIDIA H100 80GB HBM3": the part number before the first '-'.
  for (const GpuSpec& g : BuiltinGpuCatalog()) {
    const std::string part = Normalise(g.name.substr(0, g.name.find('-')));
    if (!part.empty() && dev.rfind(part, 0) == 0) return &g;
  }
  return nullptr;
}

ClusterSpec CudaClusterSpec(const CudaDeviceProperties& props, int ranks) {
  GpuSpec gpu;
  const GpuSpec* known = CatalogGpuForDevice(props.name);
  if (known != nullptr) {
    gpu = *known;
    gpu.memory_bytes = props.memory_bytes > 0 ? props.memory_bytes : gpu.memory_bytes;
  } else {
    gpu.name = props.name;
    // Ampere and Hopper SMs have 128 FP32 lanes; an FMA counts 2 FLOPs.
    gpu.peak_flops[DType::kFP32] = props.sm_count * 128.0 * 2 * props.clock_hz;
    gpu.memory_bytes = props.memory_bytes;
    gpu.memory_bandwidth_Bps = props.memory_bandwidth_Bps;
    gpu.sm_count = props.sm_count;
    gpu.source =
        "cudaGetDeviceProperties of this machine (not in the built-in catalog): FP32 "
        "peak from SMs x 128 lanes x 2 x clock; run `stratasim calibrate`";
  }
  ServerGroup g;
  g.name = "this-machine";
  g.count = 1;
  g.gpu = gpu.name;
  g.gpus_per_server = ranks;
  const std::string n = Normalise(props.name);
  const bool hopper_sxm = n.find("H100") == 0 || n.find("H200") == 0;
  const bool a100_sxm = n.find("A100SXM") == 0;
  if (hopper_sxm || a100_sxm) {
    // 18 NVLink4 links x 25 GB/s (H100/H200) or 12 NVLink3 links x 25 GB/s (A100), per direction.
    g.nvswitch = NvSwitchSpec{LinkSpec{hopper_sxm ? 450e9 : 300e9, 1e-6}};
  }
  PcieSpec pcie;
  // PCIe Gen5 x16 (Hopper): 32 GT/s x 16 lanes ~ 64 GB/s; Gen4 x16: ~32 GB/s, per direction.
  pcie.link = LinkSpec{props.compute_capability >= 90 ? 64e9 : 32e9, 1e-6};
  pcie.uplink = pcie.link;
  pcie.socket_link = pcie.link;
  g.pcie = pcie;
  g.nics.count = 1;
  g.nics.link = pcie.link;
  ClusterSpec c;
  c.groups.push_back(g);
  c.gpu_kinds.push_back(gpu);
  return c;
}

CudaBackend::CudaBackend(int ranks) {
  const std::string reason = kernels::CudaUnavailableReason();
  if (!reason.empty()) {
    throw BackendError(BackendError::Kind::kUnavailable, "cuda backend: " + reason);
  }
  const int devices = kernels::CudaDeviceCount();
  if (ranks < 0 || ranks > devices) {
    throw BackendError(BackendError::Kind::kTooFewRanks,
                       "cuda backend: " + std::to_string(ranks) + " ranks asked, " +
                           std::to_string(devices) + " CUDA device(s) visible (one per rank)");
  }
  ranks_ = ranks == 0 ? devices : ranks;
  props_ = QueryProperties(0);
}

CudaBackend::~CudaBackend() = default;

ClusterSpec CudaBackend::Describe() const { return CudaClusterSpec(props_, ranks_); }

ExecutionTrace CudaBackend::Run(const TaskGraph& g, const RunOptions& options) {
  cuda::CudaRunLimits limits;
  limits.devices = ranks_;
  limits.memory_limit_bytes_per_rank = options.memory_limit_bytes_per_rank;
  limits.seed = options.seed;
  limits.processes = options.processes;
  if (options.processes != nullptr) {
    ProcessGroup* pg = options.processes;
    // The processes' clocks aligned by Cristian's algorithm (clock_sync.h): one start instant,
    // on each process's own clock, that the traces count from.
    limits.common_start = [pg] { return SyncClocks(*pg).start; };
  }
  return cuda::ExecuteOnCuda(g, limits);
}

BenchResult CudaBackend::TimeCompute(const Task& task, const BenchOptions& options) {
  return Guard("compute '" + task.name + "'", [&] {
    STRATASIM_CUDA_CHECK(cudaSetDevice(0));
    const cuda::KernelPlan plan = cuda::PlanKernel(task);
    if (!blas_) blas_ = std::make_unique<kernels::Blas>();
    cuda::KernelLauncher launcher(*blas_);
    launcher.Reserve(plan);
    EventTimer timer;
    launcher.Allocate(0, timer.stream());
    return Repeat(options,
                  [&] { return timer.Time([&](cudaStream_t s) { launcher.Launch(plan, s); }); });
  });
}

BenchResult CudaBackend::TimeLaunch(const BenchOptions& options) {
  return Guard("launch", [&] {
    STRATASIM_CUDA_CHECK(cudaSetDevice(0));
    EventTimer timer;
    return Repeat(options,
                  [&] { return timer.Time([](cudaStream_t s) { kernels::EmptyKernel(s); }); });
  });
}

BenchResult CudaBackend::TimeCopy(double bytes, CopyDirection direction,
                                  const BenchOptions& options) {
  return Guard("copy", [&] {
    STRATASIM_CUDA_CHECK(cudaSetDevice(0));
    const std::size_t n = static_cast<std::size_t>(std::max(1.0, bytes));
    DeviceBuffer device(n);
    kernels::PinnedBuffer host(n);
    EventTimer timer;
    const bool h2d = direction == CopyDirection::kHostToDevice;
    return Repeat(options, [&] {
      return timer.Time([&](cudaStream_t s) {
        STRATASIM_CUDA_CHECK(
            cudaMemcpyAsync(h2d ? device.get() : host.get(), h2d ? host.get() : device.get(), n,
                            h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
      });
    });
  });
}

BenchResult CudaBackend::TimeCollective(CollectiveKind kind, int group_size, double bytes,
                                        DType dtype, const BenchOptions& options) {
  if (group_size < 1 || group_size > ranks_) {
    throw BackendError(BackendError::Kind::kTooFewRanks, "cuda backend: a collective over " +
                                                             std::to_string(group_size) +
                                                             " ranks needs as many devices; " +
                                                             std::to_string(ranks_) + " available");
  }
  return Guard("collective", [&] {
    Collective c;
    c.kind = kind;
    c.dtype = dtype;
    c.bytes = bytes;
    c.root = 0;
    for (int r = 0; r < group_size; ++r) c.ranks.push_back(r);
    if (kind == CollectiveKind::kAllToAllV) {  // uniform: the all-to-all's volumes
      c.matrix.assign(static_cast<std::size_t>(group_size) * group_size, bytes / group_size);
    }
    const auto [send_bytes, recv_bytes] = cuda::CollectiveBufferBytes(c);
    if (!comms_) comms_ = std::make_unique<cuda::Communicators>();
    const std::vector<ncclComm_t>& clique = comms_->Clique(c.ranks, c.ranks);
    std::vector<DeviceBuffer> send(group_size), recv(group_size);
    std::vector<std::unique_ptr<EventTimer>> timers(group_size);
    for (int r = 0; r < group_size; ++r) {
      STRATASIM_CUDA_CHECK(cudaSetDevice(r));
      send[r] = DeviceBuffer(static_cast<std::size_t>(std::max(1.0, send_bytes)));
      recv[r] = DeviceBuffer(static_cast<std::size_t>(std::max(1.0, recv_bytes)));
      timers[r] = std::make_unique<EventTimer>();
    }
    std::vector<cudaEvent_t> begin(group_size), end(group_size);
    for (int r = 0; r < group_size; ++r) {
      STRATASIM_CUDA_CHECK(cudaSetDevice(r));
      STRATASIM_CUDA_CHECK(cudaEventCreate(&begin[r]));
      STRATASIM_CUDA_CHECK(cudaEventCreate(&end[r]));
    }
    auto sample = [&] {
      // All members idle, then launched together in one NCCL group from this thread: the
      // slowest member's time from its own start is the collective's time.
      for (int r = 0; r < group_size; ++r) {
        STRATASIM_CUDA_CHECK(cudaSetDevice(r));
        STRATASIM_CUDA_CHECK(cudaDeviceSynchronize());
      }
      for (int r = 0; r < group_size; ++r) {
        STRATASIM_CUDA_CHECK(cudaSetDevice(r));
        STRATASIM_CUDA_CHECK(cudaEventRecord(begin[r], timers[r]->stream()));
      }
      STRATASIM_NCCL_CHECK(ncclGroupStart());
      for (int r = 0; r < group_size; ++r) {
        STRATASIM_CUDA_CHECK(cudaSetDevice(r));
        cuda::EnqueueCollective(c, r, clique[r], send[r].get(), recv[r].get(), timers[r]->stream());
      }
      STRATASIM_NCCL_CHECK(ncclGroupEnd());
      double slowest = 0;
      for (int r = 0; r < group_size; ++r) {
        STRATASIM_CUDA_CHECK(cudaSetDevice(r));
        STRATASIM_CUDA_CHECK(cudaEventRecord(end[r], timers[r]->stream()));
        STRATASIM_CUDA_CHECK(cudaEventSynchronize(end[r]));
        float ms = 0;
        STRATASIM_CUDA_CHECK(cudaEventElapsedTime(&ms, begin[r], end[r]));
        slowest = std::max(slowest, ms * 1e-3);
      }
      return slowest;
    };
    BenchResult result;
    try {
      result = Repeat(options, sample);
    } catch (...) {
      comms_->AbortAll();  // a failed collective leaves its clique unusable
      comms_.reset();
      throw;
    }
    for (int r = 0; r < group_size; ++r) {
      cudaSetDevice(r);
      cudaEventDestroy(begin[r]);
      cudaEventDestroy(end[r]);
    }
    return result;
  });
}

std::unique_ptr<Backend> MakeCudaBackend(int ranks) { return std::make_unique<CudaBackend>(ranks); }

}  // namespace stratasim::validate
