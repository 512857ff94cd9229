// Published model dimensions, by preset name, and the model kinds the loader knows. Pure data:
// models/ builds the workloads, core/scenario_loader.cpp fills ModelSpec from these.
#ifndef STRATASIM_CORE_MODEL_PRESETS_H_
#define STRATASIM_CORE_MODEL_PRESETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/scenario.h"

namespace stratasim {

// "gpt", "bert", "llama", "moe", "resnet50", "vgg16", "graphsage".
const std::vector<std::string>& ModelKinds();
bool IsTransformerKind(std::string_view kind);  // gpt, bert, llama, moe

// A copy of the preset's ModelSpec (kind and dimensions set, `preset` named), or nullptr.
const ModelSpec* FindModelPreset(std::string_view name);
// Every preset name, in catalog order.
std::vector<std::string> ModelPresetNames();

}  // namespace stratasim

#endif  // STRATASIM_CORE_MODEL_PRESETS_H_
