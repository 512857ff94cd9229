// Lookups over the model kind registry (core/model_kinds.h), where the presets live.
#include "core/model_presets.h"

#include "core/model_kinds.h"

namespace stratasim {

std::string_view ToString(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

std::string_view ToString(Attention a) { return a == Attention::kFlash ? "flash" : "unfused"; }

const std::vector<std::string>& ModelKinds() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ModelKind& k : ModelKindRegistry()) out.push_back(k.name);
    return out;
  }();
  return names;
}

std::vector<std::string> TransformerKinds() {
  std::vector<std::string> out;
  for (const ModelKind& k : ModelKindRegistry()) {
    if (k.transformer) out.push_back(k.name);
  }
  return out;
}

bool IsTransformerKind(std::string_view kind) {
  const ModelKind* k = FindModelKind(kind);
  return k != nullptr && k->transformer;
}

const ModelSpec* FindModelPreset(std::string_view name) {
  for (const ModelKind& k : ModelKindRegistry()) {
    for (const ModelSpec& m : k.presets) {
      if (m.preset == name) return &m;
    }
  }
  return nullptr;
}

std::vector<std::string> ModelPresetNames() {
  std::vector<std::string> names;
  for (const ModelKind& k : ModelKindRegistry()) {
    for (const ModelSpec& m : k.presets) names.push_back(m.preset);
  }
  return names;
}

}  // namespace stratasim
