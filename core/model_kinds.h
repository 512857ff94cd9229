// The model kinds: one entry per kind with the `model:` keys it accepts and their defaults, its
// presets and how its keys are read and checked. The scenario loader reads a model through its
// kind's entry; models/workload.cpp keeps the workload builder of each kind, by name (core/ may
// not depend on models/), and models/model_kinds_test.cpp checks that the two lists agree and
// that every kind is documented and loads from a scenario.
//
// Adding a kind: a file core/model_kind_<name>.cpp defining its entry, one line in
// ModelKindRegistry (core/model_kinds.cpp), its workload in models/ with one line in
// models/workload.cpp's builder table, and its rows in docs/models.md and
// docs/scenario-format.md.
#ifndef STRATASIM_CORE_MODEL_KINDS_H_
#define STRATASIM_CORE_MODEL_KINDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/scenario.h"

namespace stratasim {

class ModelFields;  // core/model_fields.h: the `model:` map being read (internal to core/)

// A key of `model:` that a kind accepts besides preset, kind, recompute and recompute_layers.
struct ModelKey {
  std::string name;
  // What applies when the key is left out, as docs/scenario-format.md says it: "required",
  // "from the preset" (required without one), or the default.
  std::string default_value;
};

struct ModelKind {
  std::string name;
  // Layers of attention and MLP over a token sequence: selective recomputation and
  // recompute_layers apply, and reports give the sequence length.
  bool transformer = false;
  std::vector<ModelKey> keys;      // in the order messages list them
  std::vector<ModelSpec> presets;  // in catalog order, each with kind and preset set
  // Another kind whose presets give this kind's shared dimensions (moe takes a gpt preset).
  std::string presets_from;
  // A minimal `model:` map of this kind, in YAML flow style, that loads and builds (tests).
  std::string example;
  // Reads and checks the kind's keys into `spec`, which holds the preset's values if one was
  // named, in the order the keys are checked (the first error found is the one reported).
  void (*read)(const ModelFields& m, ModelSpec* spec) = nullptr;
};

// Every kind, in the order messages list them. Filled by explicit calls, not by static
// registration objects, which the linker may drop from a static library.
const std::vector<ModelKind>& ModelKindRegistry();
// The entry of `name`, or nullptr.
const ModelKind* FindModelKind(std::string_view name);

// The entries, defined in core/model_kind_*.cpp.
ModelKind GptModelKind();
ModelKind BertModelKind();
ModelKind LlamaModelKind();
ModelKind MoeModelKind();
ModelKind ResNet50ModelKind();
ModelKind Vgg16ModelKind();
ModelKind GraphSageModelKind();

}  // namespace stratasim

#endif  // STRATASIM_CORE_MODEL_KINDS_H_
