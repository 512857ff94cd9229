// The `model:` map as a kind's entry reads it (core/model_kinds.h): the map's fields, already
// checked against the kind's keys, and the readers of the file. Internal to core/: it exposes
// yaml-cpp's types (core/yaml_util.h).
#ifndef STRATASIM_CORE_MODEL_FIELDS_H_
#define STRATASIM_CORE_MODEL_FIELDS_H_

#include <optional>
#include <string>

#include "core/scenario.h"
#include "core/yaml_util.h"

namespace stratasim {

// `attention: flash | unfused` (a transformer's, or a strategy's own: core/scenario.h).
Attention ReadAttentionChoice(const yaml::Reader& r, const yaml::Field& f);

class ModelFields {
 public:
  // `custom`: no preset was named, so the dimensions a preset would give must be written.
  ModelFields(const yaml::Reader& reader, const yaml::Map& map, bool custom)
      : reader_(reader), map_(map), custom_(custom) {}

  const yaml::Reader& reader() const { return reader_; }
  bool custom() const { return custom_; }
  std::optional<yaml::Field> Get(const std::string& key) const { return map_.Get(key); }
  yaml::Field Require(const std::string& key, const std::string& why = "") const {
    return map_.Require(key, why);
  }
  // Reads `key`, if written, as an integer >= 1 into *target. Left out of a custom model, it is
  // required with the reason `why`, unless `why` is null (the kind has a default).
  void Positive(const char* key, int* target, const char* why) const;

 private:
  const yaml::Reader& reader_;
  const yaml::Map& map_;
  bool custom_;
};

}  // namespace stratasim

#endif  // STRATASIM_CORE_MODEL_FIELDS_H_
