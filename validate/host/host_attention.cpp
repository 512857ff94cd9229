#include "validate/host/host_attention.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace stratasim::validate::host {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Mat = Eigen::Map<RowMat>;
using ConstMat = Eigen::Map<const RowMat>;
template <typename T>
using StoredMat = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <typename T>
using ConstStoredMat =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Carves consecutive float arrays out of the caller's scratch.
class Scratch {
 public:
  explicit Scratch(float* base) : next_(base) {}
  float* Take(long long n) {
    float* p = next_;
    next_ += n;
    return p;
  }

 private:
  float* next_;
};

// Widens a stored [rows][d] matrix to FP32 in `dst`: the tiles' products then run in float
// whatever the format, as the tensor cores of a GPU kernel accumulate.
template <typename T>
Mat Widen(const T* src, long long rows, long long d, float* dst) {
  Mat out(dst, rows, d);
  out = ConstStoredMat<T>(src, rows, d).template cast<float>();
  return out;
}

// What the forward and the backward of one batch entry both start from: the softmax scale and
// Q, K, V widened to FP32 in the entry's scratch.
template <typename T>
struct WidenedInputs {
  WidenedInputs(const FusedAttentionDims& dims, const T* q, const T* k, const T* v, Scratch& pool)
      : scale(static_cast<float>(1.0 / std::sqrt(static_cast<double>(dims.d)))),
        qf(Widen(q, dims.s_q, dims.d, pool.Take(dims.s_q * dims.d))),
        kf(Widen(k, dims.s_kv, dims.d, pool.Take(dims.s_kv * dims.d))),
        vf(Widen(v, dims.s_kv, dims.d, pool.Take(dims.s_kv * dims.d))) {}
  const float scale;
  const Mat qf, kf, vf;
};

// Sets the scores of tile (r0.., c0..) with key index > query index to -inf (causal mask);
// only tiles that cross the diagonal have any.
void MaskTile(Mat& s, long long r0, long long c0, float value) {
  for (Eigen::Index r = 0; r < s.rows(); ++r) {
    const long long first_masked = r0 + r + 1 - c0;  // first column past the diagonal
    for (Eigen::Index c = std::max(0LL, first_masked); c < s.cols(); ++c) s(r, c) = value;
  }
}

template <typename T>
void ForwardEntry(const FusedAttentionDims& dims, const T* q, const T* k, const T* v, T* o,
                  float* lse, float* scratch) {
  const long long sq = dims.s_q, skv = dims.s_kv, d = dims.d;
  const long long bq = dims.block_q, bkv = dims.block_kv;
  Scratch pool(scratch);
  const WidenedInputs<T> in(dims, q, k, v, pool);
  const float scale = in.scale;
  const Mat &qf = in.qf, &kf = in.kf, &vf = in.vf;
  float* s_buf = pool.Take(bq * bkv);
  float* acc_buf = pool.Take(bq * d);
  float* row_max = pool.Take(bq);
  float* row_sum = pool.Take(bq);
  for (long long r0 = 0; r0 < sq; r0 += bq) {
    const long long rows = std::min(bq, sq - r0);
    Mat acc(acc_buf, rows, d);
    acc.setZero();
    std::fill(row_max, row_max + rows, kNegInf);
    std::fill(row_sum, row_sum + rows, 0.0f);
    // Causal: keys past this tile's last query are masked for every row, so their tiles are
    // never visited.
    const long long kv_end = dims.causal ? std::min(skv, r0 + rows) : skv;
    for (long long c0 = 0; c0 < kv_end; c0 += bkv) {
      const long long cols = std::min(bkv, kv_end - c0);
      Mat s(s_buf, rows, cols);
      s.noalias() = qf.middleRows(r0, rows) * kf.middleRows(c0, cols).transpose();
      s *= scale;
      if (dims.causal && c0 + cols - 1 > r0) MaskTile(s, r0, c0, kNegInf);
      // Online softmax: rescale what the earlier tiles summed to the new row maximum.
      for (Eigen::Index r = 0; r < rows; ++r) {
        const float m_new = std::max(row_max[r], s.row(r).maxCoeff());
        const float alpha = std::exp(row_max[r] - m_new);  // 0 on the first tile
        s.row(r) = (s.row(r).array() - m_new).exp().matrix();
        row_sum[r] = alpha * row_sum[r] + s.row(r).sum();
        acc.row(r) *= alpha;
        row_max[r] = m_new;
      }
      acc.noalias() += s * vf.middleRows(c0, cols);
    }
    StoredMat<T> out(o + r0 * d, rows, d);
    for (Eigen::Index r = 0; r < rows; ++r) {
      out.row(r) = (acc.row(r) / row_sum[r]).template cast<T>();
      lse[r0 + r] = row_max[r] + std::log(row_sum[r]);
    }
  }
}

