// What any real part has (hw/plausible_ranges.hpp, configs/hw/plausible.yaml): values outside are
// refused where they were written, with the value read, its unit and the unit that was meant.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "hw/catalog.hpp"
#include "hw/error.hpp"
#include "located_error.hpp"

using exasim::hw::Catalog;
using exasim::testing::located_error;

namespace {

const Catalog& catalog() {
  static const Catalog c = Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs");
  return c;
}

std::pair<int, std::string> gpu_error(const std::string& yaml) {
  return located_error([&] { (void)catalog().gpu(exasim::config::load_string(yaml, "scenario.yaml")["gpu"]); });
}

}  // namespace

TEST_CASE("plausible ranges: a bare number taken as SI is refused, with the unit that was meant") {
  // 4000 B/s: four kilobytes a second; 4000 GB/s is an H200-class GPU.
  const auto e = gpu_error("gpu:\n  base: H100-SXM5-80GB\n  hbm_bandwidth: 4000\n");
  CHECK(e.first == 3);
  CHECK(e.second == "gpu.hbm_bandwidth: 4000 reads as 4 kB/s, outside what a real GPU has (10 GB/s to 1 PB/s, plausible.yaml) "
                    "(a bare number is SI; write the unit: 4000 GB/s)");
  // 80 B of memory: 80 GB was meant.
  CHECK(gpu_error("gpu: {base: H100-SXM5-80GB, hbm_capacity: 80}").second.ends_with("(a bare number is SI; write the unit: 80 GB)"));
  // Latencies are written in fractions of a second: 500 (s) for an HBM access meant 500 ns.
  CHECK(gpu_error("gpu: {base: H100-SXM5-80GB, hbm_latency: 500}").second.ends_with("write the unit: 500 ns)"));
  // A link latency of 1: 1 ms, 1 us and 1 ns are all plausible, so the hint gives an example.
  const auto link = located_error(
      [] { (void)catalog().link(exasim::config::load_string("link: {base: nvlink4, latency: 1}", "scenario.yaml")["link"]); });
  CHECK(link.second.ends_with("(a bare number is SI; write the unit, e.g. 1.5 us)"));
  // Each peak rate of the map is checked (before the measured rate is compared with it): fp8
  // given as 3958 (FLOP/s) meant 3958 TFLOP/s.
  CHECK(gpu_error("gpu: {base: H100-SXM5-80GB, peak: {fp8: 3958}}").second ==
        "gpu.peak.fp8: 3958 reads as 3.958 kFLOP/s, outside what a real GPU has (100 GFLOP/s to 100 EFLOP/s, plausible.yaml) "
        "(a bare number is SI; write the unit, e.g. 989 TFLOP/s)");
}

TEST_CASE("plausible ranges: a value with its unit but beyond any real part is refused too") {
  const auto tdp = gpu_error("gpu: {base: H100-SXM5-80GB, tdp: 10 MW}");
  CHECK(tdp.second == "gpu.tdp: 10 MW reads as 10 MW, outside what a real GPU has (10 W to 100 kW, plausible.yaml) "
                      "(check the value and its unit)");
  const auto link = located_error(
      [] { (void)catalog().link(exasim::config::load_string("link: {base: nvlink4, latency: 1 ps}", "scenario.yaml")["link"]); });
  CHECK(link.second.starts_with("link.latency: 1 ps reads as 1 ps, outside what a real link has (1 ns to 1 ms"));
  // A plausible what-if passes: a GPU with twice H200's bandwidth and memory.
  CHECK_NOTHROW((void)catalog().gpu(
      exasim::config::load_string("gpu: {base: H200-SXM-141GB, hbm_bandwidth: 9.6 TB/s, hbm_capacity: 282 GB}", "s.yaml")["gpu"]));
}

TEST_CASE("plausible ranges: the file itself is read strictly") {
  const auto dir = std::filesystem::temp_directory_path() / "exasim_plausible_test";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& text) {
    std::ofstream(dir / "plausible.yaml") << text;
    return (dir / "plausible.yaml").string();
  };
  using exasim::hw::PlausibleRanges;
  CHECK(PlausibleRanges::load((dir / "absent.yaml").string()).size() == 0);
  CHECK(PlausibleRanges::load(write("gpu:\n  tdp: [10 W, 100 kW]\n")).size() == 1);
  CHECK(located_error([&] { (void)PlausibleRanges::load(write("gpu:\n  tdp: [10, 100 kW]\n")); }).second.starts_with(
      "gpu.tdp[0]: a plausible range is written with its unit"));
  CHECK(located_error([&] { (void)PlausibleRanges::load(write("gpu:\n  tdp: [10 W, 100 GB/s]\n")); }).second.starts_with(
      "gpu.tdp[1]: the bounds of a range measure different things"));
  CHECK(located_error([&] { (void)PlausibleRanges::load(write("gpu:\n  tdp: [1 kW, 10 W]\n")); }).second.starts_with(
      "gpu.tdp: the lowest bound is above the highest"));
  CHECK(located_error([&] { (void)PlausibleRanges::load(write("gpu:\n  tdp: 10 W\n")); }).second.starts_with(
      "gpu.tdp: a plausible range is [lowest, highest]"));
  // The shipped file: every range parses, and every catalog entry lies within them (the catalog
  // test builds each).
  CHECK(PlausibleRanges::load(std::string(EXASIM_SOURCE_DIR) + "/configs/hw/plausible.yaml").size() >= 20);
}
