#include "kernels/flash_attention.h"

#include <cudnn_graph.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kernels/cuda_check.h"
#include "kernels/cudnn_check.h"
#include "kernels/device_buffer.h"

namespace stratasim::kernels {
namespace {

// Unique ids of the tensors a launch binds to memory (the variant pack); virtual tensors
// (never in memory) take ids from kFirstVirtual up.
enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kNegInf, kFirstVirtual = 100 };

// An owned backend descriptor.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    STRATASIM_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_));
  }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }

  template <typename T>
  Desc& Set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T& value) {
    STRATASIM_CUDNN_CHECK(cudnnBackendSetAttribute(d_, name, type, 1, &value));
    return *this;
  }
  template <typename T>
  Desc& SetArray(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                 const std::vector<T>& values) {
    STRATASIM_CUDNN_CHECK(cudnnBackendSetAttribute(
        d_, name, type, static_cast<std::int64_t>(values.size()), values.data()));
    return *this;
  }
  Desc& Finalize() {
    STRATASIM_CUDNN_CHECK(cudnnBackendFinalize(d_));
    return *this;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

cudnnDataType_t CudnnType(DType dtype) {
  switch (dtype) {
    case DType::kFP16:
      return CUDNN_DATA_HALF;
    case DType::kBF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      throw Error("cuDNN's fused attention takes fp16 and bf16 only");
  }
}

}  // namespace

// The descriptors of one forward graph and its finalized execution plan (kept alive together,
// as the plan refers to them).
struct FlashAttention::Plan {
  std::vector<std::unique_ptr<Desc>> keep;
  Desc* plan = nullptr;
  std::int64_t workspace = 0;
};

struct FlashAttention::State {
  cudnnHandle_t handle = nullptr;
  DeviceBuffer workspace;
};

namespace {

// Builds the forward graph of `s` (see flash_attention.h) into `p`.
class ForwardGraph {
 public:
  ForwardGraph(FlashAttention::Plan& p, cudnnDataType_t io) : p_(p), io_(io) {}

  void Build(cudnnHandle_t handle, const FlashAttentionShape& s) {
    const std::int64_t b = s.batch, sq = s.s_q, skv = s.s_kv, d = s.d;
    Desc& q = Tensor(kQ, io_, {b, 1, sq, d}, {sq * d, sq * d, d, 1});
    // K^T as a view of K [s_kv][d]: dims [d][s_kv], strides swapped (no transpose in memory).
    Desc& kt = Tensor(kK, io_, {b, 1, d, skv}, {skv * d, skv * d, 1, d});
    Desc& v = Tensor(kV, io_, {b, 1, skv, d}, {skv * d, skv * d, d, 1});
    Desc& o = Tensor(kO, io_, {b, 1, sq, d}, {sq * d, sq * d, d, 1});
    Desc& stats = Tensor(kStats, CUDNN_DATA_FLOAT, {b, 1, sq, 1}, {sq, sq, 1, 1});
    Desc& scale = Scalar(kScale);
    const std::vector<std::int64_t> score_dims = {b, 1, sq, skv};
    const std::vector<std::int64_t> score_strides = {sq * skv, sq * skv, skv, 1};
    const std::vector<std::int64_t> row_dims = {b, 1, sq, 1};
    const std::vector<std::int64_t> row_strides = {sq, sq, 1, 1};
    auto scores = [&](cudnnDataType_t t = CUDNN_DATA_FLOAT) -> Desc& {
      return Tensor(next_virtual_++, t, score_dims, score_strides, true);
    };
    auto rows = [&]() -> Desc& {
      return Tensor(next_virtual_++, CUDNN_DATA_FLOAT, row_dims, row_strides, true);
    };

    Desc& s0 = scores();
    Matmul(q, kt, s0);
    Desc& s1 = scores();
    Pointwise(CUDNN_POINTWISE_MUL, s0, &scale, nullptr, s1);
    Desc* masked = &s1;
    if (s.causal) {
      // Keep S[i][j] where i >= j, else -inf: row and column indices, compared, selected.
      Desc& row = scores(CUDNN_DATA_INT32);
      Pointwise(CUDNN_POINTWISE_GEN_INDEX, s1, nullptr, nullptr, row, CUDNN_DATA_FLOAT, 2);
      Desc& col = scores(CUDNN_DATA_INT32);
      Pointwise(CUDNN_POINTWISE_GEN_INDEX, s1, nullptr, nullptr, col, CUDNN_DATA_FLOAT, 3);
      Desc& keep = scores(CUDNN_DATA_BOOLEAN);
      Pointwise(CUDNN_POINTWISE_CMP_GE, row, &col, nullptr, keep, CUDNN_DATA_BOOLEAN);
      Desc& neg_inf = Scalar(kNegInf);
      Desc& s2 = scores();
      Pointwise(CUDNN_POINTWISE_BINARY_SELECT, s1, &neg_inf, &keep, s2);
      masked = &s2;
    }
    // Softmax with its statistics, as the engine expects it spelled out.
    Desc& max = rows();
    Reduction(CUDNN_REDUCE_TENSOR_MAX, *masked, max);
    Desc& centred = scores();
    Pointwise(CUDNN_POINTWISE_SUB, *masked, &max, nullptr, centred);
    Desc& e = scores();
    Pointwise(CUDNN_POINTWISE_EXP, centred, nullptr, nullptr, e);
    Desc& sum = rows();
    Reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
    Desc& log_sum = rows();
    Pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, nullptr, log_sum);
    Pointwise(CUDNN_POINTWISE_ADD, max, &log_sum, nullptr, stats);
    // P feeds the second matmul in the I/O format, as the engine requires of its A operand.
    Desc& prob = scores(io_);
    Pointwise(CUDNN_POINTWISE_DIV, e, &sum, nullptr, prob);
    Matmul(prob, v, o);

