// Machine-readable results of a run: results.json (everything) and results.csv (one row per
// strategy, for spreadsheets and pandas). docs/report-formats.md describes both.
#ifndef STRATASIM_REPORT_RESULTS_JSON_H_
#define STRATASIM_REPORT_RESULTS_JSON_H_

#include <string>

#include "report/results.h"

namespace stratasim {

// results.json: {"format": "stratasim-results", "version": 1, ...}, indented, ending in a
// newline. Identical inputs give byte-identical text (fixed key order, shortest round-trip
// doubles, nothing taken from the clock or the environment), so that outputs can be diffed
// and golden-tested. The figures of a failed strategy are null and its arrays empty, so that
// they cannot be mistaken for measurements.
std::string ResultsToJson(const RunResults& r);

// results.csv: a header row and one row per strategy with the scalar figures (doubles as
// %.9g, the byte count as an integer), fields quoted as RFC 4180 says when they hold a comma, quote
// or line break, rows ending in "\n". The figures of a failed strategy are empty cells.
std::string ResultsToCsv(const RunResults& r);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_RESULTS_JSON_H_
