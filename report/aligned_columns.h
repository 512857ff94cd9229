// A console table of text cells: the header row, a rule of dashes, then the rows, columns two
// spaces apart, the first `left` columns left-aligned (names) and the rest right-aligned
// (figures), trailing spaces trimmed. Used by the MoE, pipeline, solver and GNN tables.
#ifndef STRATASIM_REPORT_ALIGNED_COLUMNS_H_
#define STRATASIM_REPORT_ALIGNED_COLUMNS_H_

#include <string>
#include <vector>

namespace stratasim {

// rows[0] is the header; every row has as many cells as it.
std::string AlignedColumns(const std::vector<std::vector<std::string>>& rows, size_t left);

// One cell: `v` printed with the printf format `f` (one double conversion, e.g. "%.2f").
std::string Num(const char* f, double v);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_ALIGNED_COLUMNS_H_
