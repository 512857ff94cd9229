// What `stratasim compress-check` prints and writes: the console table, compress_check.json and
// compress_check.csv, and the calibration entries of --calibration-out (docs/compress-check.md).
//
// The files hold the measured wall times apart: in JSON under each compressor's "measured"
// object, in CSV in the columns named measured_*, last. Every other byte is a function of the
// scenario, the options and the seed.
#ifndef STRATASIM_CLI_COMPRESS_CHECK_REPORT_H_
#define STRATASIM_CLI_COMPRESS_CHECK_REPORT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cli/compress_check.h"
#include "core/calibration.h"

namespace stratasim {

struct CompressCheckReport {
  std::string scenario;       // its name
  std::string scenario_file;  // as given on the command line
  std::uint64_t seed = 0;
  int trials = 0;
  // The tensors: "embedding", "dense" or "npy", in words, and the settings that made them
  // (numbers and texts, in the order given).
  std::string source;
  std::string description;
  std::vector<std::pair<std::string, double>> numbers;
  std::vector<std::pair<std::string, std::string>> texts;
  GradientShape shape;
  int workers = 0;
  RowCounts rows;
  double exact_norm = 0;
  std::vector<CompressorCheck> compressors;

  bool AllOk() const;
};

std::string FormatCompressCheckTable(const CompressCheckReport& r);
std::string CompressCheckToJson(const CompressCheckReport& r);
std::string CompressCheckToCsv(const CompressCheckReport& r);

// A calibration of GPU kind `gpu` with the per-element encode and decode times of every
// compressor that ran (the first of each method when several share it), `source` saying how
// they were measured.
Calibration CompressionCalibrationOf(const CompressCheckReport& r, const std::string& gpu,
                                     const std::string& source);

}  // namespace stratasim

#endif  // STRATASIM_CLI_COMPRESS_CHECK_REPORT_H_
