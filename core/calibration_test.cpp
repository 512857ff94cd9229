#include "core/calibration.h"

#include <gtest/gtest.h>

#include <string>

#include "core/cluster.h"
#include "core/error.h"

namespace stratasim {
namespace {

// Line numbers in the tests below refer to this text.
const char kGood[] = R"(format: stratasim-calibration
version: 1
source: "test bench"
gpus:
  - gpu: H100-SXM5
    memory_efficiency: 0.9
    kernel_launch: "6us"
    compute:
      gemm:
        - {max_flops: 1e9, efficiency: 0.2}
        - {max_flops: 1e11, efficiency: 0.5}
        - {efficiency: 0.8}
      attention: [{efficiency: 0.4}]
collectives:
  - {kind: all_reduce, group_size: 8, latency: "20us", bandwidth: "100GB/s"}
  - {kind: all_reduce, gpu: H100-SXM5, group_size: 8, latency: "10us", bandwidth: "200GB/s"}
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "\"" << from << "\" not in the text";
    return text;
  }
  return text.replace(at, from.size(), to);
}

void ExpectError(const std::string& text, int line, const std::string& key,
                 const std::string& rule) {
  try {
    LoadCalibrationText(text, "c.yaml");
    ADD_FAILURE() << "no error for " << key;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "c.yaml");
    EXPECT_EQ(e.where().line, line) << e.what();
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_EQ(e.rule(), rule) << e.what();
  }
}

TEST(Calibration, ReadsEfficiencyBandsAndCollectives) {
  const Calibration c = LoadCalibrationText(kGood, "c.yaml");
  EXPECT_EQ(c.source, "test bench");
  const GpuCalibration* h100 = c.FindGpu("H100-SXM5");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(c.FindGpu("A100-SXM4-80GB"), nullptr);
  EXPECT_DOUBLE_EQ(*h100->memory_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(*h100->kernel_launch_s, 6e-6);
  EXPECT_DOUBLE_EQ(*h100->ComputeEfficiency(OpKind::kGemm, 5e8), 0.2);
  EXPECT_DOUBLE_EQ(*h100->ComputeEfficiency(OpKind::kGemm, 1e9), 0.2);  // bands are inclusive
  EXPECT_DOUBLE_EQ(*h100->ComputeEfficiency(OpKind::kGemm, 2e9), 0.5);
  EXPECT_DOUBLE_EQ(*h100->ComputeEfficiency(OpKind::kGemm, 1e15), 0.8);
  EXPECT_DOUBLE_EQ(*h100->ComputeEfficiency(OpKind::kAttention, 1), 0.4);
  EXPECT_FALSE(h100->ComputeEfficiency(OpKind::kElementwise, 1).has_value());

  // A GPU-specific entry wins over one for any GPU; other GPUs get the generic one.
  const CollectiveCalibration* own = c.FindCollective(CollectiveKind::kAllReduce, 8, "H100-SXM5");
  ASSERT_NE(own, nullptr);
  EXPECT_DOUBLE_EQ(own->Seconds(200e9), 10e-6 + 1.0);
  const CollectiveCalibration* any = c.FindCollective(CollectiveKind::kAllReduce, 8, "V100-SXM2");
  ASSERT_NE(any, nullptr);
  EXPECT_DOUBLE_EQ(any->latency_s, 20e-6);
  EXPECT_EQ(c.FindCollective(CollectiveKind::kAllReduce, 4, "H100-SXM5"), nullptr);
  EXPECT_EQ(c.FindCollective(CollectiveKind::kAllGather, 8, "H100-SXM5"), nullptr);
}

TEST(Calibration, ErrorsNameLineKeyAndRule) {
  ExpectError(Replace(kGood, "stratasim-calibration", "other"), 1, "format",
              "must be \"stratasim-calibration\"");
  ExpectError(Replace(kGood, "version: 1", "version: 2"), 2, "version",
              "must be an integer in [1, 1]");
  ExpectError(Replace(kGood, "source:", "sorce:"), 3, "sorce",
              "unknown key (known: format, version, source, gpus, collectives, links, fabric)");
  ExpectError(
      Replace(kGood, "      gemm:", "      gem:"), 9, "gpus[0].compute.gem",
      "unknown key (known: gemm, attention, fused_attention, elementwise, optimizer, other)");
  ExpectError(Replace(kGood, "efficiency: 0.2", "efficiency: 1.2"), 10,
              "gpus[0].compute.gemm[0].efficiency",
              "must be a number in [0.0001, 1] (docs/limits.md)");
  ExpectError(Replace(kGood, "max_flops: 1e11", "max_flops: 1e8"), 11,
              "gpus[0].compute.gemm[1].max_flops",
              "must be greater than the previous band's max_flops");
  ExpectError(Replace(kGood, "{max_flops: 1e11, efficiency: 0.5}", "{efficiency: 0.5}"), 11,
              "gpus[0].compute.gemm[1].max_flops",
              "required field missing (only the last band may leave it out)");
  ExpectError(Replace(kGood, "{efficiency: 0.8}", "{max_flops: 1e20, efficiency: 0.8}"), 12,
              "gpus[0].compute.gemm[2].max_flops",
              "the last band covers the rest: leave max_flops out");
  ExpectError(Replace(kGood, "memory_efficiency: 0.9", "memory_efficiency: 0"), 6,
              "gpus[0].memory_efficiency", "must be a number in [0.0001, 1] (docs/limits.md)");
  ExpectError(Replace(kGood, "\"6us\"", "\"fast\""), 7, "gpus[0].kernel_launch",
              "not a duration: no number (expected e.g. \"2us\", \"1.5ms\")");
  ExpectError(Replace(kGood, "collectives:\n", "  - gpu: H100-SXM5\ncollectives:\n"), 14,
              "gpus[1].gpu", "GPU kind listed twice");
  ExpectError(Replace(kGood, "kind: all_reduce, group", "kind: allreduce, group"), 15,
              "collectives[0].kind",
              "unknown collective kind (known: all_reduce, reduce_scatter, all_gather, "
              "broadcast, reduce, all_to_all, all_to_all_v, gather, scatter)");
  ExpectError(
      Replace(kGood, "group_size: 8, latency: \"20us\"", "group_size: 1, latency: \"20us\""), 15,
      "collectives[0].group_size", "must be an integer in [2, 2147483647]");
  ExpectError(Replace(kGood, "\"100GB/s\"", "\"0GB/s\""), 15, "collectives[0].bandwidth",
              "must be greater than 0");
  ExpectError(Replace(kGood, "gpu: H100-SXM5, group_size: 8", "group_size: 8"), 16,
              "collectives[1]", "duplicate entry for this kind, group_size and gpu");
  ExpectError("format: [", 1, "", "YAML syntax error: end of sequence flow not found");
}

// Line numbers below refer to this text.
const char kCompression[] = R"(format: stratasim-calibration
version: 1
gpus:
  - gpu: H100-SXM5
    compression:
      - {method: s2reducer, encode: "2.1ns", decode: "0.9ns"}
      - {method: casq, encode: "3ns", decode: "1.5ns"}
)";

