// The fields of stratasim's CSV files (results.csv, compress_check.csv): one quoting rule and one
// number format, so that every CSV reads the same way in a spreadsheet.
#ifndef STRATASIM_REPORT_CSV_FIELDS_H_
#define STRATASIM_REPORT_CSV_FIELDS_H_

#include <string>

namespace stratasim {

// RFC 4180: a field holding a separator, a quote or a line break is quoted, and quotes inside
// it are doubled. Other fields are written bare, which every CSV reader accepts.
std::string CsvField(const std::string& s);

// %.9g is enough to tell apart any two figures that matter (ns in a 1 s iteration) while
// staying readable in a spreadsheet; the JSON files have the full precision.
std::string CsvNumber(double v);

// Byte counts are whole numbers of up to 13 digits (TiB of host memory), which %.9g would
// print in exponent form with the last bytes lost; they are written as integers.
std::string CsvBytes(double v);

}  // namespace stratasim

#endif  // STRATASIM_REPORT_CSV_FIELDS_H_
