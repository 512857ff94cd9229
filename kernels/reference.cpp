#include "kernels/reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "core/error.h"

namespace stratasim::kernels::reference {

std::vector<float> Gemm(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                        int k, int batch, bool b_transposed) {
  const std::size_t sa = static_cast<std::size_t>(m) * k, sb = static_cast<std::size_t>(k) * n,
                    sc = static_cast<std::size_t>(m) * n;
  if (a.size() != sa * batch || b.size() != sb * batch) {
    throw Error("reference::Gemm: A has " + std::to_string(a.size()) + " and B " +
                std::to_string(b.size()) +
                " values; batch * m * k = " + std::to_string(sa * batch) +
                " and batch * k * n = " + std::to_string(sb * batch) + " expected");
  }
  std::vector<float> c(sc * batch);
  for (int p = 0; p < batch; ++p) {
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int l = 0; l < k; ++l) {
          const std::size_t bi = b_transposed ? static_cast<std::size_t>(j) * k + l
                                              : static_cast<std::size_t>(l) * n + j;
          acc +=
              static_cast<double>(a[p * sa + static_cast<std::size_t>(i) * k + l]) * b[p * sb + bi];
        }
        c[p * sc + static_cast<std::size_t>(i) * n + j] = static_cast<float>(acc);
      }
    }
  }
  return c;
}

void ScaleAdd(float alpha, const std::vector<float>& x, std::vector<float>& y) {
  if (x.size() != y.size()) throw Error("reference::ScaleAdd: x and y differ in size");
  for (std::size_t i = 0; i < x.size(); ++i) {
    y[i] = static_cast<float>(static_cast<double>(alpha) * x[i] + y[i]);
  }
}

std::vector<float> Gelu(const std::vector<float>& x) {
  const double c = std::sqrt(2.0 / M_PI);
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v))));
  }
  return y;
}

std::vector<float> Softmax(const std::vector<float>& x, int cols, float scale) {
  if (cols <= 0 || x.size() % cols != 0) {
    throw Error("reference::Softmax: " + std::to_string(x.size()) +
                " values are not whole rows of " + std::to_string(cols));
  }
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < x.size() / cols; ++r) {
    const float* row = &x[r * cols];
    double mx = -INFINITY;
    for (int j = 0; j < cols; ++j) mx = std::max(mx, static_cast<double>(scale) * row[j]);
    double sum = 0;
    for (int j = 0; j < cols; ++j) sum += std::exp(static_cast<double>(scale) * row[j] - mx);
    for (int j = 0; j < cols; ++j) {
      y[r * cols + j] =
          static_cast<float>(std::exp(static_cast<double>(scale) * row[j] - mx) / sum);
    }
  }
  return y;
}

std::vector<float> LayerNorm(const std::vector<float>& x, const std::vector<float>& gamma,
                             const std::vector<float>& beta, float eps) {
  const std::size_t cols = gamma.size();
  if (cols == 0 || beta.size() != cols || x.size() % cols != 0) {
    throw Error("reference::LayerNorm: gamma, beta and rows of x must have one length");
  }
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < x.size() / cols; ++r) {
    const float* row = &x[r * cols];
    double mean = 0;
    for (std::size_t j = 0; j < cols; ++j) mean += row[j];
    mean /= cols;
    double var = 0;
    for (std::size_t j = 0; j < cols; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= cols;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (std::size_t j = 0; j < cols; ++j) {
      y[r * cols + j] = static_cast<float>((row[j] - mean) * inv * gamma[j] + beta[j]);
    }
  }
  return y;
}

