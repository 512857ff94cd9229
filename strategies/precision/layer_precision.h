// Layer-wise low precision: each weight layer (a GEMM op with weights: a linear or convolution
// layer, as DPC counts layers) computes in a format of its own, and its gradient travels at that
// format's bit width.
//
// A weight layer in format f while the model trains in the storage format s (StorageDType of
// training.precision, e.g. BF16), f != s:
//   - its three GEMMs (forward, input gradient, weight gradient) run at the GPU's peak for f
//     (KernelCost::dtype = f, core/hardware.h Peak) and read their two operands at
//     BytesPerElement(f) and write their result in s: the dequantization (the product of the
//     operands' scales) is fused into the GEMM's epilogue, as cuBLASLt's FP8 GEMMs write BF16
//     and CUTLASS's integer GEMMs write a scaled float output (LinearCombination epilogue);
//   - quantize kernels, memory-bound elementwise tasks, each reading its tensor in s and
//     writing it in f (per-tensor scales from the previous step's maxima, as delayed scaling
//     does, so no extra pass for the maximum; the amax bookkeeping is not modelled):
//       <op>_quant     forward   the input X (m k) and the weight W (k n)   (X + W)(b_s + b_f)
//       <op>_dy_quant  backward  the output gradient dY (m n)               Y (b_s + b_f)
//       <op>_dw_quant  backward  the weight gradient dW, after the weight-gradient GEMM, to
//                                the layer's wire format                    W (b_s + b_f)
//     (X, W, Y: elements of the op's input, weight and output; the weight is cast every
//     micro-batch, an upper bound of a cast cached across micro-batches);
//   - the GEMM keeps its input for the weight gradient at b_f per element (saved activations);
//   - its weight gradient is all-reduced at b_f bytes per parameter, and after the all-reduce a
//     dequantize kernel reads it at b_f and writes it at the optimizer's gradient bytes
//     (TrainingBytesPerParam): W (b_f + b_g).
// A layer in f == s is left exactly as the plain workload has it.
// Not modelled: the weights' memory by format (model states stay those of training.precision:
// the quantized copies are transient), the scale bookkeeping, and accuracy.
//
// Tied weights: when a LayerCost's GEMMs have more weights than the layer owns (GPT's output
// head, whose weight is the embedding table), the shared gradient also gets a contribution from
// a kernel in s, so it is all-reduced in s with its owner's: no <op>_dw_quant, no dequantize.
#ifndef STRATASIM_STRATEGIES_PRECISION_LAYER_PRECISION_H_
#define STRATASIM_STRATEGIES_PRECISION_LAYER_PRECISION_H_

#include <vector>

#include "core/dtype.h"
#include "models/workload.h"

namespace stratasim {

// One weight layer of a workload: w.layers[layer].ops[op].
struct WeightLayer {
  int layer = -1;
  int op = -1;
  double params = 0;  // its weight's elements: its capacity in DPC's sense
};

// Elements of an op's weight: the weight-gradient GEMM's output (k x n, times the batch of a
// grouped expert GEMM); 0 for an op without a weight-gradient GEMM.
double WeightElements(const OpCost& op);

// The weight layers of `w` (GEMM ops with a weight-gradient GEMM), in layer and op order.
std::vector<WeightLayer> WeightLayers(const Workload& w);

// What the formats change for the data-parallel lowering, per entry of w.layers.
struct LayerPrecision {
  std::vector<double> grad_bytes;    // bytes of the layer's gradient on the wire
  std::vector<double> decode_bytes;  // bytes of its dequantize kernels after the all-reduce
};

// Runs weight layer WeightLayers(w)[i] in formats[i] as the header describes, in a workload
// built in `storage` (w.dtype) whose gradients the optimizer keeps at `grad_bytes_per_param`;
// inserts the quantize ops and returns the gradient sizes. Call before ApplyRecompute (the
// saved activations change). Throws Error when formats has not one entry per weight layer, or
// an op's bytes do not hold its operands (a GEMM not built by models/ops.h).
LayerPrecision ApplyLayerFormats(Workload& w, const std::vector<DType>& formats, DType storage,
                                 double grad_bytes_per_param);

}  // namespace stratasim

#endif  // STRATASIM_STRATEGIES_PRECISION_LAYER_PRECISION_H_
