#include "core/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace stratasim {
namespace {

// One unit spelling and what one of it is worth in the base unit (bytes, B/s, seconds, FLOP/s).
struct Unit {
  std::string_view name;
  double scale;
};

// What a parser is reading: its name in messages, its units, whether a bare number is allowed
// and examples shown when the unit is not understood.
struct Quantity {
  std::string_view kind;
  const Unit* units;
  size_t num_units;
  bool bare_number_ok;
  std::string_view examples;
};

constexpr double kKi = 1024.0;

constexpr Unit kByteUnits[] = {
    {"B", 1},
    {"kB", 1e3},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"PB", 1e15},
    {"KiB", kKi},
    {"MiB", kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"PiB", kKi* kKi* kKi* kKi* kKi},
};

// Lower-case "b" is bits (network vendors' Gb/s), upper-case "B" bytes; "ps" is "per second".
constexpr Unit kBandwidthUnits[] = {
    {"B/s", 1},
    {"kB/s", 1e3},
    {"KB/s", 1e3},
    {"MB/s", 1e6},
    {"GB/s", 1e9},
    {"TB/s", 1e12},
    {"KiB/s", kKi},
    {"MiB/s", kKi* kKi},
    {"GiB/s", kKi* kKi* kKi},
    {"TiB/s", kKi* kKi* kKi* kKi},
    {"b/s", 1.0 / 8},
    {"kb/s", 1e3 / 8},
    {"Kb/s", 1e3 / 8},
    {"Mb/s", 1e6 / 8},
    {"Gb/s", 1e9 / 8},
    {"Tb/s", 1e12 / 8},
    {"Bps", 1},
    {"kBps", 1e3},
    {"KBps", 1e3},
    {"MBps", 1e6},
    {"GBps", 1e9},
    {"TBps", 1e12},
    {"bps", 1.0 / 8},
    {"kbps", 1e3 / 8},
    {"Kbps", 1e3 / 8},
    {"Mbps", 1e6 / 8},
    {"Gbps", 1e9 / 8},
    {"Tbps", 1e12 / 8},
};

constexpr Unit kTimeUnits[] = {
    {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6} /* µs */, {"ns", 1e-9},
};

constexpr Unit kFlopsUnits[] = {
    {"FLOPS", 1},     {"FLOP/s", 1},     {"kFLOPS", 1e3},  {"kFLOP/s", 1e3},  {"KFLOPS", 1e3},
    {"KFLOP/s", 1e3}, {"MFLOPS", 1e6},   {"MFLOP/s", 1e6}, {"GFLOPS", 1e9},   {"GFLOP/s", 1e9},
    {"TFLOPS", 1e12}, {"TFLOP/s", 1e12}, {"PFLOPS", 1e15}, {"PFLOP/s", 1e15},
};

template <size_t N>
constexpr Quantity MakeQuantity(std::string_view kind, const Unit (&units)[N], bool bare_ok,
                                std::string_view examples) {
  return Quantity{kind, units, N, bare_ok, examples};
}

constexpr Quantity kBytes =
    MakeQuantity("a size in bytes", kByteUnits, true, "\"80GiB\", \"16GB\", \"4096\"");
// A bare bandwidth is refused: bits or bytes per second is too easy to get wrong by 8x.
constexpr Quantity kBandwidth =
    MakeQuantity("a bandwidth", kBandwidthUnits, false, "\"300GB/s\", \"200Gb/s\"");
constexpr Quantity kTime = MakeQuantity("a duration", kTimeUnits, true, "\"2us\", \"1.5ms\"");
constexpr Quantity kFlops =
    MakeQuantity("a FLOP rate", kFlopsUnits, true, "\"312TFLOPS\", \"19.5TFLOP/s\"");

[[noreturn]] void Fail(const Quantity& q, const std::string& rule) {
  throw UnitError("not " + std::string(q.kind) + ": " + rule);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length of the decimal number at the start of `s` ([+-]digits[.digits][e[+-]digits]), 0 if
// none. Written out rather than left to strtod, which would also take "inf", "nan" and hex.
size_t NumberLength(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return 0;
  // An exponent only when digits follow, so that a unit starting with "e" would still parse.
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && IsDigit(s[j])) {
      while (j < s.size() && IsDigit(s[j])) ++j;
      i = j;
    }
  }
  return i;
}

