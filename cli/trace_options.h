// `stratasim run`'s trace options: --trace-gpus LIST (which GPUs' events the Chrome traces
// hold) and --trace-format json|json.gz (docs/report-formats.md, "Trace").
#ifndef STRATASIM_CLI_TRACE_OPTIONS_H_
#define STRATASIM_CLI_TRACE_OPTIONS_H_

#include <string>
#include <vector>

namespace stratasim {

// "0-7,64" -> {0, ..., 7, 64}: GPU numbers and inclusive ranges, comma-separated, each in
// [0, num_gpus); returned ascending without repeats. Throws UsageError naming the item.
std::vector<int> ParseTraceGpus(const std::string& list, int num_gpus);

// "json" -> false, "json.gz" -> true; throws UsageError for anything else.
bool ParseTraceGzip(const std::string& format);

}  // namespace stratasim

#endif  // STRATASIM_CLI_TRACE_OPTIONS_H_
