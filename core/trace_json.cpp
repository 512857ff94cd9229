// JSON form of an ExecutionTrace: how the simulator's child process hands its result back, and
// how validate mode's measured traces are stored. Columns rather than objects keep it compact.
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/trace.h"

namespace stratasim {

using Json = nlohmann::ordered_json;

std::string TraceToJson(const ExecutionTrace& t) {
  Json j;
  j["format"] = "stratasim-trace";
  j["version"] = 1;
  j["executor"] = t.executor;
  j["num_ranks"] = t.num_ranks;
  j["streams"] = t.streams;
  j["makespan_s"] = t.makespan_s;
  j["collective_algorithms"] = t.collective_algorithms;
  j["activities"] = t.activities;
  j["instants"] = t.instants;
  Json task = Json::array(), rank = Json::array(), stream = Json::array(), start = Json::array(),
       end = Json::array(), transfer = Json::array();
  for (const TraceRecord& r : t.records) {
    task.push_back(r.task);
    rank.push_back(r.rank);
    stream.push_back(r.stream);
    start.push_back(r.start_s);
    end.push_back(r.end_s);
    transfer.push_back(r.peers_joined_s);
  }
  j["records"] = {{"task", std::move(task)},     {"rank", std::move(rank)},
                  {"stream", std::move(stream)}, {"start_s", std::move(start)},
                  {"end_s", std::move(end)},     {"peers_joined_s", std::move(transfer)}};
  return j.dump();
}

ExecutionTrace TraceFromJson(const std::string& text) {
  try {
    Json j = Json::parse(text);
    if (j.at("format") != "stratasim-trace" || j.at("version") != 1) {
      throw Error("trace: not a stratasim-trace version 1 document");
    }
    ExecutionTrace t;
    t.executor = j.at("executor").get<std::string>();
    t.num_ranks = j.at("num_ranks").get<int>();
    t.streams = j.at("streams").get<std::vector<std::string>>();
    t.makespan_s = j.at("makespan_s").get<double>();
    if (j.contains("activities")) t.activities = j.at("activities").get<long long>();
    if (j.contains("instants")) t.instants = j.at("instants").get<long long>();
    if (j.contains("collective_algorithms")) {
      t.collective_algorithms = j.at("collective_algorithms").get<std::vector<std::string>>();
    }
    const Json& r = j.at("records");
    const auto task = r.at("task").get<std::vector<TaskId>>();
    const auto rank = r.at("rank").get<std::vector<int>>();
    const auto stream = r.at("stream").get<std::vector<int>>();
    const auto start = r.at("start_s").get<std::vector<double>>();
    const auto end = r.at("end_s").get<std::vector<double>>();
    const auto transfer = r.at("peers_joined_s").get<std::vector<double>>();
    const size_t n = task.size();
    if (rank.size() != n || stream.size() != n || start.size() != n || end.size() != n ||
        transfer.size() != n) {
      throw Error("trace: record columns have different lengths");
    }
    t.records.resize(n);
    for (size_t i = 0; i < n; ++i) {
      t.records[i] = TraceRecord{task[i], rank[i], stream[i], start[i], end[i], transfer[i]};
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("trace: ") + e.what());
  }
}

}  // namespace stratasim