template <typename T>
void BackwardEntry(const FusedAttentionDims& dims, const T* q, const T* k, const T* v, const T* o,
                   const T* dout, const float* lse, T* dq, T* dk, T* dv, float* scratch) {
  const long long sq = dims.s_q, skv = dims.s_kv, d = dims.d;
  const long long bq = dims.block_q, bkv = dims.block_kv;
  Scratch pool(scratch);
  const WidenedInputs<T> in(dims, q, k, v, pool);
  const float scale = in.scale;
  const Mat &qf = in.qf, &kf = in.kf, &vf = in.vf;
  const Mat dof = Widen(dout, sq, d, pool.Take(sq * d));
  Mat dq_acc(pool.Take(sq * d), sq, d);
  dq_acc.setZero();
  // D_i = rowsum(dO_i * O_i) = rowsum(P_i * dP_i): the softmax backward's correction, from
  // O(s·d) data instead of the s² probabilities (Dao 2023, Algorithm 2, line 4).
  Eigen::Map<Eigen::VectorXf> delta(pool.Take(sq), sq);
  delta = (dof.array() * ConstStoredMat<T>(o, sq, d).template cast<float>().array())
              .rowwise()
              .sum()
              .matrix();
  float* dk_buf = pool.Take(bkv * d);
  float* dv_buf = pool.Take(bkv * d);
  float* p_buf = pool.Take(bq * bkv);
  float* dp_buf = pool.Take(bq * bkv);
  // Key tiles outside: a key tile's dK, dV accumulate in cache over the query tiles, and dQ
  // accumulates in FP32 over the key tiles.
  for (long long c0 = 0; c0 < skv; c0 += bkv) {
    const long long cols = std::min(bkv, skv - c0);
    const auto kj = kf.middleRows(c0, cols);
    const auto vj = vf.middleRows(c0, cols);
    Mat dk_acc(dk_buf, cols, d), dv_acc(dv_buf, cols, d);
    dk_acc.setZero();
    dv_acc.setZero();
    // Causal: queries before this tile's first key see none of it.
    const long long r_begin = dims.causal ? c0 / bq * bq : 0;
    for (long long r0 = r_begin; r0 < sq; r0 += bq) {
      const long long rows = std::min(bq, sq - r0);
      const auto qi = qf.middleRows(r0, rows);
      const auto doi = dof.middleRows(r0, rows);
      Mat p(p_buf, rows, cols), dp(dp_buf, rows, cols);
      p.noalias() = qi * kj.transpose();
      // P recomputed from the forward's logsumexp: exp(scale * S - lse), already normalised.
      for (Eigen::Index r = 0; r < rows; ++r) {
        p.row(r) = (p.row(r).array() * scale - lse[r0 + r]).exp().matrix();
      }
      if (dims.causal && c0 + cols - 1 > r0) MaskTile(p, r0, c0, 0.0f);
      dv_acc.noalias() += p.transpose() * doi;
      dp.noalias() = doi * vj.transpose();
      // dS = P * (dP - D), the softmax's Jacobian applied row by row.
      for (Eigen::Index r = 0; r < rows; ++r) {
        dp.row(r) = (p.row(r).array() * (dp.row(r).array() - delta[r0 + r])).matrix();
      }
      dq_acc.middleRows(r0, rows).noalias() += scale * (dp * kj);
      dk_acc.noalias() += scale * (dp.transpose() * qi);
    }
    StoredMat<T>(dk + c0 * d, cols, d) = dk_acc.template cast<T>();
    StoredMat<T>(dv + c0 * d, cols, d) = dv_acc.template cast<T>();
  }
  StoredMat<T>(dq, sq, d) = dq_acc.template cast<T>();
}

template <typename T>
void Forward(const FusedAttentionDims& dims, const void* q, const void* k, const void* v, void* o,
             float* lse, float* scratch) {
  const long long q_size = dims.s_q * dims.d, kv_size = dims.s_kv * dims.d;
  for (long long b = 0; b < dims.batch; ++b) {
    ForwardEntry(dims, static_cast<const T*>(q) + b * q_size,
                 static_cast<const T*>(k) + b * kv_size, static_cast<const T*>(v) + b * kv_size,
                 static_cast<T*>(o) + b * q_size, lse + b * dims.s_q, scratch);
  }
}

