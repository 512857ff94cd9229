// The GNN feature-transfer figures of a run (core/gnn_figures.h, docs/gnn.md): a console table
// beside the main one and the object results.json carries per strategy.
#ifndef STRATASIM_REPORT_GNN_TABLE_H_
#define STRATASIM_REPORT_GNN_TABLE_H_

#include <string>

#include "core/gnn_figures.h"
#include "report/results.h"

namespace stratasim {

// One row per strategy with GNN figures: iteration time, feature bytes copied host-to-device
// per iteration, hit rate, cache memory per GPU, peak memory; "" when no strategy has them.
std::string FormatGnnTable(const RunResults& r);

// {"vertices_per_iteration", "hits_per_iteration", "hit_rate", "h2d_bytes_per_iteration",
//  "cache_bytes"} as a JSON object's text.
std::string GnnFiguresJson(const GnnFigures& f);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_GNN_TABLE_H_
