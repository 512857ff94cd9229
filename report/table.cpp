#include "report/table.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace stratasim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr const char* kColumnGap = "  ";

enum class Align { kLeft, kRight };

struct Column {
  const char* header;
  Align align;
};

// The figures columns follow `strategy` and `kind`; a failed row replaces all of them with
// its error, so that the reader sees why instead of zeros that look like results.
constexpr Column kColumns[] = {
    {"strategy", Align::kLeft},
    {"kind", Align::kLeft},
    {"iter (ms)", Align::kRight},
    {"samples/s", Align::kRight},
    {"tokens/s", Align::kRight},
    {"TFLOP/s/GPU", Align::kRight},
    {"MFU %", Align::kRight},
    {"HFU %", Align::kRight},
    {"exposed comm %", Align::kRight},
    {"exposed by kind %", Align::kLeft},
    {"idle %", Align::kRight},
    {"peak mem/GPU (GiB)", Align::kRight},
    {"sim", Align::kLeft},
    {"vs best", Align::kRight},
};
constexpr size_t kNumColumns = sizeof(kColumns) / sizeof(kColumns[0]);

// snprintf into a std::string: fixed precision keeps the output identical across runs and
// platforms, which iostream formatting (locale, stream state) does not guarantee as simply.
__attribute__((format(printf, 1, 2))) std::string Format(const char* fmt, ...) {
  char buf[64];
  va_list args;
  va_start(args, fmt);
  int n = std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  if (n < 0) return "?";
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, n);
  // Only absurd magnitudes get here (a double printed with %.0f can take 300+ digits).
  std::string out(static_cast<size_t>(n) + 1, '\0');
  va_start(args, fmt);
  std::vsnprintf(out.data(), out.size(), fmt, args);
  va_end(args);
  out.resize(static_cast<size_t>(n));
  return out;
}

double MaxPeakMemoryBytes(const Metrics& m) {
  double peak = 0;
  for (double b : m.peak_memory_bytes) peak = std::max(peak, b);
  return peak;
}

// The iteration time every row is compared with; 0 when no strategy has one.
double BestIterationTime(const std::vector<StrategyResult>& strategies) {
  double best_fitting = std::numeric_limits<double>::infinity();
  double best_any = std::numeric_limits<double>::infinity();
  for (const StrategyResult& s : strategies) {
    double t = s.metrics.iteration_time_s;
    if (!s.ok || !(t > 0)) continue;
    best_any = std::min(best_any, t);
    if (s.metrics.oom_ranks.empty()) best_fitting = std::min(best_fitting, t);
  }
  if (best_fitting < std::numeric_limits<double>::infinity()) return best_fitting;
  if (best_any < std::numeric_limits<double>::infinity()) return best_any;
  return 0;
}

// A figure that was not measured (a CNN has no tokens, a trace without memory events has no
// peak) reads "-" rather than a misleading 0.
std::string FigureOrDash(double value, const char* fmt) {
  if (!(value > 0)) return "-";
  return Format(fmt, value);
}

// "tp 5.1 dp 0.3": exposed communication per category, in category order, leaving out those
// under 0.05% of the iteration; "-" when none is left.
std::string ExposedByKind(const Metrics& m) {
  std::string out;
  for (const auto& [category, fraction] : m.exposed_comm_by_category) {
    if (fraction * 100 < 0.05) continue;
    out += (out.empty() ? "" : " ") + category + Format(" %.1f", fraction * 100);
  }
  return out.empty() ? "-" : out;
}

std::vector<std::string> FormatRow(const StrategyResult& s, double best_time_s) {
  std::vector<std::string> row = {s.name, s.kind};
  if (!s.ok) {
    row.push_back("FAILED: " + s.error);
    return row;
  }
  const Metrics& m = s.metrics;
  row.push_back(FigureOrDash(m.iteration_time_s * 1e3, "%.2f"));
  row.push_back(FigureOrDash(m.samples_per_s, "%.1f"));
  row.push_back(FigureOrDash(m.tokens_per_s, "%.0f"));
  row.push_back(FigureOrDash(m.tflops_per_gpu, "%.1f"));
  row.push_back(FigureOrDash(m.mfu * 100, "%.1f"));
  row.push_back(FigureOrDash(m.hfu * 100, "%.1f"));
  // Zero exposed communication is a real result (all of it overlapped), not a missing one.
  row.push_back(Format("%.1f", m.exposed_comm_fraction * 100));
  row.push_back(ExposedByKind(m));
  row.push_back(Format("%.1f", m.idle_fraction * 100));
  std::string memory =
      m.peak_memory_bytes.empty() ? "-" : Format("%.2f", MaxPeakMemoryBytes(m) / kGiB);
  if (!m.oom_ranks.empty()) memory += " OOM";
  row.push_back(memory);
  // "folded" or "full" (docs/scale.md); why not folded is in the notes below the table.
  row.push_back(s.fold.rfind("folded", 0) == 0 ? "folded" : "full");
  if (best_time_s > 0 && m.iteration_time_s > 0) {
    row.push_back(Format("%.2fx", m.iteration_time_s / best_time_s));
  } else {
    row.push_back("-");
  }
  return row;
}

