// Fuzzes the task-graph JSON reader, TaskGraphFromJson (core/task_graph_json.cpp). Besides the
// reader's own contract (a graph or a stratasim::Error), an accepted graph must survive a round
// trip: written back with TaskGraphToJson it must read again and write the same text.
#include <cstdio>
#include <cstdlib>

#include "core/task_graph.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = stratasim::fuzz::Text(data, size);
  stratasim::TaskGraph graph(0);
  if (!stratasim::fuzz::Accepts([&] { graph = stratasim::TaskGraphFromJson(text); })) return 0;
  const std::string once = stratasim::TaskGraphToJson(graph);
  std::string twice;
  try {
    twice = stratasim::TaskGraphToJson(stratasim::TaskGraphFromJson(once));
  } catch (const stratasim::Error& e) {
    std::fprintf(stderr, "round trip: the reader rejects what the writer wrote: %s\n%s\n", e.what(),
                 once.c_str());
    std::abort();
  }
  if (twice != once) {
    std::fprintf(stderr, "round trip: not a fixed point\nonce:  %s\ntwice: %s\n", once.c_str(),
                 twice.c_str());
    std::abort();
  }
  return 0;
}