TEST(Calibration, ReadsCompressionTimesPerElement) {
  const Calibration c = LoadCalibrationText(kCompression, "c.yaml");
  const GpuCalibration* h100 = c.FindGpu("H100-SXM5");
  ASSERT_NE(h100, nullptr);
  const CompressionCalibration* s2 = h100->FindCompression(CompressionMethod::kS2Reducer);
  ASSERT_NE(s2, nullptr);
  EXPECT_DOUBLE_EQ(s2->encode_s_per_element, 2.1e-9);
  EXPECT_DOUBLE_EQ(s2->decode_s_per_element, 0.9e-9);
  EXPECT_DOUBLE_EQ(h100->FindCompression(CompressionMethod::kCasq)->encode_s_per_element, 3e-9);
  EXPECT_EQ(h100->FindCompression(CompressionMethod::kTopK), nullptr);
  // A file without the key lists none.
  EXPECT_TRUE(LoadCalibrationText(kGood, "c.yaml").FindGpu("H100-SXM5")->compression.empty());
}

TEST(Calibration, CompressionErrorsNameLineKeyAndRule) {
  ExpectError(Replace(kCompression, "method: casq", "method: sketch"), 7,
              "gpus[0].compression[1].method",
              "unknown compression method (known: dense, coo, omnireduce, s2reducer, casq, topk, "
              "qsgd, terngrad, fp16, fp8, int8)");
  ExpectError(Replace(kCompression, "method: casq", "method: s2reducer"), 7,
              "gpus[0].compression[1].method", "method listed twice for this GPU kind");
  ExpectError(Replace(kCompression, "encode: \"3ns\"", "encode: \"fast\""), 7,
              "gpus[0].compression[1].encode",
              "not a duration: no number (expected e.g. \"2us\", \"1.5ms\")");
  ExpectError(Replace(kCompression, ", decode: \"1.5ns\"", ""), 7, "gpus[0].compression[1].decode",
              "required field missing");
  ExpectError(Replace(kCompression, "decode: \"0.9ns\"", "decode: \"-1ns\""), 6,
              "gpus[0].compression[0].decode", "not a duration: must not be negative");
  ExpectError(Replace(kCompression, "casq, encode", "casq, bits: 2, encode"), 7,
              "gpus[0].compression[1].bits", "unknown key (known: method, encode, decode)");
  ExpectError(
      "format: stratasim-calibration\nversion: 1\ngpus:\n  - gpu: H100-SXM5\n    compression: []\n",
      5, "gpus[0].compression", "must not be empty");
}