template <typename T>
void Backward(const FusedAttentionDims& dims, const void* q, const void* k, const void* v,
              const void* o, const void* dout, const float* lse, void* dq, void* dk, void* dv,
              float* scratch) {
  const long long q_size = dims.s_q * dims.d, kv_size = dims.s_kv * dims.d;
  for (long long b = 0; b < dims.batch; ++b) {
    BackwardEntry(dims, static_cast<const T*>(q) + b * q_size,
                  static_cast<const T*>(k) + b * kv_size, static_cast<const T*>(v) + b * kv_size,
                  static_cast<const T*>(o) + b * q_size, static_cast<const T*>(dout) + b * q_size,
                  lse + b * dims.s_q, static_cast<T*>(dq) + b * q_size,
                  static_cast<T*>(dk) + b * kv_size, static_cast<T*>(dv) + b * kv_size, scratch);
  }
}

}  // namespace

void CheckFusedAttention(DType dtype, const FusedAttentionDims& dims) {
  if (dtype != DType::kFP32 && dtype != DType::kTF32 && dtype != DType::kFP16 &&
      dtype != DType::kBF16) {
    throw Error("fused attention: no CPU kernel for dtype " + std::string(ToString(dtype)) +
                " (it runs fp32, tf32, fp16 and bf16)");
  }
  if (dims.batch < 1 || dims.s_q < 1 || dims.s_kv < 1 || dims.d < 1 || dims.block_q < 1 ||
      dims.block_kv < 1) {
    throw Error("fused attention: batch " + std::to_string(dims.batch) + ", s_q " +
                std::to_string(dims.s_q) + ", s_kv " + std::to_string(dims.s_kv) + ", d " +
                std::to_string(dims.d) + " and tiles " + std::to_string(dims.block_q) + " x " +
                std::to_string(dims.block_kv) + " must all be >= 1");
  }
  if (dims.causal && dims.s_q != dims.s_kv) {
    throw Error("fused attention: a causal mask needs as many queries as keys (s_q " +
                std::to_string(dims.s_q) + ", s_kv " + std::to_string(dims.s_kv) + ")");
  }
}

double FusedAttentionScratchFloats(const FusedAttentionDims& dims, bool backward) {
  const double sq = static_cast<double>(dims.s_q), skv = static_cast<double>(dims.s_kv),
               d = static_cast<double>(dims.d), bq = static_cast<double>(dims.block_q),
               bkv = static_cast<double>(dims.block_kv);
  // Widened Q, K, V (and dO), the FP32 dQ and D, and the tiles (see Forward/BackwardEntry).
  return backward ? 3 * sq * d + 2 * skv * d + sq + 2 * bkv * d + 2 * bq * bkv
                  : sq * d + 2 * skv * d + bq * bkv + bq * d + 2 * bq;
}

void FusedAttentionForward(DType dtype, const FusedAttentionDims& dims, const void* q,
                           const void* k, const void* v, void* o, float* lse, float* scratch) {
  CheckFusedAttention(dtype, dims);
  switch (dtype) {
    case DType::kFP16:
      return Forward<Eigen::half>(dims, q, k, v, o, lse, scratch);
    case DType::kBF16:
      return Forward<Eigen::bfloat16>(dims, q, k, v, o, lse, scratch);
    default:  // fp32, tf32
      return Forward<float>(dims, q, k, v, o, lse, scratch);
  }
}

void FusedAttentionBackward(DType dtype, const FusedAttentionDims& dims, const void* q,
                            const void* k, const void* v, const void* o, const void* dout,
                            const float* lse, void* dq, void* dk, void* dv, float* scratch) {
  CheckFusedAttention(dtype, dims);
  switch (dtype) {
    case DType::kFP16:
      return Backward<Eigen::half>(dims, q, k, v, o, dout, lse, dq, dk, dv, scratch);
    case DType::kBF16:
      return Backward<Eigen::bfloat16>(dims, q, k, v, o, dout, lse, dq, dk, dv, scratch);
    default:
      return Backward<float>(dims, q, k, v, o, dout, lse, dq, dk, dv, scratch);
  }
}

}  // namespace stratasim::validate::host
