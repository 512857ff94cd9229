// Strategy options, declared once (ns-3's attributes are the model): each kind lists its
// options with key, type, default, range and help. From that one declaration come the checks
// (OptionReader, with located errors), `stratasim strategies KIND`, and the options tables in
// docs/strategies.md, which a test keeps in step with the declarations.
#ifndef STRATASIM_CORE_STRATEGY_OPTIONS_H_
#define STRATASIM_CORE_STRATEGY_OPTIONS_H_

#include <string>
#include <vector>

#include "core/error.h"
#include "core/scenario.h"

namespace stratasim {

enum class OptionType { kBool, kInt, kNumber, kBytes, kChoice, kText };

// One option of a strategy kind. Build one with Flag/Integer/Number/Size/OneOf/FreeText and say
// what happens when it is absent: Default(text), Derived(how), or nothing (required).
struct OptionSpec {
  enum class Absent { kRequired, kDefault, kDerived };

  std::string key;
  OptionType type = OptionType::kText;
  Absent absent = Absent::kRequired;
  // kDefault: the default as a scenario would write it ("25MiB", "true", "1f1b");
  // kDerived: how the planner derives it from the scenario (shown in the docs).
  std::string fallback;
  double min = 0, max = 0;           // kInt, kNumber: the inclusive range
  std::vector<std::string> choices;  // kChoice
  std::string help;                  // also the rule of a missing required option

  OptionSpec Default(std::string text) const;
  OptionSpec Derived(std::string how) const;
};

using OptionSpecs = std::vector<OptionSpec>;

OptionSpec Flag(std::string key, std::string help);
OptionSpec Integer(std::string key, int min, int max, std::string help);
OptionSpec Number(std::string key, double min, double max, std::string help);
OptionSpec Size(std::string key, std::string help);  // bytes, "25MiB"; must be > 0
OptionSpec OneOf(std::string key, std::vector<std::string> choices, std::string help);
OptionSpec FreeText(std::string key, std::string help);  // checked by the planner

// `a` followed by `b` (options shared by a family, then one kind's own).
OptionSpecs Join(OptionSpecs a, const OptionSpecs& b);

// Typed access to a strategy's options as its kind declares them. A missing option takes its
// declared default; a required one that is missing, a value out of range and an undeclared key
// are located ConfigErrors. Reading a key the kind did not declare, or with another type, is a
// programming error (Error).
class OptionReader {
 public:
  OptionReader(const StrategySpec& spec, const OptionSpecs& declared);
  // It keeps references to both.
  OptionReader(const StrategySpec&, OptionSpecs&&) = delete;
  OptionReader(StrategySpec&&, const OptionSpecs&) = delete;

  bool Bool(const std::string& key);
  int Int(const std::string& key);
  double Double(const std::string& key);
  double Bytes(const std::string& key);
  std::string Choice(const std::string& key);
  std::string Text(const std::string& key);
  // Options declared Derived(): the value when absent is the planner's, given here.
  int Int(const std::string& key, int derived);
  double Double(const std::string& key, double derived);

  // Whether the scenario gives `key` (an option that only applies to some settings).
  bool Given(const std::string& key) const;
  // Rejects options the kind does not declare, naming those it does.
  void Finish() const;

  // A ConfigError located at option `key` (or at the strategy when `key` is empty).
  ConfigError Fail(const std::string& key, const std::string& rule) const;

 private:
  // The declaration of `key`, checked to be of `type`; nullptr from `value` when absent.
  const OptionSpec& Declared(const std::string& key, OptionType type) const;
  const OptionValue* Value(const OptionSpec& o, bool derived_given) const;
  long long ParseInt(const OptionSpec& o, const std::string& text) const;
  double ParseDouble(const OptionSpec& o, const std::string& text) const;

  const StrategySpec& spec_;
  const OptionSpecs& declared_;
};

// `stratasim strategies KIND`: one block per option.
std::string OptionsText(const OptionSpecs& options);
// The options table of docs/strategies.md (GitHub markdown).
std::string OptionsMarkdown(const OptionSpecs& options);

}  // namespace stratasim

#endif  // STRATASIM_CORE_STRATEGY_OPTIONS_H_
