#include "models/workload.h"

#include "core/model_presets.h"
#include "models/bert.h"
#include "models/cnn.h"
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

Workload BuildByKind(const ModelSpec& spec, int micro_batch, DType dtype, std::uint64_t seed,
                     int batch_index) {
  if (spec.kind == "gpt") return BuildGpt(spec, micro_batch, dtype);
  if (spec.kind == "bert") return BuildBert(spec, micro_batch, dtype);
  if (spec.kind == "llama") return BuildLlama(spec, micro_batch, dtype);
  if (spec.kind == "moe") return BuildMoe(spec, micro_batch, dtype);
  if (spec.kind == "resnet50") return BuildResNet50(spec, micro_batch, dtype);
  if (spec.kind == "vgg16") return BuildVgg16(spec, micro_batch, dtype);
  if (spec.kind == "graphsage") {
    return BuildGraphSage(spec, micro_batch, dtype, seed, batch_index);
  }
  FailModel(spec, "kind", spec.kind,
            "unknown model kind (known: gpt, bert, llama, moe, resnet50, vgg16, graphsage)");
}

}  // namespace

Workload BuildWorkload(const ModelSpec& spec, int micro_batch, DType dtype, std::uint64_t seed,
                       int batch_index) {
  Workload w = BuildByKind(spec, micro_batch, dtype, seed, batch_index);
  if (spec.recompute == Recompute::kSelective && !IsTransformerKind(spec.kind)) {
    FailModel(spec, "recompute", "selective",
              "selective recomputation drops attention activations: only for kinds gpt, bert, "
              "llama, moe");
  }
  ApplyRecompute(w, spec.recompute, spec.recompute_layers);
  return w;
}

double ModelParameterCount(const ModelSpec& spec) {
  // Parameters do not depend on the batch; GraphSAGE's would not either, but building it samples
  // a mini-batch, so it has its closed form.
  if (spec.kind == "graphsage") return GraphSageParameterCount(spec);
  return BuildByKind(spec, 1, DType::kBF16, 0, 0).params;
}

}  // namespace stratasim
