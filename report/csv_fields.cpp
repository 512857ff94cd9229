#include "report/csv_fields.h"

#include <cstdio>

namespace stratasim {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CsvNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string CsvBytes(double v) {
  char buf[352];  // %.0f of the largest double has 309 digits
  std::snprintf(buf, sizeof(buf), "%.0f", v);
  return buf;
}

}  // namespace stratasim
