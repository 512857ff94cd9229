// Errors as exceptions, caught in main (docs/architecture.md): library code never exits.
#ifndef STRATASIM_CORE_ERROR_H_
#define STRATASIM_CORE_ERROR_H_

#include <stdexcept>
#include <string>

namespace stratasim {

// Where a value came from in an input file; line and column are 1-based, 0 when unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

// The base of every error stratasim throws, so that one handler sees them all
// (docs/architecture.md "Errors"). Thrown as itself: a plan or simulation that cannot be carried
// out (infeasible plan, missing route, a task that never ran); the message says what and why.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input: names the file, line, column, key, value and the rule broken.
// what() reads like a compiler diagnostic:
//   scenarios/x.yaml:12:7: cluster.servers[0].nics.count = "3": must divide gpus_per_server (8)
class ConfigError : public Error {
 public:
  ConfigError(SourceLocation where, std::string key, std::string value, std::string rule);

  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& value() const { return value_; }
  const std::string& rule() const { return rule_; }

 private:
  SourceLocation where_;
  std::string key_;
  std::string value_;
  std::string rule_;
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_ERROR_H_