// "OOM on rank 3: peak 92.1 GiB > 74.5 GiB (activations 70.2, optimizer 16.3, ...)": the rank
// that overflows most, and what its memory held at its peak, largest first. Parts the metrics
// do not have (capacity, breakdown) are left out.
std::string OomNote(const Metrics& m) {
  int worst = m.oom_ranks.front();
  auto capacity = [&](int rank) {
    return rank < static_cast<int>(m.memory_capacity_bytes.size()) ? m.memory_capacity_bytes[rank]
                                                                   : 0.0;
  };
  auto peak = [&](int rank) {
    return rank < static_cast<int>(m.peak_memory_bytes.size()) ? m.peak_memory_bytes[rank] : 0.0;
  };
  for (int rank : m.oom_ranks) {
    if (peak(rank) - capacity(rank) > peak(worst) - capacity(worst)) worst = rank;
  }
  std::string note = m.oom_ranks.size() > 1
                         ? Format("OOM on %zu ranks, worst rank %d", m.oom_ranks.size(), worst)
                         : Format("OOM on rank %d", worst);
  note += Format(": peak %.1f GiB", peak(worst) / kGiB);
  if (capacity(worst) > 0) note += Format(" > %.1f GiB", capacity(worst) / kGiB);
  if (worst < static_cast<int>(m.peak_memory_breakdown.size()) &&
      !m.peak_memory_breakdown[worst].empty()) {
    std::vector<std::pair<std::string, double>> parts(m.peak_memory_breakdown[worst].begin(),
                                                      m.peak_memory_breakdown[worst].end());
    // Largest first; ties by name, so the output does not depend on anything but the figures.
    std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    std::string list;
    for (const auto& [category, bytes] : parts) {
      list += (list.empty() ? "" : ", ") + category + Format(" %.1f", bytes / kGiB);
    }
    note += " (" + list + ")";
  }
  return note;
}

void AppendCell(std::string* line, const std::string& cell, size_t width, Align align) {
  size_t pad = width > cell.size() ? width - cell.size() : 0;
  if (align == Align::kRight) line->append(pad, ' ');
  line->append(cell);
  if (align == Align::kLeft) line->append(pad, ' ');
}

std::string FormatLine(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
  std::string line;
  for (size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) line += kColumnGap;
    // A failed row's error spans the figure columns, so it is written as is, unpadded.
    bool spanning = cells.size() < kNumColumns && c == cells.size() - 1;
    if (spanning) {
      line += cells[c];
    } else {
      AppendCell(&line, cells[c], widths[c], kColumns[c].align);
    }
  }
  // The padding of a left-aligned last cell would otherwise trail the line.
  line.erase(line.find_last_not_of(' ') + 1);
  return line + "\n";
}

}  // namespace

std::string FormatComparisonTable(const RunResults& r) {
  std::string out = "scenario: " + r.scenario_name + " | GPUs: " + r.gpu_summary +
                    " | model: " + r.model_summary + "\n\n";
  if (r.strategies.empty()) return out + "(no strategies)\n";

  double best_time_s = BestIterationTime(r.strategies);
  std::vector<std::vector<std::string>> rows;
  rows.reserve(r.strategies.size());
  for (const StrategyResult& s : r.strategies) rows.push_back(FormatRow(s, best_time_s));

  std::vector<std::string> header;
  std::vector<size_t> widths;
  for (const Column& c : kColumns) {
    header.emplace_back(c.header);
    widths.push_back(header.back().size());
  }
  for (const std::vector<std::string>& row : rows) {
    // A failed row's error cell does not widen the column it starts in.
    size_t sized = row.size() < kNumColumns ? row.size() - 1 : row.size();
    for (size_t c = 0; c < sized; ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::vector<std::string> rule;
  for (size_t w : widths) rule.emplace_back(w, '-');

  out += FormatLine(header, widths);
  out += FormatLine(rule, widths);
  for (const std::vector<std::string>& row : rows) out += FormatLine(row, widths);

  bool any_notes = false;
  for (const StrategyResult& s : r.strategies) {
    std::vector<std::string> notes;
    if (s.ok && !s.metrics.oom_ranks.empty()) notes.push_back(OomNote(s.metrics));
    if (s.ok && !s.peak_memory_per_stage_bytes.empty()) {
      std::string per_stage = "peak memory per stage (GiB):";
      for (size_t k = 0; k < s.peak_memory_per_stage_bytes.size(); ++k) {
        per_stage += Format("%s %.2f", k ? "," : "", s.peak_memory_per_stage_bytes[k] / kGiB);
      }
      notes.push_back(per_stage);
    }
    notes.insert(notes.end(), s.notes.begin(), s.notes.end());
    for (const std::string& note : notes) {
      if (!any_notes) out += "\n";
      any_notes = true;
      out += "  " + s.name + ": " + note + "\n";
    }
  }
  return out;
}

}  // namespace stratasim