    Desc& graph = Keep(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph.SetArray(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops_);
    // Deprecated since cuDNN 9.8 (the device is then taken from the current context), still
    // honoured: it ties the graph to this handle's device on every 9.x.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    graph.Set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle);
#pragma GCC diagnostic pop
    graph.Finalize();
    ChoosePlan(handle, graph);
  }

 private:
  Desc& Keep(cudnnBackendDescriptorType_t type) {
    p_.keep.push_back(std::make_unique<Desc>(type));
    return *p_.keep.back();
  }

  Desc& Tensor(std::int64_t uid, cudnnDataType_t type, const std::vector<std::int64_t>& dims,
               const std::vector<std::int64_t>& strides, bool is_virtual = false) {
    Desc& t = Keep(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const std::int64_t alignment = 16;
    t.Set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
        .Set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type)
        .SetArray(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims)
        .SetArray(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides)
        .Set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment)
        .Set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, is_virtual)
        .Finalize();
    return t;
  }

  // A float passed by value at launch (the variant pack points at host memory).
  Desc& Scalar(std::int64_t uid) {
    Desc& t = Keep(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const std::vector<std::int64_t> ones = {1, 1, 1, 1};
    const std::int64_t alignment = 16;
    const bool by_value = true;
    t.Set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
        .Set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
        .SetArray(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, ones)
        .SetArray(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, ones)
        .Set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment)
        .Set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, by_value)
        .Finalize();
    return t;
  }

  void Matmul(Desc& a, Desc& b, Desc& c) {
    Desc& m = Keep(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    m.Set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT).Finalize();
    Desc& op = Keep(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.Set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, a.get())
        .Set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b.get())
        .Set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, c.get())
        .Set(CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, m.get())
        .Finalize();
    ops_.push_back(op.get());
  }

  void Pointwise(cudnnPointwiseMode_t mode, Desc& x, Desc* b, Desc* t, Desc& y,
                 cudnnDataType_t precision = CUDNN_DATA_FLOAT, std::int64_t axis = -1) {
    Desc& pw = Keep(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.Set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
        .Set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, precision);
    if (axis >= 0) pw.Set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
    pw.Finalize();
    Desc& op = Keep(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.Set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, pw.get())
        .Set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x.get());
    if (b) op.Set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, b->get());
    if (t) op.Set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, t->get());
    op.Set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y.get()).Finalize();
    ops_.push_back(op.get());
  }

  void Reduction(cudnnReduceTensorOp_t mode, Desc& x, Desc& y) {
    Desc& r = Keep(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    r.Set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, mode)
        .Set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
        .Finalize();
    Desc& op = Keep(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.Set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, x.get())
        .Set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, y.get())
        .Set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, r.get())
        .Finalize();
    ops_.push_back(op.get());
  }

  // The first engine configuration cuDNN's heuristics offer that finalizes into a plan.
  void ChoosePlan(cudnnHandle_t handle, Desc& graph) {
    Desc& heur = Keep(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.Set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, graph.get())
        .Set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, CUDNN_HEUR_MODE_A)
        .Finalize();
    std::int64_t count = 0;
    STRATASIM_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                                   nullptr));
    if (count <= 0) throw Error("cuDNN's heuristics offer no engine for this graph");
    std::vector<cudnnBackendDescriptor_t> configs;
    for (std::int64_t i = 0; i < count; ++i) {
      configs.push_back(Keep(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR).get());
    }
    std::int64_t got = 0;
    STRATASIM_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                                   configs.data()));
    std::string refusals;
    for (std::int64_t i = 0; i < got; ++i) {
      auto plan = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      cudnnBackendDescriptor_t config = configs[static_cast<std::size_t>(i)];
      cudnnStatus_t st =
          cudnnBackendSetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      if (st == CUDNN_STATUS_SUCCESS) {
        st = cudnnBackendSetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                      CUDNN_TYPE_HANDLE, 1, &handle);
      }
