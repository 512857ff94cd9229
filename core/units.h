// Quantities with units, as scenario files write them ("300GB/s", "2us", "80GiB").
//
// Decimal prefixes (k, M, G, T, P) are powers of 1000 and binary ones (Ki, Mi, Gi, Ti) are
// powers of 1024, as vendors' datasheets use them (NVLink "300 GB/s" is 300e9 B/s; HBM "80 GB"
// on an A100 is 80 GiB-ish but sold as 80e9; write "80GiB" if you mean 2^30).
// A lower-case "b" is bits: "200Gb/s" = 25e9 B/s (InfiniBand HDR per port).
#ifndef STRATASIM_CORE_UNITS_H_
#define STRATASIM_CORE_UNITS_H_

#include <string>
#include <string_view>

#include "core/error.h"

namespace stratasim {

// Thrown by the parsers below; the message states the rule broken (the scenario loader adds
// file, line and key).
class UnitError : public Error {
 public:
  using Error::Error;
};

// "80GiB", "16GB", "512MiB", "4096", "1.5KB" -> bytes. A bare number is bytes.
double ParseBytes(std::string_view text);
// "300GB/s", "200Gb/s", "25GBps", "100Gbps" -> bytes per second.
double ParseBandwidthBps(std::string_view text);
// "2us", "1.5ms", "500ns", "3s" -> seconds. A bare number is seconds.
double ParseSeconds(std::string_view text);
// "312TFLOPS", "19.5TFLOP/s", "1e12" -> FLOP per second.
double ParseFlops(std::string_view text);

// Human-readable forms for reports ("1.50 GiB", "300.0 GB/s", "12.3 ms").
std::string FormatBytes(double bytes);
std::string FormatBandwidth(double bytes_per_s);
std::string FormatSeconds(double seconds);

}  // namespace stratasim

#endif  // STRATASIM_CORE_UNITS_H_
