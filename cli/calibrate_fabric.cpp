#include "cli/calibrate_fabric.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/mpi_process_group.h"
#include "cli/mpi_world.h"
#include "core/calibration.h"
#include "core/error.h"
#include "core/units.h"
#include "report/atomic_file.h"
#include "validate/backend.h"
#include "validate/calibration_fit.h"
#include "validate/fabric_fit.h"
#include "validate/fabric_sweep.h"

namespace stratasim {
namespace {

using validate::BackendError;

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

// `fits` replace the entries of the same class and protocol (any GPU) in `c`; others stay.
void Merge(const std::vector<FabricCalibration>& fits, Calibration* c) {
  std::vector<FabricCalibration> kept;
  for (const FabricCalibration& old : c->fabric) {
    bool replaced = false;
    for (const FabricCalibration& f : fits) {
      replaced |= f.link_class == old.link_class && f.protocol == old.protocol && old.gpu.empty();
    }
    if (!replaced) kept.push_back(old);
  }
  kept.insert(kept.end(), fits.begin(), fits.end());
  c->fabric = kept;
}

}  // namespace

int CalibrateFabric(const FabricCalibrateOptions& o) {
  // Under mpirun or srun, one process per rank (docs/validate.md, "Fabric calibration").
  std::unique_ptr<mpi::MpiProcessGroup> processes;
  if (mpi::LaunchedByMpiLauncher()) {
    try {
      processes = std::make_unique<mpi::MpiProcessGroup>(o.comm_timeout_s);
    } catch (const Error& e) {
      std::cerr << "stratasim calibrate --fabric: " << e.what() << "\n";
      return 3;
    }
  }
  const bool root = !processes || processes->rank() == 0;
  std::ostream* log = root ? &std::cout : nullptr;
  const std::string out = o.out.empty() ? "stratasim-calibration-" + o.backend + ".yaml" : o.out;
  // Read the file to merge into before measuring: a bad file fails in seconds, not after.
  // Every process learns rank 0's verdict, so that none waits for a sweep that never starts.
  Calibration merged;
  std::string refused;
  if (root && Exists(out)) {
    try {
      merged = LoadCalibrationFile(out);
    } catch (const ConfigError& e) {
      refused = e.what();
      std::cerr << "stratasim calibrate --fabric: --out " << out << ": " << refused
                << " (fix or remove it; nothing measured)\n";
    }
  }
  if (processes) processes->Broadcast(&refused, 0);
  if (!refused.empty()) return 2;
  std::unique_ptr<validate::Backend> backend;
  try {
    // Multi-process: each process runs one rank (its own, RunOptions::processes).
    backend = validate::MakeBackend(o.backend, processes ? 1 : o.ranks);
  } catch (const BackendError& e) {
    std::cerr << "stratasim calibrate --fabric: " << e.what() << "\n";
    return 3;
  }
  validate::FabricSweep sweep;
  sweep.dtype = o.dtype;
  sweep.min_bytes = o.min_bytes;
  sweep.max_bytes = o.max_bytes > 0       ? o.max_bytes
                    : o.quick             ? 1024.0 * 1024
                    : o.backend == "cuda" ? 8.0 * 1024 * 1024 * 1024
                                          : 64.0 * 1024 * 1024;
  sweep.bench.warmup = o.quick ? 1 : 5;        // nccl-tests: -w 5 warm-up iterations
  sweep.bench.repetitions = o.quick ? 3 : 20;  // nccl-tests: -n 20
  sweep.bench.min_total_s = o.quick ? 0.002 : 0.02;
  sweep.max_op_s = o.quick ? 0.2 : 2.0;
  validate::RunOptions run_options;
  run_options.processes = processes.get();
  const validate::FabricRunner run = [&](const TaskGraph& g) {
    return backend->Run(g, run_options);
  };
  const int world = processes ? processes->size() : backend->NumRanks();
  std::vector<validate::FabricSample> samples;
  validate::FabricMeasurements m;
  try {
    for (const std::string& protocol : o.protocols) {
      // NCCL reads NCCL_PROTO when it creates a communicator (NCCL environment-variable
      // docs); the host backend has one transport and takes only "simple".
      if (o.backend == "cuda") {
        const std::string nccl = protocol == "simple" ? "Simple"
                                 : protocol == "ll"   ? "LL"
                                                      : "LL128";
        setenv("NCCL_PROTO", nccl.c_str(), 1);
      }
      m = validate::MeasureFabric(run, processes.get(), world, sweep, protocol, log);
      samples.insert(samples.end(), m.samples.begin(), m.samples.end());
    }
  } catch (const BackendError& e) {
    std::cerr << "stratasim calibrate --fabric: " << ToString(e.kind()) << ": " << e.what()
              << " (nothing written)\n";
    return 3;
  } catch (const validate::ProcessGroupError& e) {
    std::cerr << "stratasim calibrate --fabric: " << e.what() << " (nothing written)\n";
    return 3;
  }
  if (!root) return 0;
  if (samples.empty()) {
    std::cerr << "stratasim calibrate --fabric: no link class could be measured:";
    for (const std::string& u : m.unmeasured) std::cerr << "\n  " << u;
    std::cerr << "\n(nothing written)\n";
    return 3;
  }
  std::vector<validate::FabricClassFit> fits;
  try {
    fits = validate::FitFabric(samples);
  } catch (const Error& e) {
    std::cerr << "stratasim calibrate --fabric: " << e.what() << " (nothing written)\n";
    return 3;
  }
  for (const validate::FabricClassFit& f : fits) {
    std::cout << "fit " << f.link_class << " (" << f.protocol << "): latency "
              << FormatSeconds(f.latency_s) << " per hop, bandwidth "
              << FormatBandwidth(f.bandwidth_Bps) << "\n";
    for (const validate::FabricOpFit& op : f.ops) {
      std::cout << "    " << ToString(op.op) << " x" << op.group_size << ": alpha "
                << FormatSeconds(op.alpha_s) << " (" << FormatSeconds(op.hop_latency_s)
                << " per hop), busbw " << FormatBandwidth(op.bandwidth_Bps) << "\n";
    }
    for (const std::string& s : f.skipped) std::cout << "    skipped: " << s << "\n";
  }
  for (const std::string& u : m.unmeasured) std::cout << "not measured: " << u << "\n";
  Merge(validate::ToFabricCalibration(fits), &merged);
  if (merged.source.empty()) {
    merged.source = "stratasim calibrate --fabric --backend " + o.backend + " over " +
                    std::to_string(world) + (processes ? " processes" : " ranks of one process");
  }
  try {
    WriteFileAtomically(out, validate::CalibrationToYaml(merged));
  } catch (const Error& e) {
    std::cerr << "stratasim calibrate --fabric: " << e.what() << "\n";
    return 3;
  }
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace stratasim
