#include "models/workload.h"

#include <string>
#include <vector>

#include "core/model_presets.h"
#include "models/bert.h"
#include "models/cnn.h"
#include "models/fp8.h"
#include "models/gpt.h"
#include "models/graphsage.h"
#include "models/llama.h"
#include "models/moe.h"
#include "models/recompute.h"
#include "models/spec_check.h"

namespace stratasim {

double LayerCost::ForwardFlops() const {
  double f = 0;
  for (const OpCost& op : ops) f += op.forward.flops;
  return f;
}

double LayerCost::BackwardFlops() const {
  double f = 0;
  for (const OpCost& op : ops) f += op.BackwardFlops();
  return f;
}

double LayerCost::RecomputeFlops() const {
  double f = 0;
  for (const OpCost& op : ops) f += op.recomputed ? op.forward.flops : 0;
  return f;
}

double Workload::ForwardFlops() const {
  double f = 0;
  for (const LayerCost& L : layers) f += L.ForwardFlops();
  return f;
}

double Workload::BackwardFlops() const {
  double f = 0;
  for (const LayerCost& L : layers) f += L.BackwardFlops();
  return f;
}

double Workload::RecomputeFlops() const {
  double f = 0;
  for (const LayerCost& L : layers) f += L.RecomputeFlops();
  return f;
}

double Workload::ActivationBytes() const {
  double b = 0;
  for (const LayerCost& L : layers) b += L.activation_bytes;
  return b;
}

void FinalizeWorkload(Workload& w) {
  w.params = 0;
  for (const LayerCost& L : w.layers) w.params += L.params;
  ApplyRecompute(w, Recompute::kNone);
}

namespace {

// "gpt, bert, llama", as the loader's messages list names.
std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

using Builder = Workload (*)(const ModelSpec& spec, int micro_batch, DType dtype,
                             std::uint64_t seed, int batch_index);

template <Workload (*build)(const ModelSpec&, int, DType)>
Workload Unseeded(const ModelSpec& spec, int micro_batch, DType dtype, std::uint64_t, int) {
  return build(spec, micro_batch, dtype);
}

// The workload of each model kind, by the name of its entry in core/model_kinds.h (which core/
// keeps, as it may not depend on models/). `parameters` is a closed form for a kind whose build
// costs more than its count (null: build one micro-batch and sum).
struct KindBuilder {
  const char* kind;
  Builder build;
  double (*parameters)(const ModelSpec&);
};

constexpr KindBuilder kBuilders[] = {
    {"gpt", Unseeded<BuildGpt>, nullptr},
    {"bert", Unseeded<BuildBert>, nullptr},
    {"llama", Unseeded<BuildLlama>, nullptr},
    {"moe", Unseeded<BuildMoe>, nullptr},
    {"resnet50", Unseeded<BuildResNet50>, nullptr},
    {"vgg16", Unseeded<BuildVgg16>, nullptr},
    // Parameters do not depend on the batch; GraphSAGE's would not either, but building it
    // samples a mini-batch, so it has its closed form.
    {"graphsage", BuildGraphSage, GraphSageParameterCount},
};

const KindBuilder& BuilderOf(const ModelSpec& spec) {
  for (const KindBuilder& b : kBuilders) {
    if (spec.kind == b.kind) return b;
  }
  FailModel(spec, "kind", spec.kind, "unknown model kind (known: " + JoinNames(ModelKinds()) + ")");
}

}  // namespace

Workload BuildWorkload(const ModelSpec& spec, int micro_batch, DType dtype, std::uint64_t seed,
                       int batch_index) {
  const bool fp8 = dtype == DType::kFP8;
  if (fp8 && !IsTransformerKind(spec.kind)) {
    FailModel(spec, "kind", spec.kind,
              "FP8 training runs transformer layers' linear GEMMs in FP8: only for kinds " +
                  JoinNames(TransformerKinds()));
  }
  Workload w = BuilderOf(spec).build(spec, micro_batch, StorageDType(dtype), seed, batch_index);
  if (fp8) ApplyFp8Training(w);
  if (spec.recompute == Recompute::kSelective && !IsTransformerKind(spec.kind)) {
    FailModel(spec, "recompute", "selective",
              "selective recomputation drops attention activations: only for kinds " +
                  JoinNames(TransformerKinds()));
  }
  ApplyRecompute(w, spec.recompute, spec.recompute_layers);
  return w;
}

double ModelParameterCount(const ModelSpec& spec) {
  const KindBuilder& b = BuilderOf(spec);
  if (b.parameters != nullptr) return b.parameters(spec);
  return b.build(spec, 1, DType::kBF16, 0, 0).params;
}

}  // namespace stratasim
