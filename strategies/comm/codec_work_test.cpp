#include "strategies/comm/codec_work.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/calibration.h"
#include "core/compute_model.h"

namespace stratasim {
namespace {

// A 100,000 x 64 table in BF16, 1,000 non-zero rows here, 1,200 at most, 3,000 in the union.
CodecInput Table(int workers) {
  return CodecInput{{100000, 64}, 2, workers, 1000, RowSparsity{1200, 3000}};
}

CompressionSpec Spec(CompressionMethod m) {
  CompressionSpec c;
  c.method = m;
  return c;
}

TEST(CodecWork, S2ReducerEncodeFollowsTheNonZerosNotTheWorkers) {
  CompressionSpec c = Spec(CompressionMethod::kS2Reducer);
  c.sketch_rows = 3;
  c.sketch_columns = 5000;
  // Zero 3 x 5,000 counters, read 1,000 x 64 values and update 3 counters each, write the
  // 100,000-bit bitmap.
  const double encode = 4.0 * 3 * 5000 + 1000 * 64 * (2 + 8 * 3) + 100000 / 8.0;
  EXPECT_DOUBLE_EQ(EncodeWork(c, Table(2)).bytes, encode);
  EXPECT_DOUBLE_EQ(EncodeWork(c, Table(16)).bytes, encode);
  // Decode: the bitmap, then 3 counters read and one value written per union element.
  EXPECT_DOUBLE_EQ(DecodeWork(c, Table(16)).bytes, 100000 / 8.0 + 3000 * 64 * (4 * 3 + 2));
}

TEST(CodecWork, GatheredPayloadsCostTheDecodeOnePassPerWorker) {
  // COO's decode scatter-adds every worker's padded block.
  const CompressionSpec coo = Spec(CompressionMethod::kCoo);
  const double block = 1200.0 * (64 * 2 + 4);
  EXPECT_DOUBLE_EQ(DecodeWork(coo, Table(4)).bytes, 4 * block + 2 * 4 * 1200.0 * 64 * 2);
  // CASQ's reads every worker's codes and bucket means: linear in the workers.
  const CompressionSpec casq = Spec(CompressionMethod::kCasq);
  const double n = 100000.0 * 64;
  EXPECT_DOUBLE_EQ(DecodeWork(casq, Table(8)).bytes - DecodeWork(casq, Table(4)).bytes,
                   4 * n * (2 / 8.0 + 4));
  // Its encode: 2^q distances (2 FLOPs each) per element.
  EXPECT_DOUBLE_EQ(EncodeWork(casq, Table(4)).flops, 2 * 4 * n);
  // Dense has no codec.
  EXPECT_DOUBLE_EQ(EncodeWork(Spec(CompressionMethod::kDense), Table(4)).bytes, 0);
}

TEST(CodecWork, CalibratedBytesTakeExactlyTheMeasuredTimeInTheExecutorsCostModel) {
  const GpuSpec& gpu = *FindBuiltinGpu("H100-SXM5");
  SimulationSpec sim;
  Task t;
  t.op = OpKind::kElementwise;
  t.dtype = DType::kFP32;
  for (double seconds : {1e-3, 2.5e-5}) {
    t.bytes = CalibratedCodecBytes(seconds, gpu, sim);
    EXPECT_NEAR(ComputeTaskSeconds(t, gpu, sim), seconds, 1e-15) << seconds;
  }
  // With the calibration's own memory efficiency and launch for the GPU kind.
  sim.calibration = LoadCalibrationText(R"(format: stratasim-calibration
version: 1
gpus:
  - {gpu: H100-SXM5, memory_efficiency: 0.5, kernel_launch: "9us"}
)",
                                        "c.yaml");
  t.bytes = CalibratedCodecBytes(1e-3, gpu, sim);
  EXPECT_NEAR(ComputeTaskSeconds(t, gpu, sim), 1e-3, 1e-15);
  EXPECT_DOUBLE_EQ(t.bytes, (1e-3 - 9e-6) * gpu.memory_bandwidth_Bps * 0.5);
  // Under one launch: no bytes, the launch alone.
  t.bytes = CalibratedCodecBytes(1e-6, gpu, sim);
  EXPECT_EQ(t.bytes, 0);
  EXPECT_DOUBLE_EQ(ComputeTaskSeconds(t, gpu, sim), 9e-6);
}

}  // namespace
}  // namespace stratasim
