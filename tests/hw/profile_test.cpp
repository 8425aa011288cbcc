#include "hw/profile/profile.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "hw/error.hpp"

using exasim::ConfigError;
using exasim::IoError;
using exasim::hw::Measurement;
using exasim::hw::parse_profile;
using exasim::hw::Profile;
using exasim::hw::profile_to_json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A small profile as exasim-bench writes it; `measurement` replaces the one measurement's body.
std::string profile_text(const std::string& measurement) {
  return R"({
 "schema_version": 1, "tool": "exasim-bench 0.1.0", "date": "2026-01-02T03:04:05Z",
 "host": {"hostname": "box", "cpu_model": "Some CPU", "cores": 2, "threads": 2, "l1d_bytes": 49152},
 "devices": [{"index": 0, "kind": "cpu", "name": "Some CPU", "compute_units": 2, "clock_hz": 2.6e9,
              "memory_bytes": 2.4e10, "l2_bytes": 1048576, "extra": {"simd_width_bits": 512}}],
 "measurements": [)" + measurement + R"(]
})";
}

const char* const kGood =
    R"({"suite": "gemm", "op": "gemm", "device": 0, "dtype": "fp32", "shape": {"m": 64, "n": 64, "k": 64},
        "threads": 1, "working_set_bytes": 49152, "flops": 524288, "bytes": 49152, "repeats": 7,
        "time_s": {"min": 3.4e-6, "median": 3.5e-6, "max": 4.0e-6}})";

template <class E, class F>
E expect_error(F&& f) {
  try {
    f();
  } catch (const E& e) {
    INFO("error: ", e.describe());
    return e;
  }
  FAIL("expected an error");
  return E("unreachable");
}

}  // namespace

TEST_CASE("profile: a written profile reads back field for field") {
  Profile p = parse_profile(profile_text(kGood), "p.json");
  p.notes.push_back("no CUDA GPU visible");
  const Profile q = parse_profile(profile_to_json(p), "round-trip.json");
  CHECK(q.tool == "exasim-bench 0.1.0");
  CHECK(q.host_text.at("hostname") == "box");
  CHECK(q.host.at("l1d_bytes") == 49152);
  REQUIRE(q.devices.size() == 1);
  CHECK(q.devices[0].extra.at("simd_width_bits") == 512);
  CHECK(q.devices[0].clock_hz == 2.6e9);
  REQUIRE(q.measurements.size() == 1);
  const Measurement& m = q.measurements[0];
  CHECK(m.shape.at("k") == 64);
  CHECK(m.flops == 524288);
  CHECK(m.repeats == 7);
  CHECK(m.time_s.min == 3.4e-6);  // doubles are written with round-trip precision
  CHECK(m.time_s.max == 4.0e-6);
  CHECK(q.notes == std::vector<std::string>{"no CUDA GPU visible"});
}

TEST_CASE("profile: the library's choice (cuBLASLt tile, split-K) reads back, and is left out when unknown") {
  std::string with = kGood;
  with.insert(with.rfind('}'), R"(, "library": {"tile_id": 18, "tile_m": 128, "tile_n": 64, "split_k": 2})");
  const Profile p = parse_profile(profile_text(with), "p.json");
  REQUIRE(p.measurements.size() == 1);
  CHECK(p.measurements[0].library.at("tile_m") == 128);
  const Profile q = parse_profile(profile_to_json(p), "round-trip.json");
  CHECK(q.measurements[0].library == p.measurements[0].library);
  CHECK_FALSE(contains(profile_to_json(parse_profile(profile_text(kGood), "p.json")), "library"));
}

TEST_CASE("profile: a missing field is named with its JSON path") {
  std::string body = kGood;
  body.replace(body.find("\"median\": 3.5e-6, "), 18, "");
  const auto e = expect_error<ConfigError>([&] { parse_profile(profile_text(body), "p.json"); });
  CHECK(e.where().file == "p.json");
  CHECK(e.where().key == "measurements[0].time_s.median");
  CHECK(contains(e.what(), "missing"));
}

TEST_CASE("profile: a field of the wrong type or value is named with its JSON path") {
  std::string body = kGood;
  body.replace(body.find("\"repeats\": 7"), 12, "\"repeats\": \"seven\"");
  auto e = expect_error<ConfigError>([&] { parse_profile(profile_text(body), "p.json"); });
  CHECK(e.where().key == "measurements[0].repeats");
  CHECK(contains(e.what(), "integer"));

  body = kGood;
  body.replace(body.find("\"min\": 3.4e-6"), 13, "\"min\": -1");
  e = expect_error<ConfigError>([&] { parse_profile(profile_text(body), "p.json"); });
  CHECK(e.where().key == "measurements[0].time_s.min");

  body = kGood;
  body.replace(body.find("\"max\": 4.0e-6"), 13, "\"max\": 1e-6");
  e = expect_error<ConfigError>([&] { parse_profile(profile_text(body), "p.json"); });
  CHECK(e.where().key == "measurements[0].time_s");
  CHECK(contains(e.what(), "min <= median <= max"));

  body = kGood;
  body.replace(body.find("\"device\": 0"), 11, "\"device\": 3");
  e = expect_error<ConfigError>([&] { parse_profile(profile_text(body), "p.json"); });
  CHECK(e.where().key == "measurements[0].device");
}

TEST_CASE("profile: corrupt JSON gives the line of the damage") {
  std::string text = profile_text(kGood);
  text.erase(text.rfind('}'));  // cut short, as a run killed mid-write leaves it
  const auto e = expect_error<ConfigError>([&] { parse_profile(text, "cut.json"); });
  CHECK(e.where().file == "cut.json");
  CHECK(e.where().line >= 8);
  CHECK(contains(e.what(), "invalid JSON"));
  CHECK_FALSE(e.hint().empty());
}

TEST_CASE("profile: another schema version and a missing file are refused") {
  std::string text = profile_text(kGood);
  text.replace(text.find("\"schema_version\": 1"), 19, "\"schema_version\": 2");
  const auto e = expect_error<ConfigError>([&] { parse_profile(text, "p.json"); });
  CHECK(e.where().key == "schema_version");
  expect_error<IoError>([] { exasim::hw::read_profile("/nonexistent/profile.json"); });
}

TEST_CASE("profile: write_profile and read_profile use the file") {
  const std::string path = "/tmp/exasim_profile_test_" + std::to_string(::getpid()) + ".json";
  const Profile p = parse_profile(profile_text(kGood), "p.json");
  exasim::hw::write_profile(p, path);
  const Profile q = exasim::hw::read_profile(path);
  CHECK(q.measurements.size() == 1);
  std::remove(path.c_str());
}
