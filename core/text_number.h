// Whole-text number parsing for input files and options: strict (no trailing text, no hex, no
// inf/nan), so that "8x" or "0x10" in a scenario is an error rather than 8 or 16.
#ifndef STRATASIM_CORE_TEXT_NUMBER_H_
#define STRATASIM_CORE_TEXT_NUMBER_H_

#include <string>

namespace stratasim {

// Whole text as a decimal integer ([+-]digits); false on anything else or on overflow.
bool ParseInteger(const std::string& text, long long* out);
// Whole text as a finite decimal number; false on anything else ("inf", "nan", hex, "").
bool ParseNumber(const std::string& text, double* out);

}  // namespace stratasim

#endif  // STRATASIM_CORE_TEXT_NUMBER_H_
