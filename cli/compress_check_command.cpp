#include "cli/compress_check_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/compress_check.h"
#include "cli/compress_check_report.h"
#include "cli/exit_status.h"
#include "cli/gradient_tensors.h"
#include "cli/npy_reader.h"
#include "cli/phase.h"
#include "core/scenario.h"
#include "core/units.h"
#include "models/token_distribution.h"
#include "report/atomic_file.h"
#include "strategies/comm/compressed_ddp.h"
#include "validate/calibration_fit.h"

namespace po = boost::program_options;

namespace stratasim {
namespace {

constexpr int kMaxTrials = 1000;
constexpr int kMaxWorkers = 64;
// 2^24 elements: a 64 MiB FP32 tensor per worker, about 0.8 GiB for 8 workers with the sums.
constexpr long long kDefaultMaxElements = 1LL << 24;
constexpr long long kMaxMaxElements = 1LL << 32;
// Token draws of all workers together: each is a Zipf inverse-transform step; 2^28 take a few
// seconds.
constexpr long long kMaxDraws = 1LL << 28;

// Bytes one check holds per gradient element: the workers' FP32 tensors, the decoded FP32 sum,
// the exact and the mean-over-trials sums in double.
double BytesPerElement(int workers) { return 4.0 * workers + 4 + 8 + 8; }

std::string Num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

template <typename T>
T Get(const po::variables_map& vm, const char* name) {
  return vm[name].as<T>();
}

bool Given(const po::variables_map& vm, const char* name) {
  return vm.count(name) > 0 && !vm[name].defaulted();
}

std::vector<CompressionMethod> ParseMethods(const std::string& list) {
  std::vector<CompressionMethod> methods;
  if (list == "all") return {std::begin(kAllCompressionMethods), std::end(kAllCompressionMethods)};
  std::string known;
  for (CompressionMethod m : kAllCompressionMethods) known += " " + std::string(ToString(m));
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    const std::optional<CompressionMethod> m = ParseCompressionMethod(name);
    if (!m)
      throw UsageError("--methods " + list + ": unknown method '" + name + "' (known:" + known +
                       ", or all)");
    if (std::find(methods.begin(), methods.end(), *m) != methods.end()) {
      throw UsageError("--methods " + list + ": '" + name + "' listed twice");
    }
    methods.push_back(*m);
  }
  if (methods.empty()) throw UsageError("--methods must name at least one method");
  return methods;
}

// The compressors to check: --methods' with their default options, or dense and every
// strategy of the scenario that compresses, with its options (CompressionOf); a scenario with
// none checks every method.
std::vector<CompressorToCheck> Compressors(const Scenario& s, const po::variables_map& vm,
                                           std::string* note) {
  std::vector<CompressorToCheck> out;
  auto method = [&](CompressionMethod m) {
    CompressorToCheck c;
    c.name = std::string(ToString(m));
    c.spec.method = m;
    c.spec.seed = s.training.seed;
    return c;
  };
  if (vm.count("methods")) {
    for (CompressionMethod m : ParseMethods(Get<std::string>(vm, "methods")))
      out.push_back(method(m));
    return out;
  }
  out.push_back(method(CompressionMethod::kDense));  // the reference
  for (const StrategySpec& spec : s.strategies) {
    const std::optional<CompressionSpec> c = CompressionOf(s, spec);
    if (!c) continue;
    out.push_back({spec.name, spec.name, *c});
  }
  if (out.size() == 1) {
    *note =
        "the scenario has no strategy that compresses: every method is checked with its "
        "default options (--methods to choose)";
    out.clear();
    for (CompressionMethod m : kAllCompressionMethods) out.push_back(method(m));
  }
  return out;
}

void CheckRange(const char* option, double v, double lo, double hi, const std::string& rule) {
  if (!(v >= lo && v <= hi))
    throw UsageError(std::string("--") + option + " " + Num(v) + ": " + rule);
}

// The tensors, and the report's description of them.
kernels::WorkerGradients MakeTensors(const Scenario& s, const po::variables_map& vm, int workers,
                                     long long max_elements, CompressCheckReport* r) {
  const double scale = Get<double>(vm, "scale");
  CheckRange("scale", scale, 1e-30, 1e30, "must be in [1e-30, 1e30]");
  const auto too_large = [&](long long rows, long long cols, const std::string& fix) {
    const double n = static_cast<double>(rows) * static_cast<double>(cols);
    return UsageError("the gradient is " + std::to_string(rows) + " x " + std::to_string(cols) +
                      " = " + Num(n) + " elements per worker, more than --max-elements " +
                      std::to_string(max_elements) + " (it would take about " +
                      FormatBytes(n * BytesPerElement(workers)) + " for " +
                      std::to_string(workers) + " workers): " + fix);
  };
  const std::vector<std::string> files =
      vm.count("npy") ? Get<std::vector<std::string>>(vm, "npy") : std::vector<std::string>{};
  const bool has_table = s.model.vocabulary > 0 && s.model.hidden > 0 && s.model.sequence > 0;
  std::string tensor = Given(vm, "tensor")                       ? Get<std::string>(vm, "tensor")
                       : !files.empty()                          ? "npy"
                       : (s.model.sparse_embedding && has_table) ? "embedding"
                                                                 : "dense";
  if (tensor != "embedding" && tensor != "dense" && tensor != "npy") {
    throw UsageError("--tensor " + tensor + ": must be embedding or dense (or give --npy FILE)");
  }
  if (!files.empty() && tensor != "npy") {
    throw UsageError("--npy and --tensor " + tensor +
                     " exclude each other: the tensor is the file's");
  }
  const char* dense_only[] = {"elements", "distribution", "density"};
  const char* embedding_only[] = {"rows", "cols"};
  auto refuse = [&](const char* option, const std::string& why) {
    if (Given(vm, option)) throw UsageError(std::string("--") + option + " " + why);
  };
  if (tensor != "dense") {
    for (const char* o : dense_only)
      refuse(o,
             "applies to a generated dense tensor (--tensor dense), not the " + tensor + " tensor");
  }
  if (tensor != "embedding") {
    for (const char* o : embedding_only)
      refuse(o, "applies to a generated embedding gradient (--tensor embedding), not the " +
                    tensor + " tensor");
  }
  if (tensor != "npy") refuse("noise", "applies to one --npy array shared by the workers");
  if (tensor == "npy") refuse("scale", "applies to generated tensors, not --npy arrays");
  r->source = tensor;
  r->texts.clear();
  r->numbers.clear();
  if (tensor == "embedding") {
    if (!has_table) {
      throw UsageError("--tensor embedding: the scenario's model (" + s.model.kind +
                       ") has no token table (vocabulary, hidden, sequence)");
    }
    const long long rows = Given(vm, "rows") ? Get<long long>(vm, "rows") : s.model.vocabulary;
    const long long cols = Given(vm, "cols") ? Get<long long>(vm, "cols") : s.model.hidden;
    CheckRange("rows", static_cast<double>(rows), 1, 2147483647, "must be in [1, 2^31 - 1]");
    CheckRange("cols", static_cast<double>(cols), 1, static_cast<double>(max_elements),
               "must be in [1, --max-elements]");
    if (rows > max_elements / cols) {
      throw too_large(rows, cols,
                      "shrink it with --cols " +
                          std::to_string(std::max(1LL, max_elements / rows)) +
                          " (the same rows, so the same sparsity) or --rows, or raise "
                          "--max-elements");
    }
    const int replicas = s.cluster.NumGpus();
    const long long samples = std::max(1, s.training.global_batch / replicas);
    const long long draws = samples * s.model.sequence;
    if (draws > kMaxDraws / workers) {
      throw UsageError(std::to_string(workers) + " workers x " + std::to_string(draws) +
                       " tokens each are more than the " + std::to_string(kMaxDraws) +
                       " token draws compress-check makes: fewer --workers");
    }
    const double exponent = s.model.token_distribution == "uniform" ? 0.0 : s.model.zipf_exponent;
    const TokenDistribution tokens(static_cast<int>(rows), exponent);
    r->description = "embedding gradient " + std::to_string(rows) + " x " + std::to_string(cols) +
                     ", " + std::to_string(draws) + " tokens per worker (" +
                     (exponent == 0 ? std::string("uniform") : "zipf " + Num(exponent)) + ")";
    r->texts = {{"token_distribution", exponent == 0 ? "uniform" : "zipf"}};
    r->numbers = {{"zipf_exponent", exponent},
                  {"tokens_per_worker", static_cast<double>(draws)},
                  {"scale", scale}};
    SetPhase("drawing the embedding gradients");
    return EmbeddingGradients(tokens, cols, draws, workers, s.training.seed, scale);
  }
  if (tensor == "dense") {
    const long long n = Get<long long>(vm, "elements");
    const double density = Get<double>(vm, "density");
    const std::string dist_name = Get<std::string>(vm, "distribution");
    const std::optional<ValueDistribution> dist = ParseValueDistribution(dist_name);
    if (!dist) throw UsageError("--distribution " + dist_name + ": must be normal or laplace");
    CheckRange("density", density, 1e-9, 1, "must be in (0, 1]");
    if (n < 1) throw UsageError("--elements " + std::to_string(n) + ": must be at least 1");
    if (n > max_elements) throw too_large(n, 1, "fewer --elements, or raise --max-elements");
    r->description = "dense gradient of " + std::to_string(n) + " elements, " + dist_name +
                     ", density " + Num(density);
    r->texts = {{"distribution", dist_name}};
    r->numbers = {{"density", density}, {"scale", scale}};
    SetPhase("drawing the dense gradients");
    return DenseGradients(n, *dist, density, workers, s.training.seed, scale);
  }
  const double noise = Get<double>(vm, "noise");
  CheckRange("noise", noise, 0, 10, "must be in [0, 10]");
  std::vector<NpyArray> arrays;
  std::string names;
  for (const std::string& f : files) {
    SetPhase("reading the array", f);
    arrays.push_back(ReadNpyFile(f, max_elements));
    names += (names.empty() ? "" : ", ") + f;
  }
  r->description = std::to_string(arrays[0].rows) + " x " + std::to_string(arrays[0].cols) +
                   " from " + names +
                   (arrays.size() == 1 ? ", noise " + Num(noise) + " per worker" : "");
  r->texts = {{"files", names}};
  r->numbers = {{"noise", arrays.size() == 1 ? noise : 0.0}};
  try {
    return ArrayGradients(arrays, workers, noise, s.training.seed);
  } catch (const Error& e) {
    throw UsageError(std::string("--npy: ") + e.what());
  }
}

}  // namespace

