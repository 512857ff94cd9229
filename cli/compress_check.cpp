#include "cli/compress_check.h"

#include <algorithm>
#include <memory>

#include "core/error.h"

namespace stratasim {

CompressorCheck CheckCompressor(const CompressorToCheck& c, const kernels::WorkerGradients& g,
                                const ExactSum& exact, int trials) {
  CompressorCheck out;
  out.what = c;
  const double elements = static_cast<double>(g.shape.Elements());
  const double workers = static_cast<double>(g.workers.size());
  BiasMeter bias(exact);
  std::vector<double> encode_s, decode_s;
  try {
    for (int t = 0; t < trials; ++t) {
      CompressionSpec spec = c.spec;
      spec.seed = c.spec.seed + static_cast<std::uint64_t>(t);
      const std::unique_ptr<kernels::Compressor> compressor = kernels::MakeCompressor(spec);
      const kernels::CompressionRun run = compressor->Run(g, t);
      const TrialMetrics m = MeasureTrial(exact, run.sum);
      bias.Add(run.sum);
      out.relative_error += m.relative_error / trials;
      out.relative_error_max = std::max(out.relative_error_max, m.relative_error);
      out.decoded_rows += static_cast<double>(m.decoded_rows) / trials;
      out.recovered_row_fraction +=
          static_cast<double>(m.recovered_rows) / static_cast<double>(exact.nonzero_rows) / trials;
      out.false_rows += static_cast<double>(m.false_rows) / trials;
      if (run.payloads.empty()) throw Error("the compressor reported no payload");
      double per_worker = 0, total = 0;
      for (const WirePayload& p : run.payloads) {
        per_worker += p.bytes_per_worker;
        total += p.bytes;
      }
      if (t == 0 || per_worker > out.bytes_per_worker) {
        out.payloads = run.payloads;
        out.bytes_per_worker = per_worker;
        out.bytes_total = total;
      }
      encode_s.push_back(run.encode_seconds);
      decode_s.push_back(run.decode_seconds);
    }
  } catch (const Error& e) {
    CompressorCheck failed;
    failed.what = c;
    failed.error = e.what();
    return failed;
  }
  out.ok = true;
  out.bias = bias.Bias();
  out.ratio_to_dense = out.bytes_per_worker / (elements * 4);  // the dense FP32 all-reduce
  out.encode_s = Median(encode_s);
  out.decode_s = Median(decode_s);
  out.encode_s_per_element = out.encode_s / workers / elements;
  out.decode_s_per_element = out.decode_s / elements;
  return out;
}

RowCounts CountRows(const kernels::WorkerGradients& g) {
  RowCounts rc;
  std::vector<char> any(static_cast<size_t>(g.shape.rows), 0);
  for (const std::vector<float>& w : g.workers) {
    long long rows = 0;
    for (long long r = 0; r < g.shape.rows; ++r) {
      for (long long c = 0; c < g.shape.cols; ++c) {
        if (w[r * g.shape.cols + c] != 0.0f) {
          ++rows;
          any[r] = 1;
          break;
        }
      }
    }
    rc.per_worker.push_back(rows);
  }
  rc.union_rows = std::count(any.begin(), any.end(), 1);
  return rc;
}

}  // namespace stratasim
