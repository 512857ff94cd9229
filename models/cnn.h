// Convolutional image classifiers used by the data-parallel and compression papers: ResNet-50
// and VGG-16, layer by layer (convolutions as implicit GEMMs, batch norms, ReLUs, pools, fully
// connected layers, softmax cross-entropy), on square images of spec.image_size pixels.
//
// Saved activations: a convolution or linear layer keeps its input, a batch norm its input,
// a pool its input; in-place ReLUs keep nothing of their own (their output is the next layer's
// saved input). The layers a strategy sees are ResNet's stem, its 16 bottleneck blocks and
// its head, and VGG's 13 convolution and 3 fully connected layers.
#ifndef STRATASIM_MODELS_CNN_H_
#define STRATASIM_MODELS_CNN_H_

#include "core/scenario.h"
#include "models/workload.h"

namespace stratasim {

// ResNet-50 v1.5 (He et al. 2016, "Deep Residual Learning for Image Recognition", Table 1;
// v1.5 puts the stride of each downsampling bottleneck on its 3x3 convolution, as torchvision
// and NVIDIA's DeepLearningExamples do): 25.6 M parameters, about 4.1 G multiply-adds forward
// per 224x224 image.
Workload BuildResNet50(const ModelSpec& spec, int micro_batch, DType dtype);

// VGG-16, configuration D of Simonyan & Zisserman 2015, "Very Deep Convolutional Networks for
// Large-Scale Image Recognition", Table 1 (no batch norm; dropout after the first two fully
// connected layers): 138.4 M parameters, about 15.5 G multiply-adds per 224x224 image.
Workload BuildVgg16(const ModelSpec& spec, int micro_batch, DType dtype);

}  // namespace stratasim

#endif  // STRATASIM_MODELS_CNN_H_