#pragma GCC diagnostic pop
      if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(plan->get());
      if (st != CUDNN_STATUS_SUCCESS) {
        // An engine that cannot take this shape: try the next, keep its reason.
        if (refusals.size() < 400) refusals += std::string("; ") + cudnnGetErrorString(st);
        continue;
      }
      STRATASIM_CUDNN_CHECK(cudnnBackendGetAttribute(plan->get(),
                                                     CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                     CUDNN_TYPE_INT64, 1, nullptr, &p_.workspace));
      p_.keep.push_back(std::move(plan));
      p_.plan = p_.keep.back().get();
      return;
    }
    throw Error("none of cuDNN's " + std::to_string(got) +
                " engine configurations finalizes for this graph" + refusals);
  }

  FlashAttention::Plan& p_;
  cudnnDataType_t io_;
  std::int64_t next_virtual_ = kFirstVirtual;
  std::vector<cudnnBackendDescriptor_t> ops_;
};

}  // namespace

bool CudnnAvailable() { return true; }

std::string CudnnUnavailableReason() { return ""; }

FlashAttention::FlashAttention() : state_(std::make_unique<State>()) {
  STRATASIM_CUDNN_CHECK(cudnnCreate(&state_->handle));
}

FlashAttention::~FlashAttention() {
  plans_.clear();  // before the handle they were built on
  if (state_->handle) cudnnDestroy(state_->handle);
}

std::size_t FlashAttention::workspace_bytes() const { return state_->workspace.bytes(); }

FlashAttention::Plan& FlashAttention::PlanFor(DType dtype, const FlashAttentionShape& s) {
  const Key key{static_cast<int>(dtype), s.batch, s.s_q, s.s_kv, s.d, s.causal};
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  if (s.batch < 1 || s.s_q < 1 || s.s_kv < 1 || s.d < 1 || (s.causal && s.s_q != s.s_kv)) {
    throw Error(Describe(dtype, s) +
                ": dimensions must be >= 1, and a causal mask needs s_q == s_kv");
  }
  auto plan = std::make_unique<Plan>();
  try {
    ForwardGraph(*plan, CudnnType(dtype)).Build(state_->handle, s);
  } catch (const DeviceError& e) {
    throw DeviceError(Describe(dtype, s) + ": " + e.what(), e.out_of_memory());
  } catch (const Error& e) {
    throw Error(Describe(dtype, s) + ": " + e.what());
  }
  const std::size_t need = static_cast<std::size_t>(plan->workspace);
  if (need > state_->workspace.bytes()) {
    state_->workspace = DeviceBuffer();  // free before allocating the larger one
    state_->workspace = DeviceBuffer(need);
  }
  return *plans_.emplace(key, std::move(plan)).first->second;
}

void FlashAttention::PrepareForward(DType dtype, const FlashAttentionShape& s) {
  PlanFor(dtype, s);
}

void FlashAttention::Forward(DType dtype, const FlashAttentionShape& s, const void* q,
                             const void* k, const void* v, void* o, float* stats,
                             cudaStream_t stream) {
  Plan& plan = PlanFor(dtype, s);
  float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.d)));
  float neg_inf = -std::numeric_limits<float>::infinity();
  std::vector<std::int64_t> uids = {kQ, kK, kV, kO, kStats, kScale};
  std::vector<void*> ptrs = {
      const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o, stats, &scale};
  if (s.causal) {
    uids.push_back(kNegInf);
    ptrs.push_back(&neg_inf);
  }
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  void* workspace = state_->workspace.get();
  pack.SetArray(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids)
      .SetArray(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs)
      .Set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, workspace)
      .Finalize();
  STRATASIM_CUDNN_CHECK(cudnnSetStream(state_->handle, stream));
  STRATASIM_CUDNN_CHECK(cudnnBackendExecute(state_->handle, plan.plan->get(), pack.get()));
}

}  // namespace stratasim::kernels