TEST(Calibration, LinkEfficienciesReplaceTheDefaultsOfUnsetLinks) {
  const Calibration c =
      LoadCalibrationText(std::string(kGood) + "links: {nvswitch: 0.9, nic: 0.5}\n", "c.yaml");
  EXPECT_DOUBLE_EQ(c.link_efficiency.at(LinkKind::kNvSwitch), 0.9);
  ClusterSpec cluster;
  ServerGroup g;
  g.gpu = "H100-SXM5";
  g.nvswitch = NvSwitchSpec{LinkSpec{360e9, 0, true, 450e9, 0.8, false}};
  g.nics.link = LinkSpec{100, 0, true, 100, 1, /*efficiency_given=*/true};  // the scenario's own
  cluster.groups.push_back(g);
  ApplyLinkCalibration(&c, &cluster);
  EXPECT_DOUBLE_EQ(cluster.groups[0].nvswitch->link.bandwidth_Bps, 0.9 * 450e9);
  EXPECT_DOUBLE_EQ(cluster.groups[0].nics.link.bandwidth_Bps, 100);
  ApplyLinkCalibration(nullptr, &cluster);  // back to the default
  EXPECT_DOUBLE_EQ(cluster.groups[0].nvswitch->link.bandwidth_Bps, 18 * 20.6e9);
  ExpectError(std::string(kGood) + "links: {nvswitch: 0}\n", 17, "links.nvswitch",
              "must be a number in [0.01, 1] (a fraction of the peak)");
  ExpectError(std::string(kGood) + "links: {nvlnk: 0.5}\n", 17, "links.nvlnk",
              "unknown key (known: nvswitch, nvlink, pcie, socket, nic)");
}

// Line numbers below refer to this text.
const char kFabric[] = R"(format: stratasim-calibration
version: 1
fabric:
  - {class: intra, protocol: simple, latency: "3us", bandwidth: "20GB/s"}
  - {class: intra, protocol: ll, latency: "1us", bandwidth: "5GB/s"}
  - {class: inter, protocol: simple, latency: "9us", bandwidth: "11GB/s"}
  - {class: inter, protocol: simple, gpu: H100-SXM5, latency: "7us", bandwidth: "22GB/s"}
)";

TEST(Calibration, ReadsFabricEntries) {
  const Calibration c = LoadCalibrationText(kFabric, "c.yaml");
  ASSERT_EQ(c.fabric.size(), 4u);
  const FabricCalibration* intra = c.FindFabric("intra", "simple", "A100-SXM4-80GB");
  ASSERT_NE(intra, nullptr);
  EXPECT_DOUBLE_EQ(intra->latency_s, 3e-6);
  EXPECT_DOUBLE_EQ(intra->bandwidth_Bps, 20e9);
  // A GPU-specific entry wins over one for any GPU; others get the generic one.
  EXPECT_DOUBLE_EQ(c.FindFabric("inter", "simple", "H100-SXM5")->bandwidth_Bps, 22e9);
  EXPECT_DOUBLE_EQ(c.FindFabric("inter", "simple", "A100-SXM4-80GB")->bandwidth_Bps, 11e9);
  EXPECT_EQ(c.FindFabric("inter", "ll128", "H100-SXM5"), nullptr);
  EXPECT_TRUE(LoadCalibrationText(kGood, "c.yaml").fabric.empty());
}

