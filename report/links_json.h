// links.json, written beside results.json: each strategy's link usage (core/link_usage.h), in
// results.json's order, for the HTML report and for people's own scripts
// (docs/report-formats.md, "links.json").
#ifndef STRATASIM_REPORT_LINKS_JSON_H_
#define STRATASIM_REPORT_LINKS_JSON_H_

#include <optional>
#include <string>
#include <vector>

#include "core/link_usage.h"

namespace stratasim {

// One strategy's entry: its name, and its usage (none for a strategy that failed).
struct StrategyLinks {
  std::string name;
  std::optional<LinkUsage> usage;
};

// {"format": "stratasim-links", "version": 1, "strategies": [{"name": ..., "usage": {...} or
// null}, ...]}, one strategy per line.
std::string LinksToJson(const std::vector<StrategyLinks>& strategies);

// Reads links.json back; throws stratasim::Error naming what does not match (another format,
// another version, a malformed usage).
std::vector<StrategyLinks> LinksFromJson(const std::string& text);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_LINKS_JSON_H_
