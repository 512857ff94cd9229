// Lookups over the model kinds and their presets (core/model_kinds.h has the entries, with the
// published dimensions of each preset).
#ifndef STRATASIM_CORE_MODEL_PRESETS_H_
#define STRATASIM_CORE_MODEL_PRESETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/scenario.h"

namespace stratasim {

// "gpt", "bert", "llama", "moe", "resnet50", "vgg16", "graphsage": the registry's order.
const std::vector<std::string>& ModelKinds();
bool IsTransformerKind(std::string_view kind);  // gpt, bert, llama, moe
std::vector<std::string> TransformerKinds();    // in registry order

// A copy of the preset's ModelSpec (kind and dimensions set, `preset` named), or nullptr.
const ModelSpec* FindModelPreset(std::string_view name);
// Every preset name, in catalog order.
std::vector<std::string> ModelPresetNames();

}  // namespace stratasim

#endif  // STRATASIM_CORE_MODEL_PRESETS_H_