int CompressCheckCommand(const std::vector<std::string>& args) {
  po::options_description opts("stratasim compress-check options (docs/compress-check.md)");
  opts.add_options()("help,h", "show this help")("scenario", po::value<std::string>()->required(),
                                                 "scenario YAML file")(
      "methods,m", po::value<std::string>(),
      "check these methods with their default options, comma-separated (dense,coo,omnireduce,"
      "s2reducer,casq,topk,qsgd,terngrad,fp16,fp8,int8) or all; default: dense and the "
      "scenario's strategies that compress, with their options")(
      "trials,t", po::value<int>()->default_value(5),
      "trials, each with its own iteration and seed; the bias is the mean's error")(
      "workers,w", po::value<int>(),
      "workers whose gradients are summed (default: min(data-parallel degree, 8); with "
      "several --npy files: their number)")(
      "tensor", po::value<std::string>(),
      "embedding (default for a gpt with sparse_embedding: true) or dense (otherwise)")(
      "rows", po::value<long long>(), "embedding: rows of the table (default: the vocabulary)")(
      "cols", po::value<long long>(),
      "embedding: columns of the table (default: hidden); shrinking it keeps the sparsity")(
      "elements", po::value<long long>()->default_value(1LL << 20), "dense: elements")(
      "distribution", po::value<std::string>()->default_value("normal"),
      "dense: normal or laplace, each of unit variance times --scale")(
      "density", po::value<double>()->default_value(1.0),
      "dense: probability that an element is non-zero")(
      "scale", po::value<double>()->default_value(1.0),
      "generated tensors: standard deviation of one token's contribution (embedding) or of one "
      "element (dense)")(
      "npy", po::value<std::vector<std::string>>()->composing(),
      "a .npy array (<f4 or <f8, C order, 1-D or 2-D): one for all workers (each adds --noise), "
      "or one per worker (repeat)")(
      "noise", po::value<double>()->default_value(0.1),
      "one --npy array: each worker adds N(0, (noise x rms)^2) to its non-zero elements")(
      "max-elements", po::value<long long>()->default_value(kDefaultMaxElements),
      "refuse a tensor of more elements per worker")(
      "out,o", po::value<std::string>(),
      "output folder for compress_check.json and .csv (default stratasim-out/<scenario name>)")(
      "calibration-out", po::value<std::string>(),
      "also write the measured per-element encode/decode times as a calibration file")(
      "gpu", po::value<std::string>(),
      "the GPU kind the calibration file names (default: the scenario's first)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    std::cout << "usage: stratasim compress-check SCENARIO [options]\n" << opts;
    return 0;
  }
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  const int trials = Get<int>(vm, "trials");
  if (trials < 1 || trials > kMaxTrials) {
    throw UsageError("--trials " + std::to_string(trials) + ": must be in [1, " +
                     std::to_string(kMaxTrials) + "]");
  }
  if (vm.count("workers")) {
    const int w = Get<int>(vm, "workers");
    if (w < 1 || w > kMaxWorkers) {
      throw UsageError("--workers " + std::to_string(w) + ": must be in [1, " +
                       std::to_string(kMaxWorkers) + "]");
    }
  }
  const long long max_elements = Get<long long>(vm, "max-elements");
  if (max_elements < 1 || max_elements > kMaxMaxElements) {
    throw UsageError("--max-elements " + std::to_string(max_elements) + ": must be in [1, 2^32]");
  }
  for (const char* o : {"out", "calibration-out", "gpu"}) {
    if (vm.count(o) && Get<std::string>(vm, o).empty()) {
      throw UsageError(std::string("--") + o + " must not be empty");
    }
  }
  if (vm.count("gpu") && !vm.count("calibration-out")) {
    throw UsageError("--gpu names the GPU kind of --calibration-out: give that too");
  }

  const std::string scenario_file = Get<std::string>(vm, "scenario");
  SetPhase("reading the scenario");
  const Scenario s = LoadScenarioFile(scenario_file);
  if (!s.jobs.empty()) {
    throw UsageError(scenario_file +
                     " lists jobs, not strategies: compress-check takes its model and strategies "
                     "from a scenario of strategies");
  }
  std::string note;
  const std::vector<CompressorToCheck> compressors = Compressors(s, vm, &note);

  const int npy_files =
      vm.count("npy") ? static_cast<int>(Get<std::vector<std::string>>(vm, "npy").size()) : 0;
  int workers = std::min(s.cluster.NumGpus(), 8);
  if (npy_files > 1) workers = npy_files;
  if (vm.count("workers")) workers = Get<int>(vm, "workers");

  CompressCheckReport r;
  r.scenario = s.name;
  r.scenario_file = scenario_file;
  r.seed = s.training.seed;
  r.trials = trials;
  r.workers = workers;
  const kernels::WorkerGradients g = MakeTensors(s, vm, workers, max_elements, &r);
  r.shape = g.shape;
  r.rows = CountRows(g);
  SetPhase("summing the gradients exactly");
  ExactSum exact;
  try {
    exact = ExactSumOf(g);
  } catch (const Error& e) {
    throw UsageError(std::string("the tensor: ") + e.what());
  }
  r.exact_norm = exact.norm;
  for (const CompressorToCheck& c : compressors) {
    SetPhase("running compressor", c.name);
    r.compressors.push_back(CheckCompressor(c, g, exact, trials));
  }

  SetPhase("writing the outputs");
  const std::string out = vm.count("out") ? Get<std::string>(vm, "out") : "stratasim-out/" + s.name;
  CreateDirectories(out);
  WriteFileAtomically(out + "/compress_check.csv", CompressCheckToCsv(r));
  // Last, so that a complete compress_check.json means the CSV is in place too.
  WriteFileAtomically(out + "/compress_check.json", CompressCheckToJson(r));
  if (!note.empty()) std::cout << "note: " << note << "\n";
  std::cout << FormatCompressCheckTable(r);
  std::cout << "outputs: " << out << "/compress_check.json, compress_check.csv\n";
  if (vm.count("calibration-out")) {
    if (s.cluster.groups.empty())
      throw UsageError("--calibration-out: the scenario has no GPU kind; give --gpu");
    const std::string gpu = vm.count("gpu") ? Get<std::string>(vm, "gpu") : s.cluster.groups[0].gpu;
    const std::string file = Get<std::string>(vm, "calibration-out");
    const std::string source =
        "stratasim compress-check " + scenario_file +
        ": CPU-reference times of the compressors' kernels on this machine (median of " +
        std::to_string(trials) + " trials), per gradient element, not " + gpu + " times";
    WriteFileAtomically(file,
                        validate::CalibrationToYaml(CompressionCalibrationOf(r, gpu, source)));
    std::cout << "calibration: " << file << " (gpu " << gpu << ", CPU-reference times)\n";
  }
  return r.AllOk() ? 0 : 1;
}

}  // namespace stratasim
