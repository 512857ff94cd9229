#include "models/fp8.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "models/test_util.h"

namespace stratasim {
namespace {

const OpCost& Op(const Workload& w, const std::string& layer, const std::string& name) {
  for (const LayerCost& L : w.layers) {
    if (L.name != layer) continue;
    for (const OpCost& op : L.ops) {
      if (op.name == name) return op;
    }
  }
  throw Error("no op " + layer + "/" + name);
}

bool Has(const Workload& w, const std::string& layer, const std::string& name) {
  try {
    Op(w, layer, name);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// GPT of hidden 1024 (16 heads), sequence 512, micro-batch 2: the QKV GEMM is
// [1024 tokens x 1024] x [1024 x 3072].
const ModelSpec kGpt = testing::Transformer("gpt", 2, 1024, 16, 512, 1000);
constexpr double m = 1024, k = 1024, n = 3072;

TEST(Fp8, LinearGemmsReadFp8InputsAndWriteBf16) {
  const Workload bf16 = BuildWorkload(kGpt, 2, DType::kBF16);
  const Workload fp8 = BuildWorkload(kGpt, 2, DType::kFP8);
  EXPECT_TRUE(fp8.fp8);
  EXPECT_EQ(fp8.dtype, DType::kBF16);  // activations and elementwise kernels stay BF16
  const OpCost& a = Op(bf16, "layer0", "qkv");
  const OpCost& b = Op(fp8, "layer0", "qkv");
  EXPECT_DOUBLE_EQ(a.forward.bytes, 2 * (m * k + k * n + m * n));
  // X and W at 1 byte (half of BF16), Y at 2.
  EXPECT_DOUBLE_EQ(b.forward.bytes, (m * k + k * n) + 2 * m * n);
  EXPECT_DOUBLE_EQ(b.forward.flops, a.forward.flops);
  for (const KernelCost* c : {&b.forward, &b.backward_input, &b.backward_weight}) {
    ASSERT_TRUE(c->dtype.has_value());
    EXPECT_EQ(*c->dtype, DType::kFP8);
  }
  // dX = dY W^T: dY [m x n] and W [n x k] in FP8, dX [m x k] in BF16.
  EXPECT_DOUBLE_EQ(b.backward_input.bytes, (m * n + n * k) + 2 * m * k);
  // The input is saved as its FP8 copy; Q, K and V (for attention) stay BF16.
  EXPECT_DOUBLE_EQ(a.saved_bytes - b.saved_bytes, m * k);
  EXPECT_DOUBLE_EQ(fp8.ForwardFlops(), bf16.ForwardFlops());
  EXPECT_DOUBLE_EQ(fp8.BackwardFlops(), bf16.BackwardFlops());
  EXPECT_TRUE(IsFp8Gemm(Op(fp8, "layer1", "mlp_down")));
}

TEST(Fp8, EverythingButTheLinearGemmsStaysBf16) {
  const Workload bf16 = BuildWorkload(kGpt, 2, DType::kBF16);
  const Workload fp8 = BuildWorkload(kGpt, 2, DType::kFP8);
  // Attention's core (TE keeps it in BF16), norms, activations: unchanged.
  for (const char* name : {"attention", "norm1", "gelu"}) {
    const OpCost& a = Op(bf16, "layer0", name);
    const OpCost& b = Op(fp8, "layer0", name);
    EXPECT_FALSE(b.forward.dtype.has_value()) << name;
    EXPECT_DOUBLE_EQ(b.forward.bytes, a.forward.bytes) << name;
    EXPECT_DOUBLE_EQ(b.saved_bytes, a.saved_bytes) << name;
  }
  EXPECT_FALSE(IsFp8Gemm(Op(fp8, "head", "logits")));
  EXPECT_FALSE(Has(fp8, "head", "logits_fp8_cast"));
}

TEST(Fp8, CastsAndAmaxUpdatesAreMemoryBoundKernels) {
  const Workload fp8 = BuildWorkload(kGpt, 2, DType::kFP8);
  // Forward: X and W read in BF16, written in FP8 and transposed FP8: 4 bytes per element.
  const OpCost& cast = Op(fp8, "layer0", "qkv_fp8_cast");
  EXPECT_EQ(cast.kind, OpKind::kElementwise);
  EXPECT_DOUBLE_EQ(cast.forward.bytes, 4 * (m * k + k * n));
  EXPECT_TRUE(cast.backward_input.empty());
  // Backward: dY [m x n] the same way, before the GEMM's backward (after it in forward order).
  const OpCost& grad = Op(fp8, "layer0", "qkv_fp8_grad_cast");
  EXPECT_TRUE(grad.forward.empty());
  EXPECT_DOUBLE_EQ(grad.backward_input.bytes, 4 * m * n);
  const LayerCost& L = fp8.layers[1];
  size_t at = 0;
  while (L.ops[at].name != "qkv") ++at;
  EXPECT_EQ(L.ops[at - 1].name, "qkv_fp8_cast");
  EXPECT_EQ(L.ops[at + 1].name, "qkv_fp8_grad_cast");
  // Four FP8 GEMMs (qkv, proj, mlp_up, mlp_down): X and W forward, dY backward, each with a
  // history of 1,024 FP32 amaxes read and written.
  const OpCost& amax = L.ops.back();
  EXPECT_EQ(amax.name, "fp8_amax");
  EXPECT_DOUBLE_EQ(amax.forward.bytes, 4 * 2 * 2 * kAmaxHistory * 4);
  EXPECT_DOUBLE_EQ(amax.backward_input.bytes, 4 * 1 * 2 * kAmaxHistory * 4);
}

TEST(Fp8, MoeExpertsRunInFp8ButNotTheRouter) {
  ModelSpec moe = testing::Transformer("moe", 1, 256, 4, 64, 100);
  moe.experts = 4;
  moe.top_k = 2;
  moe.capacity_factor = 1;
  const Workload w = BuildWorkload(moe, 1, DType::kFP8);
  EXPECT_TRUE(IsFp8Gemm(Op(w, "layer0", "expert_up")));
  EXPECT_EQ(Op(w, "layer0", "expert_up").forward.gemm.batch, 4);
  EXPECT_FALSE(IsFp8Gemm(Op(w, "layer0", "router")));
  EXPECT_TRUE(Has(w, "layer0", "expert_down_fp8_cast"));
}

TEST(Fp8, OnlyTransformerKinds) {
  ModelSpec cnn;
  cnn.kind = "resnet50";
  cnn.image_size = 224;
  cnn.classes = 1000;
  cnn.where = SourceLocation{"s.yaml", 3, 1};
  try {
    BuildWorkload(cnn, 1, DType::kFP8);
    FAIL() << "expected an error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.yaml:3:1: model.kind = \"resnet50\": FP8 training runs transformer layers' "
              "linear GEMMs in FP8: only for kinds gpt, bert, llama, moe");
  }
}

}  // namespace
}  // namespace stratasim
