#include "cli/calibrate_command.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/calibrate_fabric.h"
#include "core/error.h"
#include "core/units.h"
#include "report/atomic_file.h"
#include "validate/backend.h"
#include "validate/calibration_fit.h"
#include "validate/calibration_sweep.h"

namespace po = boost::program_options;

namespace stratasim {
namespace {

using validate::Backend;
using validate::BackendError;

struct CalibrateOptions {
  std::string backend = "host";
  std::string out;
  int ranks = 0;
  DType dtype = DType::kFP32;
  double min_bytes = 1024;
  double max_bytes = 16 * 1024 * 1024;
  bool quick = false;
};

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

int Calibrate(const CalibrateOptions& o) {
  std::unique_ptr<Backend> backend;
  try {
    backend = validate::MakeBackend(o.backend, o.ranks);
  } catch (const BackendError& e) {
    std::cerr << "stratasim calibrate: " << e.what() << "\n";
    return 3;
  }
  validate::CalibrationSweep sweep;
  sweep.dtype = o.dtype;
  sweep.min_bytes = o.min_bytes;
  sweep.max_bytes = o.max_bytes;
  sweep.quick = o.quick;
  validate::CalibrationMeasurements m;
  try {
    m = validate::MeasureForCalibration(*backend, sweep, &std::cout);
  } catch (const BackendError& e) {
    std::cerr << "stratasim calibrate: " << ToString(e.kind()) << ": " << e.what()
              << " (nothing written)\n";
    return 3;
  } catch (const Error& e) {
    std::cerr << "stratasim calibrate: --dtype " << ToString(o.dtype) << ": " << e.what() << "\n";
    return 2;
  }
  const Calibration c = validate::FitCalibration(m);
  const std::string out =
      o.out.empty() ? "stratasim-calibration-" + backend->Name() + ".yaml" : o.out;
  WriteFileAtomically(out, validate::CalibrationToYaml(c));
  const GpuCalibration& g = c.gpus.at(0);
  std::cout << "fit: launch " << FormatSeconds(*g.kernel_launch_s) << ", memory efficiency "
            << (g.memory_efficiency ? Fixed(*g.memory_efficiency, 3) : "-") << "\n";
  for (const auto& [op, bands] : g.compute) {
    std::cout << "     " << ToString(op) << " efficiency by FLOPs:";
    for (const EfficiencyBand& b : bands) {
      std::cout << " "
                << (std::isfinite(b.max_flops) ? "<=" + Fixed(b.max_flops / 1e6, 1) + "M" : "rest")
                << ":" << Fixed(b.efficiency, 3);
    }
    std::cout << "\n";
  }
  for (const CollectiveCalibration& cc : c.collectives) {
    std::cout << "     " << ToString(cc.kind) << " x" << cc.group_size << ": latency "
              << FormatSeconds(cc.latency_s) << ", bandwidth " << FormatBandwidth(cc.bandwidth_Bps)
              << "\n";
  }
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

int CalibrateCommand(const std::vector<std::string>& args) {
  po::options_description opts("stratasim calibrate options");
  opts.add_options()("help,h", "show this help")("backend,b",
                                                 po::value<std::string>()->default_value("host"),
                                                 "host (CPU threads) or cuda (GPUs and NCCL)")(
      "out,o", po::value<std::string>(),
      "calibration file to write (default stratasim-calibration-<backend>.yaml)")(
      "ranks", po::value<int>()->default_value(0),
      "ranks the backend offers (host: threads; default: all)")(
      "dtype,d", po::value<std::string>()->default_value("fp32"), "GEMM element type")(
      "min-bytes", po::value<std::string>()->default_value("1KiB"), "smallest collective size")(
      "max-bytes", po::value<std::string>()->default_value("16MiB"),
      "largest collective size (sizes grow 4x)")(
      "quick", po::bool_switch(), "fewer repetitions and smaller sweeps (tests, smoke checks)")(
      "fabric", po::bool_switch(),
      "measure the links instead (nccl-tests-like sweeps per link class, 8 B doubling to "
      "--max-bytes: default 8GiB on cuda, 64MiB on host, 1MiB with --quick); run under "
      "`mpirun -np N` for one process per rank, else one process runs --ranks ranks")(
      "protocols", po::value<std::string>()->default_value("simple"),
      "--fabric: protocols to sweep, comma-separated (host: simple; cuda: simple, ll, ll128 "
      "via NCCL_PROTO)")("comm-timeout", po::value<double>()->default_value(300),
                         "--fabric under mpirun: seconds a process waits for a peer");
  CalibrateOptions o;
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(opts).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: stratasim calibrate [options]\n" << opts;
      return 0;
    }
    o.backend = vm["backend"].as<std::string>();
    if (o.backend != "host" && o.backend != "cuda") {
      throw po::error("--backend " + o.backend + ": must be host or cuda");
    }
    if (vm.count("out")) o.out = vm["out"].as<std::string>();
    o.ranks = vm["ranks"].as<int>();
    if (o.ranks < 0) throw po::error("--ranks must be >= 0");
    const auto d = ParseDType(vm["dtype"].as<std::string>());
    if (!d) throw po::error("--dtype " + vm["dtype"].as<std::string>() + ": not a type");
    o.dtype = *d;
    try {
      o.min_bytes = ParseBytes(vm["min-bytes"].as<std::string>());
      o.max_bytes = ParseBytes(vm["max-bytes"].as<std::string>());
    } catch (const UnitError& e) {
      throw po::error(std::string("--min-bytes/--max-bytes: ") + e.what());
    }
    if (o.min_bytes < 4 || o.max_bytes < o.min_bytes) {
      throw po::error("--min-bytes must be >= 4 and <= --max-bytes");
    }
    o.quick = vm["quick"].as<bool>();
    if (vm["fabric"].as<bool>()) {
      FabricCalibrateOptions f;
      f.backend = o.backend;
      f.out = o.out;
      f.ranks = o.ranks;
      f.dtype = o.dtype;
      f.quick = o.quick;
      f.comm_timeout_s = vm["comm-timeout"].as<double>();
      if (!(f.comm_timeout_s > 0)) throw po::error("--comm-timeout must be > 0 seconds");
      // The fabric sweep's own defaults (nccl-tests -b 8 -e 8G) unless given.
      if (!vm["min-bytes"].defaulted()) f.min_bytes = o.min_bytes;
      if (!vm["max-bytes"].defaulted()) f.max_bytes = o.max_bytes;
      f.protocols.clear();
      std::istringstream list(vm["protocols"].as<std::string>());
      for (std::string p; std::getline(list, p, ',');) {
        const bool known = p == "simple" || p == "ll" || p == "ll128";
        if (!known || (o.backend == "host" && p != "simple")) {
          throw po::error("--protocols " + p + ": " +
                          (known ? "the host backend has one transport: simple"
                                 : "not a protocol (simple, ll, ll128)"));
        }
        f.protocols.push_back(p);
      }
      if (f.protocols.empty()) throw po::error("--protocols: give at least one");
      return CalibrateFabric(f);
    }
  } catch (const po::error& e) {
    std::cerr << "stratasim calibrate: " << e.what() << "\n";
    return 2;
  }
  return Calibrate(o);
}

}  // namespace stratasim
