// The HTML report page (html_report.h): the template report/html/report_page.html with Chart.js,
// the title and the data put in at its markers.
#include "report/html_report.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "report/atomic_file.h"

namespace stratasim {

// Generated at configure time (report/embed_text.cmake).
extern const char kEmbeddedChartJs[];
extern const char kEmbeddedReportPage[];

namespace {

void ReplaceOnce(std::string* page, const std::string& marker, const std::string& with) {
  const size_t at = page->find(marker);
  if (at == std::string::npos) throw Error("report page template: no marker " + marker);
  page->replace(at, marker.size(), with);
}

}  // namespace

std::string EscapeJsonForScript(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    // "<" only occurs inside JSON strings, where "\u003c" reads back as "<".
    if (json[i] == '<' && i + 1 < json.size() && (json[i + 1] == '/' || json[i + 1] == '!')) {
      out += "\\u003c";
    } else {
      out += json[i];
    }
  }
  return out;
}

std::string EscapeHtml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string HtmlReportPage(const std::string& data_json, const std::string& title) {
  std::string page = kEmbeddedReportPage;
  // The title first: the later insertions hold text that could look like a marker.
  ReplaceOnce(&page, "<!--STRATASIM_TITLE-->", EscapeHtml(title));
  ReplaceOnce(&page, "<!--STRATASIM_DATA-->", EscapeJsonForScript(data_json));
  ReplaceOnce(&page, "<!--STRATASIM_CHARTJS-->", kEmbeddedChartJs);
  return page;
}

size_t WriteHtmlReport(const std::string& dir, const std::string& file,
                       const ReportOptions& options) {
  const std::string data = ReportDataJson(dir, options);
  const nlohmann::json j = nlohmann::json::parse(data);
  std::string title = "stratasim report";
  if (j["scenario"].is_object()) title += ": " + j["scenario"]["name"].get<std::string>();
  const std::string page = HtmlReportPage(data, title);
  WriteFileAtomically(file, page);
  return page.size();
}

}  // namespace stratasim
