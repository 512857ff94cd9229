#include "validate/cuda/task_kernels.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "kernels/adam.h"
#include "kernels/convert.h"
#include "kernels/elementwise.h"
#include "kernels/flash_attention.h"
#include "kernels/quantize.h"
#include "kernels/rowwise.h"

namespace stratasim::validate::cuda {
namespace {

long long RoundDim(double v, long long multiple) {
  long long d = std::max(1LL, std::llround(v));
  return (d + multiple - 1) / multiple * multiple;
}

bool NameHas(const Task& t, const char* word) {
  return t.name.str().find(word) != std::string::npos;
}

bool IsFloatFormat(DType d) {
  return d == DType::kFP32 || d == DType::kTF32 || d == DType::kFP16 || d == DType::kBF16;
}

std::size_t Bytes(double b) { return static_cast<std::size_t>(std::ceil(std::max(0.0, b))); }

KernelPlan GemmPlan(const Task& t, GemmShape shape) {
  KernelPlan p;
  p.kind = KernelKind::kGemm;
  p.dtype = t.dtype == DType::kINT4 ? DType::kINT8 : t.dtype;
  const long long align = p.dtype == DType::kFP8 ? 16 : 1;
  p.gemm = kernels::GemmProblem{p.dtype,
                                RoundDim(shape.m, align),
                                RoundDim(shape.n, align),
                                RoundDim(shape.k, p.dtype == DType::kINT8 ? 4 : align),
                                RoundDim(shape.batch, 1),
                                true};
  p.flops = p.gemm.flops();
  p.buffers = {Bytes(p.gemm.bytes_a()), Bytes(p.gemm.bytes_b()), Bytes(p.gemm.bytes_c()), 0};
  p.bytes = p.gemm.bytes_a() + p.gemm.bytes_b() + p.gemm.bytes_c();
  return p;
}

std::string TaskName(const Task& t) { return "task " + std::to_string(t.id) + " '" + t.name + "'"; }

KernelPlan FusedAttentionPlan(const Task& t) {
  if (!kernels::CudnnAvailable()) {
    throw Error(FusedAttentionUnavailable(t, kernels::CudnnUnavailableReason()));
  }
  if (!t.gemm.known()) {
    throw Error(TaskName(t) +
                ": a fused attention task needs its shape (gemm batch = sequences x heads, "
                "m = query rows, n = key rows, k = head dimension)");
  }
  KernelPlan p;
  // cuDNN's engine takes FP16 and BF16; the other formats (FP32, TF32, FP8, ...) run in BF16.
  p.dtype = t.dtype == DType::kFP16 ? DType::kFP16 : DType::kBF16;
  kernels::FlashAttentionShape& a = p.attention;
  a.batch = RoundDim(t.gemm.batch, 1);
  a.s_q = RoundDim(t.gemm.m, 1);
  a.s_kv = RoundDim(t.gemm.n, 1);
  a.d = RoundDim(t.gemm.k, 8);  // the engine's alignment: 16-byte rows
  a.causal = t.causal;
  if (a.causal && a.s_q != a.s_kv) {
    throw Error(TaskName(t) + ": a causal fused attention needs as many queries as keys (m " +
                std::to_string(a.s_q) + ", n " + std::to_string(a.s_kv) + ")");
  }
  const double e = BytesPerElement(p.dtype);
  const double b = a.batch, sq = a.s_q, skv = a.s_kv, d = a.d;
  const double q_bytes = e * b * sq * d, kv_bytes = e * b * skv * d;
  if (t.phase != Phase::kBackward) {
    p.kind = KernelKind::kFlashForward;
    p.buffers = {Bytes(q_bytes), Bytes(2 * kv_bytes), Bytes(q_bytes), Bytes(4 * b * sq)};
    // Causal: the engine skips the tiles above the diagonal, s(s+1)/2 scores per entry.
    p.flops = 4 * b * d * (a.causal ? sq * (sq + 1) / 2 : sq * skv);
    p.bytes = 2 * q_bytes + 2 * kv_bytes + 4 * b * sq;
    return p;
  }
  p.kind = KernelKind::kFlashBackward;
  const double scores = e * sq * skv;  // one entry's S (or P, dP, dS)
  p.chunk =
      std::max(1LL, std::min(a.batch, static_cast<long long>(kBackwardScoreBytes / (2 * scores))));
  p.buffers = {Bytes(2 * q_bytes), Bytes(2 * kv_bytes), Bytes(q_bytes + 2 * kv_bytes),
               Bytes(2 * scores * p.chunk)};
  p.flops = 10 * b * sq * skv * d;
  // Inputs read and gradients written, plus each entry's score traffic: S written, softmax
  // read and written, P read twice, dP written, the scale-add's two reads and one write, dS
  // read twice: 10 passes over s_q x s_kv.
  p.bytes = 2 * q_bytes + 2 * kv_bytes + q_bytes + 2 * kv_bytes + 10 * scores * b;
  return p;
}

}  // namespace

std::string FusedAttentionUnavailable(const Task& t, const std::string& reason) {
  return TaskName(t) + ": no fused attention kernel: " + reason;
}

std::string_view ToString(KernelKind k) {
  switch (k) {
    case KernelKind::kNone:
      return "none";
    case KernelKind::kGemm:
      return "gemm";
    case KernelKind::kScaleAdd:
      return "scale_add";
    case KernelKind::kGelu:
      return "gelu";
    case KernelKind::kSoftmax:
      return "softmax";
    case KernelKind::kLayerNorm:
      return "layernorm";
    case KernelKind::kAdam:
      return "adam";
    case KernelKind::kQuantize:
      return "quantize_int8";
    case KernelKind::kFlashForward:
      return "flash_attention_fwd";
    case KernelKind::kFlashBackward:
      return "flash_attention_bwd";
  }
  return "?";
}

KernelPlan PlanKernel(const Task& t) {
  if (t.kind != TaskKind::kCompute) {
    throw Error("task " + std::to_string(t.id) + " '" + t.name + "' is a " +
                std::string(ToString(t.kind)) + " task, not a compute task");
  }
  if (t.op == OpKind::kFusedAttention) return FusedAttentionPlan(t);
  if (t.op != OpKind::kElementwise && t.op != OpKind::kOptimizer && t.gemm.known()) {
    return GemmPlan(t, t.gemm);
  }
  if (t.op == OpKind::kOptimizer && (t.flops > 0 || t.bytes > 0)) {
    KernelPlan p;
    p.kind = KernelKind::kAdam;
    p.dtype = IsFloatFormat(t.dtype) ? t.dtype : DType::kFP32;
    const double e = BytesPerElement(p.dtype);
    // p, m, v read and written in FP32 (24 bytes) and the gradient read.
    p.elements = std::max(1LL, std::llround(t.flops > 0 ? t.flops / 10 : t.bytes / (24 + e)));
    p.flops = 10.0 * p.elements;
    const std::size_t f32 = Bytes(4.0 * p.elements);
    p.buffers = {f32, Bytes(e * p.elements), f32, f32};
    p.bytes = (24 + e) * p.elements;
    return p;
  }
  if (t.op != OpKind::kElementwise && t.op != OpKind::kOptimizer && t.flops > 0) {
    const double side = std::cbrt(t.flops / 2);
    return GemmPlan(t, GemmShape{side, side, side, 1});
  }
  if (t.bytes <= 0) return KernelPlan{};
  KernelPlan p;
  p.dtype = IsFloatFormat(t.dtype) ? t.dtype : DType::kFP16;
  const double e = BytesPerElement(p.dtype);
  auto two_pass = [&](KernelKind kind) {  // one read and one write per value
    p.kind = kind;
    p.elements = std::max(1LL, std::llround(t.bytes / (2 * e)));
  };
  if (NameHas(t, "softmax")) {
    two_pass(KernelKind::kSoftmax);
  } else if (NameHas(t, "norm")) {
    two_pass(KernelKind::kLayerNorm);
  } else if (NameHas(t, "gelu") || NameHas(t, "swiglu") || NameHas(t, "relu")) {
    two_pass(KernelKind::kGelu);
  } else if (NameHas(t, "quant")) {
    p.kind = KernelKind::kQuantize;  // reads a value, writes one byte
    p.elements = std::max(1LL, std::llround(t.bytes / (e + 1)));
  } else {
    p.kind = KernelKind::kScaleAdd;
    p.elements = std::max(1LL, std::llround(t.bytes / (3 * e)));
  }
  if (p.kind == KernelKind::kSoftmax || p.kind == KernelKind::kLayerNorm) {
    // Whole rows: round the values up to rows of kRowLength.
    p.elements = (p.elements + kRowLength - 1) / kRowLength * kRowLength;
  }
  const std::size_t values = Bytes(e * p.elements);
  switch (p.kind) {
    case KernelKind::kScaleAdd:
      p.buffers = {values, values, 0, 0};
      p.bytes = 3 * e * p.elements;
      p.flops = 2.0 * p.elements;
      break;
    case KernelKind::kQuantize:
      p.buffers = {values, Bytes(p.elements), Bytes(4.0 * (p.elements / kQuantBlock + 1)), 0};
      p.bytes = (e + 1) * p.elements;
      p.flops = 2.0 * p.elements;
      break;
    case KernelKind::kLayerNorm:
      p.buffers = {values, values, Bytes(2.0 * kRowLength * 4), 0};
      p.bytes = 2 * e * p.elements;
      p.flops = 8.0 * p.elements;
      break;
    default:  // softmax, gelu
      p.buffers = {values, values, 0, 0};
      p.bytes = 2 * e * p.elements;
      p.flops = 8.0 * p.elements;
  }
  return p;
}

KernelLauncher::KernelLauncher(kernels::Blas& blas) : blas_(blas) {}

KernelLauncher::~KernelLauncher() = default;

void KernelLauncher::Reserve(const KernelPlan& p) {
  for (std::size_t i = 0; i < need_.size(); ++i) need_[i] = std::max(need_[i], p.buffers[i]);
  if (p.kind == KernelKind::kFlashForward) {
    if (!flash_) flash_ = std::make_unique<kernels::FlashAttention>();
    flash_->PrepareForward(p.dtype, p.attention);
  }
}

void KernelLauncher::FlashBackward(const KernelPlan& p, cudaStream_t stream) {
  const kernels::FlashAttentionShape& a = p.attention;
  const std::size_t e = static_cast<std::size_t>(BytesPerElement(p.dtype));
  const std::size_t q = static_cast<std::size_t>(a.s_q * a.d) * e;  // one entry's Q
  const std::size_t kv = static_cast<std::size_t>(a.s_kv * a.d) * e;
  const std::size_t scores = static_cast<std::size_t>(a.s_q * a.s_kv) * e;
  const std::size_t b = static_cast<std::size_t>(a.batch);
  auto at = [](const kernels::DeviceBuffer& buf, std::size_t offset) {
    return static_cast<unsigned char*>(buf.get()) + offset;
  };
  unsigned char* s = at(buf_[3], 0);
  unsigned char* ds = at(buf_[3], scores * static_cast<std::size_t>(p.chunk));
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.d)));
  for (long long first = 0; first < a.batch; first += p.chunk) {
    const long long n = std::min(p.chunk, a.batch - first);
    const std::size_t f = static_cast<std::size_t>(first);
    const void* q_in = at(buf_[0], f * q);
    const void* dout = at(buf_[0], b * q + f * q);
    const void* k_in = at(buf_[1], f * kv);
    const void* v_in = at(buf_[1], b * kv + f * kv);
    void* dq = at(buf_[2], f * q);
    void* dk = at(buf_[2], b * q + f * kv);
    void* dv = at(buf_[2], b * q + b * kv + f * kv);
    using kernels::GemmProblem;
    // S = Q K^T, then P = softmax(S / sqrt(d)) in place (the forward, recomputed).
    blas_.Gemm(GemmProblem{p.dtype, a.s_q, a.s_kv, a.d, n, true}, q_in, k_in, s, stream);
    kernels::Softmax(p.dtype, s, s, n * a.s_q, static_cast<int>(a.s_kv), scale, stream);
    // dV = P^T dO: P read as [s_kv][s_q] (the product's shape and traffic; cuBLAS is given
    // the tile untransposed).
    blas_.Gemm(GemmProblem{p.dtype, a.s_kv, a.d, a.s_q, n, false}, s, dout, dv, stream);
    // dP = dO V^T; dS = P * (dP - D): one read of P and dP and one write, as a scale-add.
    blas_.Gemm(GemmProblem{p.dtype, a.s_q, a.s_kv, a.d, n, true}, dout, v_in, ds, stream);
    kernels::ScaleAdd(p.dtype, -1.0f, s, ds, n * a.s_q * a.s_kv, stream);
    // dQ = dS K and dK = dS^T Q (dS read as [s_kv][s_q], as P above).
    blas_.Gemm(GemmProblem{p.dtype, a.s_q, a.d, a.s_kv, n, false}, ds, k_in, dq, stream);
    blas_.Gemm(GemmProblem{p.dtype, a.s_kv, a.d, a.s_q, n, false}, ds, q_in, dk, stream);
  }
}

