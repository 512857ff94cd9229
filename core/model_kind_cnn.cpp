// The convolutional image classifiers: resnet50 and vgg16, trained on ImageNet-1k crops.
#include <string>

#include "core/model_fields.h"
#include "core/model_kinds.h"

namespace stratasim {
namespace {

constexpr int kImageNetCrop = 224;  // He et al. 2016; Simonyan & Zisserman 2015
constexpr int kImageNetClasses = 1000;

ModelSpec Cnn(const char* kind) {
  ModelSpec m;
  m.kind = kind;
  m.preset = kind;
  m.image_size = kImageNetCrop;
  m.classes = kImageNetClasses;
  return m;
}

void ReadCnn(const ModelFields& m, ModelSpec* spec) {
  if (spec->image_size == 0) spec->image_size = kImageNetCrop;
  if (spec->classes == 0) spec->classes = kImageNetClasses;
  if (auto size = m.Get("image_size")) {
    spec->image_size = m.reader().Int(*size, 32);
    if (spec->image_size % 32 != 0) {
      m.reader().Fail(*size, "must be a multiple of 32 (the network halves it five times)");
    }
  }
  m.Positive("classes", &spec->classes, nullptr);
}

ModelKind CnnKind(const char* name) {
  ModelKind k;
  k.name = name;
  k.keys = {{"image_size", std::to_string(kImageNetCrop)},
            {"classes", std::to_string(kImageNetClasses)}};
  k.presets = {Cnn(name)};  // the published network, named as its kind
  k.example = std::string("{kind: ") + name + ", image_size: 64, classes: 10}";
  k.read = ReadCnn;
  return k;
}

}  // namespace

ModelKind ResNet50ModelKind() { return CnnKind("resnet50"); }
ModelKind Vgg16ModelKind() { return CnnKind("vgg16"); }

}  // namespace stratasim
