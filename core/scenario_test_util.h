// Helpers of the scenario loader's tests: a text with one part replaced, the ConfigError that
// loading a text throws, and a check of its four parts. Every text is loaded as "t.yaml".
#ifndef STRATASIM_CORE_SCENARIO_TEST_UTIL_H_
#define STRATASIM_CORE_SCENARIO_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/scenario.h"

namespace stratasim::testing {

// `text` with the first `from` replaced by `to`; fails the test when `from` is absent, so a
// typo in a test cannot make it pass by loading the unbroken text.
inline std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "\"" << from << "\" not in the text";
    return text;
  }
  return text.replace(at, from.size(), to);
}

// The ConfigError that loading `yaml` throws.
inline ConfigError ErrorOf(const std::string& yaml) {
  try {
    LoadScenarioText(yaml, "t.yaml");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for:\n" << yaml.substr(0, 2000);
  return ConfigError(SourceLocation{}, "", "", "");
}

// Checks the four parts of an error at once.
inline void ExpectError(const ConfigError& e, int line, int column, const std::string& key,
                        const std::string& rule) {
  EXPECT_EQ(e.where().file, "t.yaml") << e.what();
  EXPECT_EQ(e.where().line, line) << e.what();
  EXPECT_EQ(e.where().column, column) << e.what();
  EXPECT_EQ(e.key(), key) << e.what();
  EXPECT_EQ(e.rule(), rule) << e.what();
}

}  // namespace stratasim::testing

#endif  // STRATASIM_CORE_SCENARIO_TEST_UTIL_H_
