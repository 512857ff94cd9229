// `stratasim chakra-export SCENARIO --strategy NAME --out DIR`: a strategy's plan as Chakra
// execution traces (chakra/export.h, docs/chakra.md), for ASTRA-sim and Chakra's tools.
#ifndef STRATASIM_CLI_CHAKRA_EXPORT_COMMAND_H_
#define STRATASIM_CLI_CHAKRA_EXPORT_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace stratasim {

// Writes DIR/<strategy>.<rank>.et and DIR/<strategy>.comm_groups.json; says what it wrote on
// `out`. Throws UsageError for a bad command line, ConfigError for a bad scenario or strategy
// name, stratasim::Error for a plan Chakra cannot hold.
int ChakraExportCommand(const std::vector<std::string>& args, std::ostream& out);

}  // namespace stratasim

#endif  // STRATASIM_CLI_CHAKRA_EXPORT_COMMAND_H_
