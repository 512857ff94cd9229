#include "report/aligned_columns.h"

#include <algorithm>
#include <cstdio>

namespace stratasim {

std::string AlignedColumns(const std::vector<std::vector<std::string>>& rows, size_t left) {
  if (rows.empty()) return "";
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string l;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      l += c < left ? row[c] + pad : pad + row[c];
      if (c + 1 < row.size()) l += "  ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(rows[0]);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (size_t i = 1; i < rows.size(); ++i) line(rows[i]);
  return out;
}

std::string Num(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace stratasim
