// The cuda backend: runs a TaskGraph on this machine's CUDA devices, one device per rank,
// kernels from kernels/ and NCCL collectives (cuda_executor.h has the execution model;
// backend.h the contract).
//
// Size: a plan runs only if it needs no more ranks than there are visible devices. On a
// one-GPU machine that means one-rank plans: validate plans the scenario at the size the
// devices allow, and the cuda backend then still runs every collective of the plan through a
// single-rank NCCL communicator (a real NCCL call, a local copy), so the calls are exercised
// even where their cost is not. Multi-process runs (`mpirun -np N`, one process per GPU,
// RunOptions::processes) run rank processes->rank() on a device of this host chosen by the
// local rank, with NCCL communicators bootstrapped over the process group (nccl_bootstrap.h).
#ifndef STRATASIM_VALIDATE_CUDA_CUDA_BACKEND_H_
#define STRATASIM_VALIDATE_CUDA_CUDA_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "validate/backend.h"

namespace stratasim::kernels {
class Blas;
}  // namespace stratasim::kernels

namespace stratasim::validate {
namespace cuda {
class Communicators;
}  // namespace cuda

struct CudaDeviceProperties {
  std::string name;  // as the driver reports it, e.g. "NVIDIA H200"
  double memory_bytes = 0;
  int sm_count = 0;
  int compute_capability = 0;  // major * 10 + minor
  double clock_hz = 0;
  double memory_bandwidth_Bps = 0;  // from memory clock and bus width (DDR: x2)
};

// The built-in catalog entry a device name corresponds to ("NVIDIA H200" -> "H200",
// "NVIDIA H100 80GB HBM3" -> "H100-SXM5", "NVIDIA GeForce RTX 4090" -> "RTX4090"), or nullptr.
const GpuSpec* CatalogGpuForDevice(const std::string& device_name);

// The cluster the simulator builds for `ranks` devices like `props`: one server, the catalog
// GPU when the name is known (else a GPU whose FP32 peak is SMs x 128 lanes x 2 x clock and
// which has no tensor-core peaks), an NVSwitch of the part's NVLink rate for SXM parts of the
// catalog (H100/H200: 450 GB/s per direction; A100: 300 GB/s), PCIe of the generation of the
// compute capability (Gen5 x16 for 9.x: 64 GB/s, else Gen4 x16: 32 GB/s, per direction).
ClusterSpec CudaClusterSpec(const CudaDeviceProperties& props, int ranks);

class CudaBackend : public Backend {
 public:
  // `ranks` devices, 0 = all visible. Throws BackendError kUnavailable when no device can be
  // used (the message starts "cuda backend: no CUDA device") and kTooFewRanks when fewer
  // devices than `ranks` are visible.
  explicit CudaBackend(int ranks);
  ~CudaBackend() override;

  std::string Name() const override { return "cuda"; }
  int NumRanks() const override { return ranks_; }
  ClusterSpec Describe() const override;

  ExecutionTrace Run(const TaskGraph& g, const RunOptions& options) override;

  BenchResult TimeCompute(const Task& task, const BenchOptions& options) override;
  BenchResult TimeLaunch(const BenchOptions& options) override;
  BenchResult TimeCopy(double bytes, CopyDirection direction, const BenchOptions& options) override;
  BenchResult TimeCollective(CollectiveKind kind, int group_size, double bytes, DType dtype,
                             const BenchOptions& options) override;

 private:
  int ranks_ = 0;
  CudaDeviceProperties props_;
  // Kept between micro-benchmarks (created on first use): cuBLAS handles on device 0 and the
  // NCCL cliques of each group size, so that a sweep does not pay their set-up per point.
  std::unique_ptr<kernels::Blas> blas_;
  std::unique_ptr<cuda::Communicators> comms_;
};

}  // namespace stratasim::validate

#endif  // STRATASIM_VALIDATE_CUDA_CUDA_BACKEND_H_