void KernelLauncher::Allocate(std::uint64_t seed, cudaStream_t stream) {
  for (std::size_t i = 0; i < need_.size(); ++i) {
    if (buf_[i].bytes() >= need_[i]) continue;
    buf_[i] = kernels::DeviceBuffer();  // free before allocating the larger one
    buf_[i] = kernels::DeviceBuffer(need_[i]);
    kernels::FillUniform(DType::kBF16, buf_[i].get(), static_cast<long long>(need_[i] / 2),
                         seed + i, -1.0f, 1.0f, stream);
  }
}

void KernelLauncher::Launch(const KernelPlan& p, cudaStream_t stream) {
  for (std::size_t i = 0; i < need_.size(); ++i) {
    if (buf_[i].bytes() < p.buffers[i]) {
      throw Error("KernelLauncher: scratch buffer " + std::to_string(i) + " holds " +
                  std::to_string(buf_[i].bytes()) + " bytes, the " + std::string(ToString(p.kind)) +
                  " kernel needs " + std::to_string(p.buffers[i]) +
                  " (Reserve it before Allocate)");
    }
  }
  void* a = buf_[0].get();
  void* b = buf_[1].get();
  void* c = buf_[2].get();
  void* d = buf_[3].get();
  switch (p.kind) {
    case KernelKind::kNone:
      return;
    case KernelKind::kGemm:
      blas_.Gemm(p.gemm, a, b, c, stream);
      return;
    case KernelKind::kScaleAdd:
      kernels::ScaleAdd(p.dtype, 0.5f, a, b, p.elements, stream);
      return;
    case KernelKind::kGelu:
      kernels::Gelu(p.dtype, a, b, p.elements, stream);
      return;
    case KernelKind::kSoftmax:
      kernels::Softmax(p.dtype, a, b, p.elements / kRowLength, kRowLength, 1.0f, stream);
      return;
    case KernelKind::kLayerNorm: {
      float* gamma = static_cast<float*>(c);
      kernels::LayerNorm(p.dtype, a, gamma, gamma + kRowLength, b, p.elements / kRowLength,
                         kRowLength, 1e-5f, stream);
      return;
    }
    case KernelKind::kAdam: {
      kernels::reference::AdamConfig config;  // defaults of torch.optim.AdamW but no decay
      kernels::AdamStep(config, p.dtype, static_cast<float*>(a), b, static_cast<float*>(c),
                        static_cast<float*>(d), p.elements, stream);
      return;
    }
    case KernelKind::kQuantize:
      kernels::QuantizeInt8(p.dtype, a, p.elements, kQuantBlock, static_cast<std::int8_t*>(b),
                            static_cast<float*>(c), stream);
      return;
    case KernelKind::kFlashForward: {
      // K and V share buffer 1: V follows the batch's K.
      const std::size_t kv = static_cast<std::size_t>(p.attention.batch * p.attention.s_kv *
                                                      p.attention.d * BytesPerElement(p.dtype));
      if (!flash_) flash_ = std::make_unique<kernels::FlashAttention>();
      flash_->Forward(p.dtype, p.attention, a, b, static_cast<unsigned char*>(b) + kv, c,
                      static_cast<float*>(d), stream);
      return;
    }
    case KernelKind::kFlashBackward:
      FlashBackward(p, stream);
      return;
  }
}

}  // namespace stratasim::validate::cuda
