#include "core/stragglers.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/text_number.h"

namespace stratasim {
namespace {

// SplitMix64's output function (Steele et al. 2014) used as a keyed hash: each draw is a pure
// function of (seed, entry, rank, iteration, stream), so factors do not depend on the order in
// which the simulator asks for them. (models/split_mix64.h is the sequential generator; core
// cannot include models/.)
std::uint64_t Mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in (0, 1): the top 53 bits, offset by half a step so that log() never sees 0.
double Unit(std::uint64_t seed, int entry, int rank, int iteration, int stream) {
  std::uint64_t h = Mix(seed);
  h = Mix(h ^ static_cast<std::uint64_t>(entry));
  h = Mix(h ^ static_cast<std::uint64_t>(rank));
  h = Mix(h ^ static_cast<std::uint64_t>(iteration));
  h = Mix(h ^ static_cast<std::uint64_t>(stream));
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

bool Selects(const StragglerSpec& s, int rank) {
  return std::find(s.ranks.begin(), s.ranks.end(), rank) != s.ranks.end();
}

std::string List(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out;
}

std::string Number(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

}  // namespace

std::string_view ToString(StragglerLevel level) {
  switch (level) {
    case StragglerLevel::kCompute:
      return "compute";
    case StragglerLevel::kLink:
      return "link";
    case StragglerLevel::kServer:
      return "server";
  }
  return "?";
}

double DrawFactor(const StragglerSpec& s, std::uint64_t seed, int entry, int rank, int iteration) {
  switch (s.draw) {
    case StragglerDraw::kFixed:
      return s.factor;
    case StragglerDraw::kUniform:
      return s.min + (s.max - s.min) * Unit(seed, entry, rank, iteration, 0);
    case StragglerDraw::kLognormal: {
      // Box-Muller from two independent uniforms.
      const double u1 = Unit(seed, entry, rank, iteration, 0);
      const double u2 = Unit(seed, entry, rank, iteration, 1);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      return std::max(1.0, s.median * std::exp(s.sigma * z));
    }
    case StragglerDraw::kTrace: {
      auto it = s.trace.find(iteration);
      return it == s.trace.end() ? 1.0 : it->second;
    }
  }
  return 1.0;
}

double Stragglers::SlowdownFactor(int rank, int iteration, StragglerLevel level) const {
  double factor = 1;
  for (size_t i = 0; i < entries.size(); ++i) {
    const StragglerSpec& s = entries[i];
    const bool applies =
        s.level == StragglerLevel::kServer || level == StragglerLevel::kServer || s.level == level;
    if (!applies || !Selects(s, rank)) continue;
    factor *= DrawFactor(s, seed, static_cast<int>(i), rank, iteration);
  }
  return factor;
}

bool Stragglers::HasPerIterationLinkFactor() const {
  return std::any_of(entries.begin(), entries.end(), [](const StragglerSpec& s) {
    return s.level != StragglerLevel::kCompute && s.draw != StragglerDraw::kFixed;
  });
}

std::vector<std::string> Stragglers::Describe() const {
  std::vector<std::string> out;
  for (const StragglerSpec& s : entries) {
    std::string line = "straggler: ";
    line += s.servers.empty() ? "GPUs " + List(s.ranks) : "servers " + List(s.servers);
    line += " " + std::string(ToString(s.level)) + " ";
    switch (s.draw) {
      case StragglerDraw::kFixed:
        line += "x" + Number(s.factor);
        break;
      case StragglerDraw::kUniform:
        line += "x uniform[" + Number(s.min) + ", " + Number(s.max) + "] per iteration";
        break;
      case StragglerDraw::kLognormal:
        line += "x max(1, lognormal(median " + Number(s.median) + ", sigma " + Number(s.sigma) +
                ")) per iteration";
        break;
      case StragglerDraw::kTrace:
        line += "x trace " + s.trace_file + " (" + std::to_string(s.trace.size()) + " iterations)";
        break;
    }
    out.push_back(line);
  }
  return out;
}

std::map<int, double> ParseStragglerTrace(const std::string& text, const std::string& file_label) {
  constexpr int kMaxIteration = 1000000;
  std::map<int, double> trace;
  std::map<int, int> line_of;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool first = true;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    auto fail = [&](int column, const std::string& rule) {
      throw ConfigError(SourceLocation{file_label, number, column}, "trace", line, rule);
    };
    std::string content = line.substr(start);
    content.erase(content.find_last_not_of(" \t") + 1);
    const bool header = first && content == "iteration,factor";
    first = false;
    if (header) continue;
    const size_t comma = content.find(',');
    if (comma == std::string::npos || content.find(',', comma + 1) != std::string::npos) {
      fail(static_cast<int>(start) + 1,
           "must be \"iteration,factor\" (two comma-separated numbers)");
    }
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t") + 1);
      return s;
    };
    const std::string it_text = trim(content.substr(0, comma));
    const std::string factor_text = trim(content.substr(comma + 1));
    const int factor_column = static_cast<int>(start + comma) + 2;
    long long it = 0;
    if (!ParseInteger(it_text, &it) || it < 0 || it >= kMaxIteration) {
      fail(static_cast<int>(start) + 1, "iteration must be an integer in [0, 1000000)");
    }
    double factor = 0;
    if (!ParseNumber(factor_text, &factor) || !std::isfinite(factor) || factor < 1 ||
        factor > 1000) {
      fail(factor_column, "factor must be a number in [1, 1000]");
    }
    const int iteration = static_cast<int>(it);
    if (trace.count(iteration) > 0) {
      fail(static_cast<int>(start) + 1, "iteration " + std::to_string(iteration) +
                                            " listed twice (first at line " +
                                            std::to_string(line_of[iteration]) + ")");
    }
    trace[iteration] = factor;
    line_of[iteration] = number;
  }
  if (trace.empty()) {
    throw ConfigError(SourceLocation{file_label, 1, 1}, "trace", "",
                      "lists no iteration (lines \"iteration,factor\")");
  }
  return trace;
}

}  // namespace stratasim
