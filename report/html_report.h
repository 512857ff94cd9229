// The HTML report (docs/report.md): one self-contained page, Chart.js and the data inlined, that
// shows where each strategy's time goes, its memory against the GPUs', the busiest links over
// time, a timeline excerpt, MoE load and a validate run's measured against simulated times.
#ifndef STRATASIM_REPORT_HTML_REPORT_H_
#define STRATASIM_REPORT_HTML_REPORT_H_

#include <string>

#include "report/report_inputs.h"

namespace stratasim {

// The page around `data_json` (ReportDataJson's object), titled `title`. Deterministic: the
// same arguments give the same bytes.
std::string HtmlReportPage(const std::string& data_json, const std::string& title);

// JSON text made safe inside <script type="application/json">: every "</" becomes "<\/" (the
// same string to a JSON reader), so no value can close the script element, and "<!--" becomes
// "<\!--"... as "\u003c!--", so none can open a comment either.
std::string EscapeJsonForScript(const std::string& json);

// "<", ">", "&", '"' as HTML entities.
std::string EscapeHtml(const std::string& text);

// Reads the outputs folder `dir` and writes its report to `file` atomically; returns the page's
// size in bytes. Errors as ReportDataJson's, and file errors as WriteFileAtomically's.
size_t WriteHtmlReport(const std::string& dir, const std::string& file,
                       const ReportOptions& options);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_HTML_REPORT_H_
