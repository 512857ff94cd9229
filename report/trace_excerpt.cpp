// Reading one iteration of a few GPUs out of a Chrome trace, line by line (trace_excerpt.h).
#include "report/trace_excerpt.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/error.h"

namespace stratasim {
namespace {

using Json = nlohmann::json;

struct RawBar {
  int gpu;
  int tid;
  double ts_us;
  double end_us;
  std::string kind;
  std::string name;
};

// The event object on one line of the writer's layout: `{"traceEvents":[{...},`, `{...},`,
// `{...}],` (the last event) and lines of the closing object, which hold no event.
std::string EventText(std::string line) {
  static const std::string kHead = "{\"traceEvents\":[";
  if (line.compare(0, kHead.size(), kHead) == 0) line.erase(0, kHead.size());
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) {
    line.pop_back();
  }
  if (!line.empty() && line.back() == ',') line.pop_back();
  if (!line.empty() && line.back() == ']') line.pop_back();
  return line;
}

[[noreturn]] void Fail(const std::string& path, long line, const std::string& why) {
  throw Error(path + ":" + std::to_string(line) + ": " + why);
}

double Number(const Json& e, const char* key, const std::string& path, long line) {
  if (!e.contains(key) || !e.at(key).is_number()) {
    Fail(path, line, std::string("trace event without a numeric \"") + key + "\"");
  }
  return e.at(key).get<double>();
}

}  // namespace

std::vector<int> DefaultTimelineGpus(int num_gpus) {
  std::set<int> chosen;
  if (num_gpus <= 0) return {};
  chosen.insert(0);
  if (num_gpus > 1) chosen.insert(1);
  chosen.insert(num_gpus / 2);
  chosen.insert(num_gpus - 1);
  return {chosen.begin(), chosen.end()};
}

