#include "core/units.h"

#include <string>

#include "gtest/gtest.h"

namespace stratasim {
namespace {

// The UnitError message of `parse(text)`, or "" when it did not throw.
template <typename Parser>
std::string ErrorOf(Parser parse, const std::string& text) {
  try {
    parse(text);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "";
}

TEST(ParseBandwidth, DecimalBinaryAndBitUnits) {
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("300GB/s"), 300e9);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("300 GB/s"), 300e9);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("  56.25GB/s "), 56.25e9);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("1B/s"), 1);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("2kB/s"), 2e3);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("2KB/s"), 2e3);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("3MB/s"), 3e6);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("1.5TB/s"), 1.5e12);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("1KiB/s"), 1024);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("1MiB/s"), 1048576);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("1GiB/s"), 1073741824.0);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("1TiB/s"), 1099511627776.0);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("200Gb/s"), 25e9);  // InfiniBand HDR
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("8b/s"), 1);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("8kb/s"), 1e3);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("8Mb/s"), 1e6);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("8Tb/s"), 1e12);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("100Gbps"), 12.5e9);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("25GBps"), 25e9);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("8bps"), 1);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("1e9B/s"), 1e9);
  EXPECT_DOUBLE_EQ(ParseBandwidthBps("0GB/s"), 0);
}

TEST(ParseBandwidth, RejectsWithTheRule) {
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "300GB"),
            "not a bandwidth: unknown unit \"GB\" (expected e.g. \"300GB/s\", \"200Gb/s\")");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "300"),
            "not a bandwidth: missing unit (expected e.g. \"300GB/s\", \"200Gb/s\")");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, ""),
            "not a bandwidth: empty (expected e.g. \"300GB/s\", \"200Gb/s\")");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "   "),
            "not a bandwidth: empty (expected e.g. \"300GB/s\", \"200Gb/s\")");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "GB/s"),
            "not a bandwidth: no number (expected e.g. \"300GB/s\", \"200Gb/s\")");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "-5GB/s"), "not a bandwidth: must not be negative");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "nanGB/s"), "not a bandwidth: must be a finite number");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "infGB/s"), "not a bandwidth: must be a finite number");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "1e999GB/s"), "not a bandwidth: must be a finite number");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "300GB/s x"),
            "not a bandwidth: unknown unit \"GB/s x\" (expected e.g. \"300GB/s\", \"200Gb/s\")");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "3.0.0GB/s"),
            "not a bandwidth: unknown unit \".0GB/s\" (expected e.g. \"300GB/s\", \"200Gb/s\")");
  EXPECT_EQ(ErrorOf(ParseBandwidthBps, "300gb/s"),
            "not a bandwidth: unknown unit \"gb/s\" (expected e.g. \"300GB/s\", \"200Gb/s\")");
}