namespace {

void CheckAttention(const AttentionDims& dims, const std::vector<float>& q,
                    const std::vector<float>& k, const std::vector<float>& v) {
  if (dims.batch < 1 || dims.s_q < 1 || dims.s_kv < 1 || dims.d < 1) {
    throw Error("reference::Attention: batch, s_q, s_kv and d must be >= 1");
  }
  if (dims.causal && dims.s_q != dims.s_kv) {
    throw Error("reference::Attention: a causal mask needs s_q == s_kv");
  }
  const std::size_t nq = static_cast<std::size_t>(dims.batch) * dims.s_q * dims.d;
  const std::size_t nkv = static_cast<std::size_t>(dims.batch) * dims.s_kv * dims.d;
  if (q.size() != nq || k.size() != nkv || v.size() != nkv) {
    throw Error("reference::Attention: Q has " + std::to_string(q.size()) + ", K " +
                std::to_string(k.size()) + " and V " + std::to_string(v.size()) +
                " values; batch * s_q * d = " + std::to_string(nq) +
                " and batch * s_kv * d = " + std::to_string(nkv) + " expected");
  }
}

// The probabilities P [s_q][s_kv] of batch entry `b` and each row's logsumexp.
void Probabilities(const AttentionDims& dims, const std::vector<float>& q,
                   const std::vector<float>& k, int b, std::vector<double>& p,
                   std::vector<double>& lse) {
  const int sq = dims.s_q, skv = dims.s_kv, d = dims.d;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const float* qb = &q[static_cast<std::size_t>(b) * sq * d];
  const float* kb = &k[static_cast<std::size_t>(b) * skv * d];
  p.assign(static_cast<std::size_t>(sq) * skv, 0.0);
  lse.assign(sq, 0.0);
  for (int i = 0; i < sq; ++i) {
    double* row = &p[static_cast<std::size_t>(i) * skv];
    const int keys = dims.causal ? i + 1 : skv;  // masked scores stay at probability 0
    double mx = -INFINITY;
    for (int j = 0; j < keys; ++j) {
      double acc = 0;
      for (int l = 0; l < d; ++l) {
        acc += static_cast<double>(qb[static_cast<std::size_t>(i) * d + l]) *
               kb[static_cast<std::size_t>(j) * d + l];
      }
      row[j] = acc * scale;
      mx = std::max(mx, row[j]);
    }
    double sum = 0;
    for (int j = 0; j < keys; ++j) sum += std::exp(row[j] - mx);
    for (int j = 0; j < keys; ++j) row[j] = std::exp(row[j] - mx) / sum;
    lse[i] = mx + std::log(sum);
  }
}

}  // namespace

void AttentionForward(const AttentionDims& dims, const std::vector<float>& q,
                      const std::vector<float>& k, const std::vector<float>& v,
                      std::vector<float>& o, std::vector<float>& lse) {
  CheckAttention(dims, q, k, v);
  const int sq = dims.s_q, skv = dims.s_kv, d = dims.d;
  o.assign(static_cast<std::size_t>(dims.batch) * sq * d, 0.0f);
  lse.assign(static_cast<std::size_t>(dims.batch) * sq, 0.0f);
  std::vector<double> p, row_lse;
  for (int b = 0; b < dims.batch; ++b) {
    Probabilities(dims, q, k, b, p, row_lse);
    const float* vb = &v[static_cast<std::size_t>(b) * skv * d];
    for (int i = 0; i < sq; ++i) {
      for (int l = 0; l < d; ++l) {
        double acc = 0;
        for (int j = 0; j < skv; ++j) {
          acc += p[static_cast<std::size_t>(i) * skv + j] * vb[static_cast<std::size_t>(j) * d + l];
        }
        o[(static_cast<std::size_t>(b) * sq + i) * d + l] = static_cast<float>(acc);
      }
      lse[static_cast<std::size_t>(b) * sq + i] = static_cast<float>(row_lse[i]);
    }
  }
}