TraceExcerpt ReadTraceExcerpt(const std::string& path, const std::vector<int>& gpus,
                              size_t max_bars) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot be read");
  // "pid":G, as the writer spells it (no spaces), to skip other GPUs' lines unparsed.
  std::vector<std::string> pid_keys;
  for (int g : gpus) pid_keys.push_back("\"pid\":" + std::to_string(g) + ",");
  std::map<std::pair<int, int>, std::string> stream_names;  // (gpu, tid) -> name
  std::vector<RawBar> kept;
  int iteration = -1;
  std::string line;
  long number = 0;
  while (std::getline(in, line)) {
    ++number;
    const bool complete = line.find("\"ph\":\"X\"") != std::string::npos;
    const bool thread = line.find("\"thread_name\"") != std::string::npos;
    if (!complete && !thread) continue;
    if (std::none_of(pid_keys.begin(), pid_keys.end(),
                     [&](const std::string& k) { return line.find(k) != std::string::npos; })) {
      continue;
    }
    Json e;
    try {
      e = Json::parse(EventText(line));
    } catch (const nlohmann::json::exception&) {
      Fail(path, number, "not a trace event (one JSON object per line expected)");
    }
    if (!e.is_object() || !e.contains("pid") || !e.at("pid").is_number_integer()) {
      Fail(path, number, "trace event without an integer \"pid\"");
    }
    const int gpu = e.at("pid").get<int>();
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) continue;  // "pid":1, in args
    const int tid =
        e.contains("tid") && e.at("tid").is_number_integer() ? e.at("tid").get<int>() : 0;
    const Json args = e.contains("args") ? e.at("args") : Json::object();
    if (!complete) {
      if (args.contains("name") && args.at("name").is_string()) {
        stream_names[{gpu, tid}] = args.at("name").get<std::string>();
      }
      continue;
    }
    if (!args.contains("iteration") || !args.at("iteration").is_number_integer()) {
      Fail(path, number, "trace event without an integer \"args.iteration\"");
    }
    const int it = args.at("iteration").get<int>();
    if (it < iteration) continue;
    if (it > iteration) {
      iteration = it;  // a later iteration: the excerpt shows the last one
      kept.clear();
    }
    RawBar b;
    b.gpu = gpu;
    b.tid = tid;
    b.ts_us = Number(e, "ts", path, number);
    b.end_us = b.ts_us + Number(e, "dur", path, number);
    const std::string cat = e.contains("cat") && e.at("cat").is_string()
                                ? e.at("cat").get<std::string>()
                                : std::string("other");
    b.kind = cat != "compute" && args.contains("category") && args.at("category").is_string()
                 ? args.at("category").get<std::string>()
                 : cat;
    b.name = e.contains("name") && e.at("name").is_string() ? e.at("name").get<std::string>() : "";
    kept.push_back(std::move(b));
  }
  if (in.bad()) throw Error(path + ": read error");
  TraceExcerpt x;
  x.iteration = iteration;
  if (kept.empty()) return x;
  std::sort(kept.begin(), kept.end(), [](const RawBar& a, const RawBar& b) {
    return std::tie(a.gpu, a.tid, a.ts_us, a.end_us, a.name) <
           std::tie(b.gpu, b.tid, b.ts_us, b.end_us, b.name);
  });
  double start = kept.front().ts_us, end = kept.front().end_us;
  for (const RawBar& b : kept) {
    start = std::min(start, b.ts_us);
    end = std::max(end, b.end_us);
  }
  // Neighbouring tasks of one kind on one stream, less than a pixel apart on a page 2,000
  // pixels wide, are drawn as one bar: a data-parallel iteration runs thousands of per-layer
  // kernels back to back, which would otherwise fill max_bars before the iteration's end.
  if (kept.size() > max_bars) {
    const double gap_us = (end - start) / 2000;
    std::vector<RawBar> merged;
    size_t run = 0;  // tasks in merged.back()
    for (RawBar& b : kept) {
      if (!merged.empty()) {
        RawBar& m = merged.back();
        if (m.gpu == b.gpu && m.tid == b.tid && m.kind == b.kind && b.ts_us - m.end_us < gap_us) {
          m.end_us = std::max(m.end_us, b.end_us);
          ++run;
          continue;
        }
        if (run > 1) m.name += " and " + std::to_string(run - 1) + " more";
      }
      merged.push_back(std::move(b));
      run = 1;
    }
    if (run > 1) merged.back().name += " and " + std::to_string(run - 1) + " more";
    kept.swap(merged);
  }
  // The earliest bars when there are still too many, so the excerpt is a contiguous window.
  if (kept.size() > max_bars) {
    std::vector<double> starts;
    for (const RawBar& b : kept) starts.push_back(b.ts_us);
    std::nth_element(starts.begin(), starts.begin() + static_cast<long>(max_bars) - 1,
                     starts.end());
    const double cut = starts[max_bars - 1];
    std::vector<RawBar> early;
    for (const RawBar& b : kept) {
      if (b.ts_us <= cut && early.size() < max_bars) early.push_back(b);
    }
    kept.swap(early);
    end = start;
    for (const RawBar& b : kept) end = std::max(end, b.end_us);
    x.truncated = true;
  }
  x.start_s = start * 1e-6;
  x.end_s = end * 1e-6;
  std::map<std::pair<int, int>, int> row_of;
  for (const RawBar& b : kept) {
    const auto key = std::make_pair(b.gpu, b.tid);
    auto it = row_of.find(key);
    if (it == row_of.end()) {
      auto name = stream_names.find(key);
      x.rows.push_back(
          "GPU " + std::to_string(b.gpu) + " · " +
          (name != stream_names.end() ? name->second : "stream " + std::to_string(b.tid)));
      it = row_of.emplace(key, static_cast<int>(x.rows.size()) - 1).first;
    }
    x.bars.push_back(
        {it->second, (b.ts_us - start) * 1e-6, (b.end_us - start) * 1e-6, b.kind, b.name});
  }
  return x;
}

}  // namespace stratasim