TEST(Calibration, FabricErrorsNameLineKeyAndRule) {
  ExpectError(Replace(kFabric, "class: intra, protocol: ll,", "class: intro, protocol: ll,"), 5,
              "fabric[1].class", "unknown link class (known: intra, inter)");
  ExpectError(Replace(kFabric, "protocol: ll,", "protocol: ll64,"), 5, "fabric[1].protocol",
              "unknown protocol (known: simple, ll, ll128)");
  ExpectError(Replace(kFabric, "latency: \"1us\"", "latency: \"-1us\""), 5, "fabric[1].latency",
              "not a duration: must not be negative");
  ExpectError(Replace(kFabric, "\"5GB/s\"", "\"0GB/s\""), 5, "fabric[1].bandwidth",
              "must be greater than 0");
  ExpectError(Replace(kFabric, ", bandwidth: \"5GB/s\"", ""), 5, "fabric[1].bandwidth",
              "required field missing");
  ExpectError(Replace(kFabric, "class: intra, protocol: ll,", "class: intra, proto: ll,"), 5,
              "fabric[1].proto", "unknown key (known: class, protocol, gpu, latency, bandwidth)");
  ExpectError(Replace(kFabric, "gpu: H100-SXM5", "gpu: \"\""), 7, "fabric[3].gpu",
              "must not be empty (leave gpu out for any GPU kind)");
  ExpectError(Replace(kFabric, "gpu: H100-SXM5, ", ""), 7, "fabric[3]",
              "duplicate entry for this class, protocol and gpu");
  ExpectError("format: stratasim-calibration\nversion: 1\nfabric: {class: intra}\n", 3, "fabric",
              "must be a list, not a map");
}

TEST(Calibration, FabricEntriesSetTheLinksAndHopLatencies) {
  const Calibration c = LoadCalibrationText(kFabric, "c.yaml");
  ClusterSpec cluster;
  ServerGroup g;
  g.gpu = "H100-SXM5";
  g.nvswitch = NvSwitchSpec{LinkSpec{360e9, 1e-6, true, 450e9, 0.8, false}};
  g.nics.link = LinkSpec{50e9, 1e-6, true, 50e9, 1, false};
  cluster.groups.push_back(g);
  ServerGroup own = g;  // a scenario's own efficiency wins, as with links:
  own.gpu = "A100-SXM4-80GB";
  own.nvswitch->link.efficiency_given = true;
  cluster.groups.push_back(own);
  ApplyLinkCalibration(&c, &cluster);
  const ServerGroup& h = cluster.groups[0];
  EXPECT_DOUBLE_EQ(h.nvswitch->link.bandwidth_Bps, 20e9);
  EXPECT_DOUBLE_EQ(h.nvswitch->link.efficiency, 20e9 / 450e9);
  EXPECT_DOUBLE_EQ(h.nics.link.bandwidth_Bps, 22e9);  // the H100-specific entry
  EXPECT_DOUBLE_EQ(h.measured_intra_step_s.at("simple"), 3e-6);
  EXPECT_DOUBLE_EQ(h.measured_intra_step_s.at("ll"), 1e-6);
  EXPECT_EQ(h.measured_intra_step_s.count("ll128"), 0u);
  EXPECT_DOUBLE_EQ(h.measured_inter_step_s.at("simple"), 7e-6);
  const ServerGroup& a = cluster.groups[1];
  EXPECT_DOUBLE_EQ(a.nvswitch->link.bandwidth_Bps, 360e9);
  EXPECT_DOUBLE_EQ(a.nics.link.bandwidth_Bps, 11e9);
  EXPECT_DOUBLE_EQ(a.measured_inter_step_s.at("simple"), 9e-6);
  ApplyLinkCalibration(nullptr, &cluster);  // back to the defaults
  EXPECT_TRUE(cluster.groups[0].measured_intra_step_s.empty());
  EXPECT_DOUBLE_EQ(cluster.groups[0].nvswitch->link.bandwidth_Bps, 18 * 20.6e9);
}

TEST(Calibration, MissingFileIsAConfigError) {
  try {
    LoadCalibrationFile("/nonexistent/c.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "/nonexistent/c.yaml");
    EXPECT_NE(e.rule().find("cannot read file"), std::string::npos);
  }
}

}  // namespace
}  // namespace stratasim
