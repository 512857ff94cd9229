#include "strategies/moe/routing_trace.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/text_number.h"

namespace stratasim {
namespace {

struct Field {
  std::string text;
  int column;  // 1-based
};

// Splits a line (comment removed) into whitespace-separated fields with their columns.
std::vector<Field> Fields(const std::string& line) {
  std::vector<Field> out;
  size_t i = 0;
  const size_t end = line.find('#') == std::string::npos ? line.size() : line.find('#');
  while (i < end) {
    while (i < end && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i >= end) break;
    const size_t start = i;
    while (i < end && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

class Parser {
 public:
  Parser(const std::string& label) : label_(label) {}

  [[noreturn]] void Fail(int line, int column, const std::string& key, const std::string& value,
                         const std::string& rule) const {
    throw ConfigError(SourceLocation{label_, line, column}, key, value, rule);
  }

  long long Integer(int line, const Field& f, const std::string& key, long long min,
                    long long max) const {
    long long v = 0;
    if (!ParseInteger(f.text, &v)) Fail(line, f.column, key, f.text, "must be an integer");
    if (v < min || v > max) {
      Fail(line, f.column, key, f.text,
           "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return v;
  }

 private:
  std::string label_;
};

}  // namespace

Routing ParseRoutingTrace(const std::string& text, const std::string& file_label) {
  const Parser p(file_label);
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  bool magic = false;
  // ranks, experts, layers, iterations
  const char* const kHeader[] = {"ranks", "experts", "layers", "iterations"};
  long long sizes[4] = {0, 0, 0, 0};
  Routing r;
  std::vector<char> seen;
  bool rows_started = false;
  constexpr long long kMaxSize = 1 << 20;
  while (std::getline(in, line)) {
    ++line_no;
    const std::vector<Field> f = Fields(line);
    if (f.empty()) continue;
    if (!magic) {
      if (f[0].text != "stratasim-moe-routing") {
        p.Fail(line_no, f[0].column, "magic", f[0].text,
               "the first record must be 'stratasim-moe-routing 1'");
      }
      if (f.size() != 2 || f[1].text != "1") {
        p.Fail(line_no, f[0].column, "version", f.size() > 1 ? f[1].text : "",
               "unsupported format version (this reader knows version 1)");
      }
      magic = true;
      continue;
    }
    int header = -1;
    for (int i = 0; i < 4; ++i) {
      if (f[0].text == kHeader[i]) header = i;
    }
    if (header >= 0) {
      if (rows_started) {
        p.Fail(line_no, f[0].column, f[0].text, "", "header records must come before any row");
      }
      if (sizes[header] != 0) p.Fail(line_no, f[0].column, f[0].text, "", "given twice");
      if (f.size() != 2) {
        p.Fail(line_no, f[0].column, f[0].text, "", "takes exactly one value");
      }
      sizes[header] = p.Integer(line_no, f[1], f[0].text, 1, kMaxSize);
      continue;
    }
    if (!rows_started) {
      for (int i = 0; i < 4; ++i) {
        if (sizes[i] == 0) {
          p.Fail(line_no, f[0].column, kHeader[i], "",
                 "missing: the header must give ranks, experts, layers and iterations before "
                 "the rows");
        }
      }
      const double cells = static_cast<double>(sizes[0]) * sizes[1] * sizes[2] * sizes[3];
      if (cells > 5e8) {
        p.Fail(line_no, f[0].column, "header", "",
               "ranks x experts x layers x iterations is too "
               "large (over 5e8 counts)");
      }
      r = Routing(static_cast<int>(sizes[3]), static_cast<int>(sizes[2]),
                  static_cast<int>(sizes[0]), static_cast<int>(sizes[1]));
      seen.assign(static_cast<size_t>(sizes[3]) * sizes[2] * sizes[0], 0);
      rows_started = true;
    }
    const long long experts = sizes[1];
    if (static_cast<long long>(f.size()) != 3 + experts) {
      p.Fail(line_no, f[0].column, "row", "",
             "a row is 'iteration layer rank' and " + std::to_string(experts) +
                 " counts (one per expert); this one has " + std::to_string(f.size()) + " fields");
    }
    const int t = static_cast<int>(p.Integer(line_no, f[0], "iteration", 0, sizes[3] - 1));
    const int l = static_cast<int>(p.Integer(line_no, f[1], "layer", 0, sizes[2] - 1));
    const int k = static_cast<int>(p.Integer(line_no, f[2], "rank", 0, sizes[0] - 1));
    const std::string key = "iteration " + std::to_string(t) + " layer " + std::to_string(l) +
                            " rank " + std::to_string(k);
    char& s = seen[(static_cast<size_t>(t) * sizes[2] + l) * sizes[0] + k];
    if (s) p.Fail(line_no, f[0].column, key, "", "row given twice");
    s = 1;
    for (int x = 0; x < experts; ++x) {
      const Field& c = f[3 + x];
      r.at(t, l, k, x) = static_cast<double>(
          p.Integer(line_no, c, key + " expert " + std::to_string(x), 0, 1LL << 40));
    }
  }
  if (!magic) p.Fail(0, 0, "magic", "", "empty file: expected 'stratasim-moe-routing 1'");
  if (!rows_started) p.Fail(line_no, 0, "rows", "", "the trace has no rows");
  for (int t = 0; t < r.iterations(); ++t) {
    for (int l = 0; l < r.layers(); ++l) {
      for (int k = 0; k < r.ranks(); ++k) {
        if (!seen[(static_cast<size_t>(t) * r.layers() + l) * r.ranks() + k]) {
          p.Fail(line_no, 0,
                 "iteration " + std::to_string(t) + " layer " + std::to_string(l) + " rank " +
                     std::to_string(k),
                 "", "row missing: every (iteration, layer, rank) must have one row");
        }
      }
    }
  }
  return r;
}

Routing ReadRoutingTrace(const std::string& path, const SourceLocation& where) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(where, "trace", path, "cannot open the routing trace file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseRoutingTrace(text.str(), path);
}

std::string RoutingTraceText(const Routing& r) {
  std::ostringstream out;
  out << "stratasim-moe-routing 1\n"
      << "ranks " << r.ranks() << "\nexperts " << r.experts() << "\nlayers " << r.layers()
      << "\niterations " << r.iterations() << "\n";
  for (int t = 0; t < r.iterations(); ++t) {
    for (int l = 0; l < r.layers(); ++l) {
      for (int k = 0; k < r.ranks(); ++k) {
        out << t << ' ' << l << ' ' << k;
        for (int x = 0; x < r.experts(); ++x) {
          out << ' ' << static_cast<long long>(r.at(t, l, k, x));
        }
        out << '\n';
      }
    }
  }
  return out.str();
}

}  // namespace stratasim
