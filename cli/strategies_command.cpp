#include "cli/strategies_command.h"

#include <algorithm>
#include <cstring>

#include "cli/exit_status.h"
#include "strategies/plan.h"

namespace stratasim {
namespace {

const char kHelp[] =
    "usage: stratasim strategies [KIND] [--markdown]\n"
    "  without KIND: every strategy kind, with what it is\n"
    "  with KIND:    that kind's options: type, values, default and meaning\n"
    "  --markdown:   the options as the table docs/strategies.md holds\n";

}  // namespace

int StrategiesCommand(const std::vector<std::string>& args, std::ostream& out) {
  bool markdown = false;
  std::string kind;
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      out << kHelp;
      return 0;
    }
    if (a == "--markdown") {
      markdown = true;
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option " + a + "\n" + kHelp);
    } else if (!kind.empty()) {
      throw UsageError("one KIND at a time (got " + kind + " and " + a + ")");
    } else {
      kind = a;
    }
  }
  const std::vector<std::string> kinds = StrategyKinds();
  if (kind.empty()) {
    if (markdown) throw UsageError("--markdown needs a KIND");
    size_t width = 0;
    for (const std::string& k : kinds) width = std::max(width, k.size());
    out << "strategy kinds (`stratasim strategies KIND` lists a kind's options):\n";
    for (const std::string& k : kinds) {
      out << "  " << k << std::string(width + 2 - k.size(), ' ') << FindStrategyKind(k)->summary
          << "\n";
    }
    return 0;
  }
  const StrategyKindInfo* info = FindStrategyKind(kind);
  if (info == nullptr) {
    std::string known;
    for (const std::string& k : kinds) known += (known.empty() ? "" : ", ") + k;
    throw UsageError("unknown strategy kind '" + kind + "' (known: " + known + ")");
  }
  if (markdown) {
    out << OptionsMarkdown(info->options);
  } else {
    out << info->kind << ": " << info->summary << "\noptions (strategies[i].options):\n"
        << OptionsText(info->options);
  }
  return 0;
}

}  // namespace stratasim