void AttentionBackward(const AttentionDims& dims, const std::vector<float>& q,
                       const std::vector<float>& k, const std::vector<float>& v,
                       const std::vector<float>& dout, std::vector<float>& dq,
                       std::vector<float>& dk, std::vector<float>& dv) {
  CheckAttention(dims, q, k, v);
  if (dout.size() != q.size()) throw Error("reference::AttentionBackward: dO and Q differ in size");
  const int sq = dims.s_q, skv = dims.s_kv, d = dims.d;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  dq.assign(q.size(), 0.0f);
  dk.assign(k.size(), 0.0f);
  dv.assign(v.size(), 0.0f);
  std::vector<double> p, row_lse, ds(static_cast<std::size_t>(sq) * skv);
  for (int b = 0; b < dims.batch; ++b) {
    Probabilities(dims, q, k, b, p, row_lse);
    const std::size_t oq = static_cast<std::size_t>(b) * sq * d;
    const std::size_t okv = static_cast<std::size_t>(b) * skv * d;
    // dS from dP = dO V^T and the softmax's Jacobian, row by row.
    for (int i = 0; i < sq; ++i) {
      double dot = 0;
      for (int j = 0; j < skv; ++j) {
        double dp = 0;
        for (int l = 0; l < d; ++l) {
          dp += static_cast<double>(dout[oq + static_cast<std::size_t>(i) * d + l]) *
                v[okv + static_cast<std::size_t>(j) * d + l];
        }
        ds[static_cast<std::size_t>(i) * skv + j] = dp;
        dot += p[static_cast<std::size_t>(i) * skv + j] * dp;
      }
      for (int j = 0; j < skv; ++j) {
        const std::size_t ij = static_cast<std::size_t>(i) * skv + j;
        ds[ij] = p[ij] * (ds[ij] - dot);
      }
    }
    for (int i = 0; i < sq; ++i) {
      for (int l = 0; l < d; ++l) {
        double acc = 0;
        for (int j = 0; j < skv; ++j) {
          acc += ds[static_cast<std::size_t>(i) * skv + j] *
                 k[okv + static_cast<std::size_t>(j) * d + l];
        }
        dq[oq + static_cast<std::size_t>(i) * d + l] = static_cast<float>(acc * scale);
      }
    }
    for (int j = 0; j < skv; ++j) {
      for (int l = 0; l < d; ++l) {
        double gk = 0, gv = 0;
        for (int i = 0; i < sq; ++i) {
          const std::size_t ij = static_cast<std::size_t>(i) * skv + j;
          gk += ds[ij] * q[oq + static_cast<std::size_t>(i) * d + l];
          gv += p[ij] * dout[oq + static_cast<std::size_t>(i) * d + l];
        }
        dk[okv + static_cast<std::size_t>(j) * d + l] = static_cast<float>(gk * scale);
        dv[okv + static_cast<std::size_t>(j) * d + l] = static_cast<float>(gv);
      }
    }
  }
}

void AdamStep(const AdamConfig& c, std::vector<float>& params, const std::vector<float>& grads,
              std::vector<float>& m, std::vector<float>& v) {
  if (grads.size() != params.size() || m.size() != params.size() || v.size() != params.size()) {
    throw Error("reference::AdamStep: params, grads, m and v differ in size");
  }
  if (c.step < 1) throw Error("reference::AdamStep: step must be >= 1");
  const double bc1 = 1.0 - std::pow(static_cast<double>(c.beta1), c.step);
  const double bc2 = 1.0 - std::pow(static_cast<double>(c.beta2), c.step);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const double g = grads[i];
    const double mi = c.beta1 * static_cast<double>(m[i]) + (1.0 - c.beta1) * g;
    const double vi = c.beta2 * static_cast<double>(v[i]) + (1.0 - c.beta2) * g * g;
    m[i] = static_cast<float>(mi);
    v[i] = static_cast<float>(vi);
    double p = params[i];
    p -= c.lr * c.weight_decay * p;
    p -= c.lr * (mi / bc1) / (std::sqrt(vi / bc2) + c.eps);
    params[i] = static_cast<float>(p);
  }
}

void QuantizeInt8(const std::vector<float>& x, int block, std::vector<std::int8_t>& q,
                  std::vector<float>& scales) {
  if (block <= 0) throw Error("reference::QuantizeInt8: block must be > 0");
  const std::size_t blocks = (x.size() + block - 1) / block;
  q.assign(x.size(), 0);
  scales.assign(blocks, 1.0f);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t lo = b * block, hi = std::min(x.size(), lo + block);
    float absmax = 0;
    for (std::size_t i = lo; i < hi; ++i) absmax = std::max(absmax, std::fabs(x[i]));
    const float scale = absmax > 0 ? absmax / 127.0f : 1.0f;
    scales[b] = scale;
    for (std::size_t i = lo; i < hi; ++i) {
      const float r = std::nearbyint(x[i] / scale);  // default rounding: to nearest even
      q[i] = static_cast<std::int8_t>(std::clamp(r, -127.0f, 127.0f));
    }
  }
}

std::vector<float> DequantizeInt8(const std::vector<std::int8_t>& q,
                                  const std::vector<float>& scales, int block) {
  if (block <= 0 || scales.size() != (q.size() + block - 1) / block) {
    throw Error("reference::DequantizeInt8: need one scale per block of " + std::to_string(block) +
                " values");
  }
  std::vector<float> y(q.size());
  for (std::size_t i = 0; i < q.size(); ++i) y[i] = q[i] * scales[i / block];
  return y;
}

}  // namespace stratasim::kernels::reference
