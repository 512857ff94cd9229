// `stratasim report` (report_command.h).
#include "cli/report_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>

#include "cli/command_line.h"
#include "cli/exit_status.h"
#include "cli/phase.h"
#include "report/html_report.h"

namespace stratasim {

namespace po = boost::program_options;

std::vector<int> ParseGpuList(const std::string& list) {
  std::vector<int> gpus;
  size_t from = 0;
  while (from <= list.size()) {
    const size_t comma = std::min(list.find(',', from), list.size());
    const std::string item = list.substr(from, comma - from);
    // Digits only, and few enough to fit an int: no sign, no spaces, no empty items.
    if (item.empty() || item.size() > 9 ||
        !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      throw UsageError("--gpus " + list + ": \"" + item +
                       "\" is not a GPU rank (give ranks separated by commas, e.g. 0,1,8)");
    }
    const int gpu = std::stoi(item);
    if (std::find(gpus.begin(), gpus.end(), gpu) != gpus.end()) {
      throw UsageError("--gpus " + list + ": GPU " + item + " is named twice");
    }
    gpus.push_back(gpu);
    from = comma + 1;
  }
  return gpus;
}

void WriteRunReport(const std::string& out_dir) {
  SetPhase("writing the HTML report");
  const std::string file = out_dir + "/report.html";
  WriteHtmlReport(out_dir, file, ReportOptions{});
  std::cout << "report: " << file << "\n";
}

int ReportCommand(const std::vector<std::string>& args) {
  po::options_description opts("stratasim report options");
  opts.add_options()("help,h", "show this help")(
      "dir", po::value<std::string>()->required(),
      "outputs folder of `stratasim run` or `stratasim validate`")(
      "out,o", po::value<std::string>(), "the HTML file to write (default DIR/report.html)")(
      "gpus", po::value<std::string>(),
      "GPU ranks of the timeline, e.g. 0,1,8 (default: a few spread over the ranks)");
  po::positional_options_description pos;
  pos.add("dir", 1);
  if (WantsHelp(args)) {
    std::cout << "usage: stratasim report OUTDIR [--out FILE] [--gpus LIST]\n" << opts;
    return 0;
  }
  po::variables_map vm = ParseCommandLine(args, opts, pos);
  const std::string dir = vm["dir"].as<std::string>();
  if (!std::filesystem::is_directory(dir)) {
    throw UsageError(dir + ": not a folder (give the outputs folder of `stratasim run`)");
  }
  ReportOptions options;
  if (vm.count("gpus")) options.gpus = ParseGpuList(vm["gpus"].as<std::string>());
  std::string file = dir + "/report.html";
  if (vm.count("out")) {
    file = vm["out"].as<std::string>();
    if (file.empty()) throw UsageError("--out must not be empty (give a file, e.g. report.html)");
  }
  SetPhase("writing the HTML report");
  WriteHtmlReport(dir, file, options);
  std::cout << "report: " << file << "\n";
  return 0;
}

}  // namespace stratasim
