// The scenario's `model:` section: the keys every kind shares (kind, preset, recompute,
// recompute_layers) here; each kind's own keys through its entry (core/model_kinds.h).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/model_fields.h"
#include "core/model_kinds.h"
#include "core/model_presets.h"
#include "core/scenario_loader_sections.h"

namespace stratasim {

void ModelFields::Positive(const char* key, int* target, const char* why) const {
  if (auto value = map_.Get(key)) {
    *target = reader_.Int(*value, 1);
  } else if (custom_ && why != nullptr) {
    map_.Require(key, why);
  }
}

namespace scenario_sections {
namespace {

using yaml::Field;
using yaml::Join;
using yaml::Map;

const std::vector<std::string> kCommonKeys = {"preset", "kind", "recompute", "recompute_layers"};
// The model keys a strategy may override (ReadModelOverride): how the model is trained, not
// what it is.
const std::vector<std::string> kTrainingChoices = {"attention", "recompute", "recompute_layers"};

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> KeyNames(const ModelKind& kind) {
  std::vector<std::string> names;
  for (const ModelKey& key : kind.keys) names.push_back(key.name);
  return names;
}

// Every key of `model:`: the shared ones, then each kind's in registry order.
std::vector<std::string> AllModelKeys() {
  std::vector<std::string> all = kCommonKeys;
  for (const ModelKind& kind : ModelKindRegistry()) {
    for (const ModelKey& key : kind.keys) {
      if (!Has(all, key.name)) all.push_back(key.name);
    }
  }
  return all;
}

// `preset`, checked against `kind` (when given): the spec it gives.
ModelSpec ReadPreset(const yaml::Reader& r, const Field& preset, const ModelKind* kind) {
  const ModelSpec* found = FindModelPreset(r.String(preset));
  if (found == nullptr) r.Fail(preset, "unknown preset (known: " + Join(ModelPresetNames()) + ")");
  if (kind == nullptr) return *found;
  // An MoE model is GPT-style: a GPT preset gives its dense dimensions.
  const bool borrowed = !kind->presets_from.empty() && found->kind == kind->presets_from;
  if (kind->name != found->kind && !borrowed) {
    std::vector<std::string> same;
    for (const ModelSpec& p : kind->presets) same.push_back(p.preset);
    r.Fail(preset, "is a " + found->kind + " preset, not " + kind->name +
                       (same.empty() ? "" : " (" + kind->name + " presets: " + Join(same) + ")"));
  }
  ModelSpec spec = *found;
  spec.kind = kind->name;
  return spec;
}

// A key the kind does not use is an error, not ignored.
void RefuseOtherKindsKeys(const yaml::Reader& r, const Map& m, const std::vector<std::string>& all,
                          const ModelKind& kind) {
  const std::vector<std::string> own = KeyNames(kind);
  for (const std::string& key : all) {
    auto field = m.Get(key);
    if (!field || Has(kCommonKeys, key) || Has(own, key)) continue;
    std::vector<std::string> users;
    for (const ModelKind& k : ModelKindRegistry()) {
      if (Has(KeyNames(k), key)) users.push_back(k.name);
    }
    r.FailAt(field->key, field->path,
             "only used by kind " + Join(users) + " (this model is " + kind.name + ")");
  }
}

void ReadRecompute(const yaml::Reader& r, const Map& m, const ModelKind& kind, ModelSpec* spec) {
  const std::string transformers = Join(TransformerKinds());
  if (auto recompute = m.Get("recompute")) {
    const std::string v = r.String(*recompute);
    if (v == "none") {
      spec->recompute = Recompute::kNone;
    } else if (v == "full") {
      spec->recompute = Recompute::kFull;
    } else if (v == "selective") {
      if (!kind.transformer) {
        r.Fail(*recompute, "selective recomputation drops attention activations: only for kinds " +
                               transformers);
      }
      spec->recompute = Recompute::kSelective;
    } else {
      r.Fail(*recompute, "must be one of: none, selective, full");
    }
  }
  if (auto count = m.Get("recompute_layers")) {
    if (!kind.transformer) {
      r.Fail(*count, "only for kinds " + transformers + " (it counts transformer layers)");
    }
    spec->recompute_layers = r.Int(*count, 0);
    if (spec->recompute_layers > spec->layers) {
      r.Fail(*count, "must be <= layers (" + std::to_string(spec->layers) + ")");
    }
    if (spec->recompute == Recompute::kNone && spec->recompute_layers > 0) {
      r.Fail(*count, "needs recompute: selective or full");
    }
  }
}

}  // namespace

ModelSpec ReadModel(const yaml::Reader& r, const Field& f) {
  const std::vector<std::string> all = AllModelKeys();
  Map m(r, f, all);
  const ModelKind* kind = nullptr;
  if (auto given = m.Get("kind")) {
    kind = FindModelKind(r.String(*given));
    if (kind == nullptr) r.Fail(*given, "unknown model kind (known: " + Join(ModelKinds()) + ")");
  }
  ModelSpec spec;
  if (auto preset = m.Get("preset")) spec = ReadPreset(r, *preset, kind);
  if (kind == nullptr) kind = FindModelKind(spec.kind);  // the preset's, else gpt
  spec.kind = kind->name;
  spec.where = r.Where(f.key);

  RefuseOtherKindsKeys(r, m, all, *kind);
  kind->read(ModelFields(r, m, /*custom=*/spec.preset.empty()), &spec);
  ReadRecompute(r, m, *kind, &spec);
  return spec;
}

void ReadModelOverride(const yaml::Reader& r, const Field& f, const ModelSpec& base,
                       TrainingChoices* own) {
  Map m(r, f, {}, /*any_key=*/true);
  for (const auto& [key, field] : m.entries()) {
    if (!Has(kTrainingChoices, key)) {
      r.FailAt(field.key, field.path,
               "a strategy may change only how the model is trained: " + Join(kTrainingChoices) +
                   " (the model itself is the scenario's)");
    }
  }
  const ModelKind* kind = FindModelKind(base.kind);
  ModelSpec spec = base;
  if (auto attention = m.Get("attention")) {
    if (!kind->transformer) {
      r.Fail(*attention,
             "only for kinds " + Join(TransformerKinds()) + " (this model is " + kind->name + ")");
    }
    spec.attention = ReadAttentionChoice(r, *attention);
  }
  if (m.Get("recompute") && !m.Get("recompute_layers")) spec.recompute_layers = 0;
  ReadRecompute(r, m, *kind, &spec);
  if (m.Get("attention")) own->attention = spec.attention;
  if (m.Get("recompute")) own->recompute = spec.recompute;
  if (m.Get("recompute") || m.Get("recompute_layers")) {
    own->recompute_layers = spec.recompute_layers;
  }
}

}  // namespace scenario_sections
}  // namespace stratasim
