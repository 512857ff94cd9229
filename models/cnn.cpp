#include "models/cnn.h"

#include <string>

#include "models/ops.h"
#include "models/spec_check.h"

namespace stratasim {
namespace {

void Check(const ModelSpec& s, int micro_batch) {
  if (s.image_size < 32 || s.image_size % 32 != 0) {
    FailModel(s, "image_size", std::to_string(s.image_size),
              "must be a multiple of 32 (the network halves it five times)");
  }
  RequirePositive(s, "classes", s.classes);
  CheckMicroBatch(s, micro_batch);
}

// Training batch norm over `elements` values: one pass for the statistics, one to normalise
// (reads twice, writes once); keeps its input. Two parameters (scale, shift) per channel.
OpCost BatchNorm(const std::string& name, double elements, double e) {
  OpCost op = Elementwise(name, elements, e, 2, 1);
  op.saved_bytes = elements * e;
  return op;
}

Workload NewWorkload(const ModelSpec& spec, int micro_batch, DType dtype) {
  Workload w;
  w.kind = spec.kind;
  w.dtype = dtype;
  w.micro_batch = micro_batch;
  // Decoded 8-bit RGB pixels; normalisation runs on the GPU.
  w.input_bytes = 3.0 * spec.image_size * spec.image_size * micro_batch;
  return w;
}

// Average pool to 1x1 (when `pool`), the classifier and the loss.
LayerCost Head(double b, double channels, double size, double classes, double e) {
  LayerCost L;
  L.name = "head";
  OpCost pool = Elementwise("avgpool", b * channels * size * size, e, 1, 0);
  pool.saved_bytes = b * channels * size * size * e;  // the last ReLU's output, for its backward
  L.ops.push_back(pool);
  L.ops.push_back(Linear("fc", b, channels, classes, e));
  OpCost loss = Elementwise("cross_entropy", b * classes, 4, 1, 1);
  loss.saved_bytes = b * classes * 4;
  L.ops.push_back(loss);
  L.params = channels * classes + classes;
  return L;
}

}  // namespace

Workload BuildResNet50(const ModelSpec& spec, int micro_batch, DType dtype) {
  Check(spec, micro_batch);
  const double b = micro_batch, e = BytesPerElement(dtype);
  Workload w = NewWorkload(spec, micro_batch, dtype);

  double size = spec.image_size;
  LayerCost stem;
  stem.name = "stem";
  stem.ops.push_back(Conv2d("conv", b, 3, size, 64, 7, 2, e));
  size /= 2;
  stem.ops.push_back(BatchNorm("bn", b * 64 * size * size, e));
  stem.ops.push_back(Elementwise("relu", b * 64 * size * size, e, 1, 1));
  OpCost pool = Elementwise("maxpool", b * 64 * size * size, e, 1, 0.25);
  pool.saved_bytes = b * 64 * size * size * e;
  stem.ops.push_back(pool);
  size /= 2;
  stem.params = 7 * 7 * 3 * 64 + 2 * 64;
  w.layers.push_back(stem);

  const int blocks[] = {3, 4, 6, 3};
  const double widths[] = {64, 128, 256, 512};
  double channels = 64;
  for (int stage = 0; stage < 4; ++stage) {
    for (int i = 0; i < blocks[stage]; ++i) {
      const double width = widths[stage], out = 4 * width;
      const double stride = (stage > 0 && i == 0) ? 2 : 1;
      const double out_size = size / stride;
      LayerCost L;
      L.name = "stage" + std::to_string(stage + 1) + ".block" + std::to_string(i);
      L.recomputable = true;
      L.input_bytes = b * channels * size * size * e;
      L.ops.push_back(Conv2d("conv1", b, channels, size, width, 1, 1, e));
      L.ops.push_back(BatchNorm("bn1", b * width * size * size, e));
      L.ops.push_back(Elementwise("relu1", b * width * size * size, e, 1, 1));
      L.ops.push_back(Conv2d("conv2", b, width, size, width, 3, stride, e));
      L.ops.push_back(BatchNorm("bn2", b * width * out_size * out_size, e));
      L.ops.push_back(Elementwise("relu2", b * width * out_size * out_size, e, 1, 1));
      L.ops.push_back(Conv2d("conv3", b, width, out_size, out, 1, 1, e));
      L.ops.push_back(BatchNorm("bn3", b * out * out_size * out_size, e));
      L.params = channels * width + 9 * width * width + width * out + 2 * (2 * width + out);
      if (i == 0) {
        // The shortcut projects the block input, already kept by conv1.
        L.ops.push_back(Conv2d("downsample", b, channels, size, out, 1, stride, e, false));
        L.ops.push_back(BatchNorm("downsample_bn", b * out * out_size * out_size, e));
        L.params += channels * out + 2 * out;
      }
      L.ops.push_back(Elementwise("add_relu", b * out * out_size * out_size, e, 2, 1));
      w.layers.push_back(L);
      channels = out;
      size = out_size;
    }
  }
  w.layers.push_back(Head(b, channels, size, spec.classes, e));
  FinalizeWorkload(w);
  return w;
}

Workload BuildVgg16(const ModelSpec& spec, int micro_batch, DType dtype) {
  Check(spec, micro_batch);
  const double b = micro_batch, e = BytesPerElement(dtype);
  Workload w = NewWorkload(spec, micro_batch, dtype);

  // Output channels of the 13 3x3 convolutions; 0 marks a 2x2 max pool.
  const double plan[] = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                         0,  512, 512, 512, 0,   512, 512, 512, 0};
  double size = spec.image_size, channels = 3;
  int index = 0;
  for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); ++i) {
    if (plan[i] == 0) continue;
    const double out = plan[i];
    LayerCost L;
    L.name = "conv" + std::to_string(++index);
    L.recomputable = true;
    L.input_bytes = b * channels * size * size * e;
    L.ops.push_back(Conv2d("conv", b, channels, size, out, 3, 1, e));
    L.ops.push_back(Elementwise("bias_relu", b * out * size * size, e, 1, 1));
    if (i + 1 < sizeof(plan) / sizeof(plan[0]) && plan[i + 1] == 0) {
      OpCost pool = Elementwise("maxpool", b * out * size * size, e, 1, 0.25);
      pool.saved_bytes = b * out * size * size * e;
      L.ops.push_back(pool);
      size /= 2;
    }
    L.params = 9 * channels * out + out;
    w.layers.push_back(L);
    channels = out;
  }
  const double widths[] = {channels * size * size, 4096, 4096, static_cast<double>(spec.classes)};
  for (int i = 0; i < 3; ++i) {
    LayerCost L;
    L.name = "fc" + std::to_string(i + 1);
    L.ops.push_back(Linear("fc", b, widths[i], widths[i + 1], e));
    L.params = widths[i] * widths[i + 1] + widths[i + 1];
    if (i < 2) {
      L.ops.push_back(Elementwise("bias_relu", b * widths[i + 1], e, 1, 1));
      L.ops.push_back(Dropout("dropout", b * widths[i + 1], e));
    } else {
      OpCost loss = Elementwise("cross_entropy", b * widths[i + 1], 4, 1, 1);
      loss.saved_bytes = b * widths[i + 1] * 4;
      L.ops.push_back(loss);
    }
    w.layers.push_back(L);
  }
  FinalizeWorkload(w);
  return w;
}

}  // namespace stratasim