bool StartsWithNonFinite(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  std::string lower;
  for (char c : s.substr(0, 3))
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "inf" || lower == "nan";
}

double Parse(std::string_view text, const Quantity& q) {
  std::string_view s = Trim(text);
  if (s.empty()) Fail(q, "empty (expected e.g. " + std::string(q.examples) + ")");
  size_t n = NumberLength(s);
  if (n == 0) {
    if (StartsWithNonFinite(s)) Fail(q, "must be a finite number");
    Fail(q, "no number (expected e.g. " + std::string(q.examples) + ")");
  }
  double value = std::strtod(std::string(s.substr(0, n)).c_str(), nullptr);
  if (!std::isfinite(value)) Fail(q, "must be a finite number");
  if (value < 0) Fail(q, "must not be negative");
  std::string_view unit = Trim(s.substr(n));
  double scale = 0;
  if (unit.empty()) {
    if (!q.bare_number_ok) {
      Fail(q, "missing unit (expected e.g. " + std::string(q.examples) + ")");
    }
    scale = 1;
  } else {
    for (size_t i = 0; i < q.num_units; ++i) {
      if (q.units[i].name == unit) scale = q.units[i].scale;
    }
    if (scale == 0) {
      Fail(q, "unknown unit \"" + std::string(unit) + "\" (expected e.g. " +
                  std::string(q.examples) + ")");
    }
  }
  double result = value * scale;
  if (!std::isfinite(result)) Fail(q, "must be a finite number");
  return result == 0 ? 0.0 : result;  // "-0" reads as 0, not -0
}

// "<value with `decimals` decimals> <unit>".
std::string WithUnit(double value, int decimals, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f %s", decimals, value, unit);
  return buf;
}

}  // namespace

double ParseBytes(std::string_view text) { return Parse(text, kBytes); }
double ParseBandwidthBps(std::string_view text) { return Parse(text, kBandwidth); }
double ParseSeconds(std::string_view text) { return Parse(text, kTime); }
double ParseFlops(std::string_view text) { return Parse(text, kFlops); }

std::string FormatBytes(double bytes) {
  static const char* const kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = std::fabs(bytes);
  if (v < kKi) return WithUnit(bytes, 0, "B");
  int i = 0;
  // Step up while the value would print as 1024.00 or more in the current unit.
  while (i + 1 < 6 && v >= kKi - 0.005) {
    v /= kKi;
    ++i;
  }
  return WithUnit(std::copysign(v, bytes), 2, kNames[i]);
}

std::string FormatBandwidth(double bytes_per_s) {
  // Decimal prefixes, as link datasheets quote them; GB/s is the largest so that figures read
  // like the datasheets ("2039.0 GB/s", not "2.0 TB/s").
  static const char* const kNames[] = {"B/s", "kB/s", "MB/s", "GB/s"};
  double v = std::fabs(bytes_per_s);
  int i = 0;
  while (i + 1 < 4 && v >= 999.95) {
    v /= 1e3;
    ++i;
  }
  return WithUnit(std::copysign(v, bytes_per_s), 1, kNames[i]);
}

std::string FormatSeconds(double seconds) {
  if (seconds == 0 || !std::isfinite(seconds)) return WithUnit(seconds, 0, "s");
  // Round to 3 significant digits first, so that 999.7 us becomes "1.00 ms", not "1000 us".
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2e", seconds);
  double rounded = std::strtod(buf, nullptr);
  double v = std::fabs(rounded);
  const char* unit = "s";
  double scale = 1;
  if (v < 1e-6) {
    unit = "ns";
    scale = 1e9;
  } else if (v < 1e-3) {
    unit = "us";
    scale = 1e6;
  } else if (v < 1) {
    unit = "ms";
    scale = 1e3;
  }
  double shown = std::fabs(rounded * scale);
  int decimals = shown >= 100 ? 0 : shown >= 10 ? 1 : shown >= 1 ? 2 : 3;
  return WithUnit(rounded * scale, decimals, unit);
}

}  // namespace stratasim
