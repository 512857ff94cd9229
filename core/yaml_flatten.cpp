#include "core/yaml_flatten.h"

#include "core/yaml_util.h"

namespace stratasim {
namespace {

void Flatten(const YAML::Node& n, const std::string& path,
             std::vector<std::pair<std::string, std::string>>* out) {
  if (n.IsMap()) {
    if (n.size() == 0) out->emplace_back(path, "{}");
    for (const auto& kv : n) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      Flatten(kv.second, path.empty() ? key : path + "." + key, out);
    }
  } else if (n.IsSequence()) {
    if (n.size() == 0) out->emplace_back(path, "[]");
    for (size_t i = 0; i < n.size(); ++i) {
      Flatten(n[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if (n.IsScalar()) {
    out->emplace_back(path, n.Scalar());
  } else {
    out->emplace_back(path, "~");
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> FlattenYaml(const std::string& text,
                                                             const std::string& file_label) {
  const yaml::Field root = yaml::ParseDocument(text, file_label);
  std::vector<std::pair<std::string, std::string>> out;
  Flatten(root.value, "", &out);
  return out;
}

}  // namespace stratasim
