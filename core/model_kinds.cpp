#include "core/model_kinds.h"

namespace stratasim {

const std::vector<ModelKind>& ModelKindRegistry() {
  static const std::vector<ModelKind> kinds = {
      GptModelKind(),      BertModelKind(),  LlamaModelKind(),     MoeModelKind(),
      ResNet50ModelKind(), Vgg16ModelKind(), GraphSageModelKind(),
  };
  return kinds;
}

const ModelKind* FindModelKind(std::string_view name) {
  for (const ModelKind& k : ModelKindRegistry()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace stratasim