TEST(ParseBytes, UnitsAndBareNumbers) {
  EXPECT_DOUBLE_EQ(ParseBytes("4096"), 4096);
  EXPECT_DOUBLE_EQ(ParseBytes("10B"), 10);
  EXPECT_DOUBLE_EQ(ParseBytes("1.5KB"), 1500);
  EXPECT_DOUBLE_EQ(ParseBytes("1.5kB"), 1500);
  EXPECT_DOUBLE_EQ(ParseBytes("16 MB"), 16e6);
  EXPECT_DOUBLE_EQ(ParseBytes("80GB"), 80e9);
  EXPECT_DOUBLE_EQ(ParseBytes("2TB"), 2e12);
  EXPECT_DOUBLE_EQ(ParseBytes("1PB"), 1e15);
  EXPECT_DOUBLE_EQ(ParseBytes("1KiB"), 1024);
  EXPECT_DOUBLE_EQ(ParseBytes("25MiB"), 25.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(ParseBytes("80GiB"), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(ParseBytes("1TiB"), 1099511627776.0);
}

TEST(ParseBytes, Rejects) {
  EXPECT_EQ(ErrorOf(ParseBytes, "80Gb"),
            "not a size in bytes: unknown unit \"Gb\" (expected e.g. \"80GiB\", \"16GB\", "
            "\"4096\")");
  EXPECT_EQ(ErrorOf(ParseBytes, "-1"), "not a size in bytes: must not be negative");
  EXPECT_EQ(ErrorOf(ParseBytes, "MiB"),
            "not a size in bytes: no number (expected e.g. \"80GiB\", \"16GB\", \"4096\")");
  EXPECT_EQ(ErrorOf(ParseBytes, "0x10"),
            "not a size in bytes: unknown unit \"x10\" (expected e.g. \"80GiB\", \"16GB\", "
            "\"4096\")");
}

TEST(ParseSeconds, Units) {
  EXPECT_DOUBLE_EQ(ParseSeconds("3"), 3);
  EXPECT_DOUBLE_EQ(ParseSeconds("3s"), 3);
  EXPECT_DOUBLE_EQ(ParseSeconds("1.5ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(ParseSeconds("2us"), 2e-6);
  EXPECT_DOUBLE_EQ(ParseSeconds("2 us"), 2e-6);
  EXPECT_DOUBLE_EQ(ParseSeconds("500ns"), 500e-9);
  EXPECT_DOUBLE_EQ(ParseSeconds("0"), 0);
  EXPECT_DOUBLE_EQ(ParseSeconds("-0"), 0);
  EXPECT_EQ(ErrorOf(ParseSeconds, "-1us"), "not a duration: must not be negative");
  EXPECT_EQ(ErrorOf(ParseSeconds, "2min"),
            "not a duration: unknown unit \"min\" (expected e.g. \"2us\", \"1.5ms\")");
}

TEST(ParseFlops, Units) {
  EXPECT_DOUBLE_EQ(ParseFlops("312TFLOPS"), 312e12);
  EXPECT_DOUBLE_EQ(ParseFlops("19.5TFLOP/s"), 19.5e12);
  EXPECT_DOUBLE_EQ(ParseFlops("1e12"), 1e12);
  EXPECT_DOUBLE_EQ(ParseFlops("5 GFLOPS"), 5e9);
  EXPECT_DOUBLE_EQ(ParseFlops("2PFLOP/s"), 2e15);
  EXPECT_DOUBLE_EQ(ParseFlops("7kFLOPS"), 7e3);
  EXPECT_DOUBLE_EQ(ParseFlops("7MFLOPS"), 7e6);
  EXPECT_DOUBLE_EQ(ParseFlops("9FLOPS"), 9);
  EXPECT_EQ(ErrorOf(ParseFlops, "312TOPS"),
            "not a FLOP rate: unknown unit \"TOPS\" (expected e.g. \"312TFLOPS\", "
            "\"19.5TFLOP/s\")");
  EXPECT_EQ(ErrorOf(ParseFlops, "inf"), "not a FLOP rate: must be a finite number");
}

TEST(Format, Bytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
  EXPECT_EQ(FormatBytes(80e9), "74.51 GiB");
  EXPECT_EQ(FormatBytes(1024.0 * 1024 - 1), "1.00 MiB");  // not "1024.00 KiB"
  EXPECT_EQ(FormatBytes(2.0 * 1024 * 1024 * 1024 * 1024), "2.00 TiB");
}

TEST(Format, Bandwidth) {
  EXPECT_EQ(FormatBandwidth(300e9), "300.0 GB/s");
  EXPECT_EQ(FormatBandwidth(25e9), "25.0 GB/s");
  EXPECT_EQ(FormatBandwidth(2039e9), "2039.0 GB/s");
  EXPECT_EQ(FormatBandwidth(15.75e6), "15.8 MB/s");
  EXPECT_EQ(FormatBandwidth(12), "12.0 B/s");
}

TEST(Format, Seconds) {
  EXPECT_EQ(FormatSeconds(0), "0 s");
  EXPECT_EQ(FormatSeconds(1.5), "1.50 s");
  EXPECT_EQ(FormatSeconds(12.34e-3), "12.3 ms");
  EXPECT_EQ(FormatSeconds(250e-6), "250 us");
  EXPECT_EQ(FormatSeconds(4e-6), "4.00 us");
  EXPECT_EQ(FormatSeconds(999.7e-6), "1.00 ms");
  EXPECT_EQ(FormatSeconds(42e-9), "42.0 ns");
  EXPECT_EQ(FormatSeconds(1234), "1230 s");
}

TEST(Format, RoundTripsThroughTheParsers) {
  EXPECT_DOUBLE_EQ(ParseBandwidthBps(FormatBandwidth(300e9)), 300e9);
  EXPECT_DOUBLE_EQ(ParseBytes(FormatBytes(1.5 * 1024 * 1024 * 1024)), 1.5 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(ParseSeconds(FormatSeconds(12.3e-3)), 12.3e-3);
}

}  // namespace
}  // namespace stratasim
