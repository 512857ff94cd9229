// A YAML document as a flat list of (key path, scalar) pairs, to say which keys differ between
// two scenario files (`stratasim compare`, docs/compare.md) without knowing their schema.
#ifndef STRATASIM_CORE_YAML_FLATTEN_H_
#define STRATASIM_CORE_YAML_FLATTEN_H_

#include <string>
#include <utility>
#include <vector>

namespace stratasim {

// Each scalar of the document under its key path, maps joined with "." and list items as
// "[i]" (e.g. "cluster.servers[0].gpus_per_server", "8"), in document order; an empty map or
// list is one entry "{}" or "[]", a null value "~". Throws ConfigError located in
// `file_label` when `text` is not one YAML document (core/yaml_util.h ParseDocument).
std::vector<std::pair<std::string, std::string>> FlattenYaml(const std::string& text,
                                                             const std::string& file_label);

}  // namespace stratasim

#endif  // STRATASIM_CORE_YAML_FLATTEN_H_
