// Routing trace files: recorded token-to-expert routings replayed by the MoE strategies.
//
// Plain text, one record per line, '#' starts a comment, blank lines are ignored:
//
//   stratasim-moe-routing 1        # magic and format version: the first record
//   ranks 16                       # header: the four sizes, each once, before any row
//   experts 16
//   layers 12
//   iterations 100
//   0 0 0  70 64 12 ...            # iteration layer rank, then one count per expert
//
// A row gives the tokens of `rank`'s micro-batch routed to each expert in MoE layer `layer` of
// iteration `iteration` (a token routed to k experts counts in each). Every (iteration, layer,
// rank) appears exactly once, in any order; counts are non-negative integers. docs/moe.md has
// the format with an example.
#ifndef STRATASIM_STRATEGIES_MOE_ROUTING_TRACE_H_
#define STRATASIM_STRATEGIES_MOE_ROUTING_TRACE_H_

#include <string>

#include "core/error.h"
#include "strategies/moe/routing.h"

namespace stratasim {

// Parses `text`; `file_label` names it in errors. Throws ConfigError naming the file, line,
// column, the key ("ranks", "iteration 3 layer 0 rank 5", ...), the value and the rule broken.
Routing ParseRoutingTrace(const std::string& text, const std::string& file_label);

// Reads and parses `path`; a file that cannot be read is a ConfigError at `where` (the option
// that named it).
Routing ReadRoutingTrace(const std::string& path, const SourceLocation& where);

// Writes `r` in the format above (for tests and for converting recorded routings).
std::string RoutingTraceText(const Routing& r);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_MOE_ROUTING_TRACE_H_
