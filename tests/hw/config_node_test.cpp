#include "hw/config/node.hpp"

#include <doctest/doctest.h>

#include "approx.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

using exasim::ConfigError;
using exasim::config::apply_override;
using exasim::config::closest;
using exasim::config::load_string;
using exasim::config::Node;
using exasim::units::Dimension;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs `f`, expects a ConfigError, and returns it so the caller can check place, message and hint.
template <class F>
ConfigError expect_config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    INFO("error: ", e.describe());
    return e;
  }
  FAIL("expected a ConfigError");
  return ConfigError("unreachable");
}

// A small scenario whose line numbers the tests refer to (line 1 is "cluster:").
const char* const kScenario =
    "cluster:\n"                            // 1
    "  gpu: A100-SXM4-80GB\n"               // 2
    "  gpus_per_node: 8\n"                  // 3
    "  nodes: -2\n"                         // 4
    "  inter_node: {nic: ib-hdr-200, oversubscription: 1.5}\n"  // 5
    "training:\n"                           // 6
    "  micro_batch: 2.5\n"                  // 7
    "  precision: bf17\n"                   // 8
    "  parallelism:\n"                      // 9
    "    tp: 0\n"                           // 10
    "    pp: lots\n"                        // 11
    "  zero: {stage: 1}\n"                  // 12
    "  dropout: 1.5\n"                      // 13
    "  step_time: 12 parsecs\n"             // 14
    "  hbm: 80 GiB\n"                       // 15
    "  tpo: 3\n";                           // 16

Node scenario() { return load_string(kScenario, "test.yaml"); }

}  // namespace

TEST_CASE("config: a YAML syntax error names the file and line") {
  const auto e = expect_config_error([] { load_string("a: 1\nb: [1, 2\nc: 3\n", "broken.yaml"); });
  CHECK(e.where().file == "broken.yaml");
  CHECK(e.where().line >= 2);
  CHECK(e.where().line <= 3);
  CHECK(contains(e.what(), "YAML syntax error"));
  CHECK_FALSE(e.hint().empty());
  CHECK(contains(e.describe(), "broken.yaml:"));
}

TEST_CASE("config: a node reports file, line and dotted key") {
  const Node root = scenario();
  const Node tp = root["training"]["parallelism"]["tp"];
  CHECK(tp.where().file == "test.yaml");
  CHECK(tp.where().line == 10);
  CHECK(tp.where().key == "training.parallelism.tp");
  CHECK(root["cluster"]["inter_node"]["nic"].where().line == 5);
  CHECK(root["cluster"]["inter_node"]["nic"].where().key == "cluster.inter_node.nic");
}

TEST_CASE("config: an unknown key is named, with a did-you-mean hint") {
  const Node root = scenario();
  const auto e = expect_config_error(
      [&] { root["training"].check_keys({"micro_batch", "precision", "parallelism", "zero", "dropout", "step_time", "hbm", "tp"}); });
  CHECK(e.where().file == "test.yaml");
  CHECK(e.where().line == 16);
  CHECK(e.where().key == "training.tpo");
  CHECK(contains(e.what(), "unknown key \"tpo\""));
  CHECK(contains(e.hint(), "did you mean \"tp\""));
  CHECK(contains(e.hint(), "micro_batch"));  // the allowed keys are listed
}

TEST_CASE("config: an unknown key far from every allowed key gets no guess") {
  const Node root = load_string("a: 1\nzzzzzzzz: 2\n", "test.yaml");
  const auto e = expect_config_error([&] { root.check_keys({"a", "beta"}); });
  CHECK(e.where().key == "zzzzzzzz");
  CHECK(e.where().line == 2);
  CHECK_FALSE(contains(e.hint(), "did you mean"));
}

TEST_CASE("config: a string where a mapping is expected") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { root["cluster"]["gpu"].expect_map(); });
  CHECK(e.where().key == "cluster.gpu");
  CHECK(e.where().line == 2);
  CHECK(contains(e.what(), "expected a mapping"));
  CHECK(contains(e.what(), "A100-SXM4-80GB"));
  // check_keys and required() need a mapping too.
  CHECK(expect_config_error([&] { root["cluster"]["gpu"].check_keys({"x"}); }).where().key == "cluster.gpu");
  CHECK(expect_config_error([&] { (void)root["cluster"]["gpu"].required("x"); }).where().line == 2);
}

TEST_CASE("config: a mapping where a scalar is expected") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { (void)root["training"]["zero"].as_int(); });
  CHECK(e.where().key == "training.zero");
  CHECK(e.where().line == 12);
  CHECK(contains(e.what(), "a mapping"));
  // A block mapping is located at its own key's line, not at its first entry.
  CHECK(expect_config_error([&] { (void)root["training"]["parallelism"].as_string(); }).where().line == 9);
}

TEST_CASE("config: a non-number and a non-integer") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { (void)root["training"]["parallelism"]["pp"].as_number(); });
  CHECK(e.where().key == "training.parallelism.pp");
  CHECK(e.where().line == 11);
  CHECK(contains(e.what(), "expected a number"));
  CHECK(contains(e.what(), "lots"));

  const auto f = expect_config_error([&] { (void)root["training"]["micro_batch"].as_int(); });
  CHECK(f.where().key == "training.micro_batch");
  CHECK(f.where().line == 7);
  CHECK(contains(f.what(), "whole number"));
  CHECK(contains(f.what(), "2.5"));
  // An integer read through as_positive_int rejects fractions the same way.
  CHECK(expect_config_error([&] { (void)root["training"]["micro_batch"].as_positive_int(); }).where().line == 7);
  // A size with a unit is not a plain number.
  CHECK(expect_config_error([&] { (void)root["training"]["hbm"].as_number(); }).where().line == 15);
}

TEST_CASE("config: a missing required key names the key and its parent") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { (void)root["training"]["parallelism"].required("dp"); });
  CHECK(e.where().file == "test.yaml");
  CHECK(e.where().key == "training.parallelism");
  CHECK(e.where().line == 9);  // the parent mapping's key line
  CHECK(contains(e.what(), "missing required key \"dp\""));
  CHECK(contains(e.hint(), "dp:"));
  CHECK(contains(e.hint(), "training.parallelism"));
  // At the top level the hint says so.
  CHECK(contains(expect_config_error([&] { (void)root.required("model"); }).hint(), "top level"));
}

TEST_CASE("config: an absent key still points at its parent's line") {
  const Node root = scenario();
  const Node absent = root["training"]["parallelism"]["dp"];
  CHECK_FALSE(absent.defined());
  const auto e = expect_config_error([&] { (void)absent.as_int(); });
  CHECK(e.where().key == "training.parallelism.dp");
  CHECK(e.where().line == 9);
  CHECK(contains(e.what(), "nothing"));
  // Reading an absent key must not insert it.
  CHECK_FALSE(root["training"]["parallelism"].has("dp"));
}

TEST_CASE("config: zero or negative where a positive value is required") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { (void)root["training"]["parallelism"]["tp"].as_positive_int(); });
  CHECK(e.where().key == "training.parallelism.tp");
  CHECK(e.where().line == 10);
  CHECK(contains(e.what(), "at least 1"));

  const auto f = expect_config_error([&] { (void)root["cluster"]["nodes"].as_nonnegative_int(); });
  CHECK(f.where().line == 4);
  CHECK(contains(f.what(), "negative"));

  const Node q = load_string("bw: -5 GB/s\npower: 0 W\nlat: -1 us\n", "q.yaml");
  const auto g = expect_config_error([&] { (void)q["bw"].as_positive_quantity(Dimension::kBandwidth); });
  CHECK(g.where().key == "bw");
  CHECK(g.where().line == 1);
  CHECK(contains(g.what(), "positive"));
  CHECK(contains(g.hint(), "GB/s"));  // an example of a valid value
  CHECK(expect_config_error([&] { (void)q["power"].as_positive_quantity(Dimension::kPower); }).where().line == 2);
  CHECK(expect_config_error([&] { (void)q["lat"].as_nonnegative_quantity(Dimension::kTime); }).where().line == 3);
  CHECK(q["power"].as_nonnegative_quantity(Dimension::kPower) == 0.0);
}

TEST_CASE("config: a fraction out of range") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { (void)root["training"]["dropout"].as_fraction(); });
  CHECK(e.where().key == "training.dropout");
  CHECK(e.where().line == 13);
  CHECK(contains(e.what(), "between 0 and 1"));
  const Node ok = load_string("a: 0\nb: 1\nc: 0.25\nd: -0.1\n", "f.yaml");
  CHECK(ok["a"].as_fraction() == 0.0);
  CHECK(ok["b"].as_fraction() == 1.0);
  CHECK(ok["c"].as_fraction() == 0.25);
  CHECK(expect_config_error([&] { (void)ok["d"].as_fraction(); }).where().line == 4);
}

TEST_CASE("config: a size where a bandwidth is expected") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { (void)root["training"]["hbm"].as_quantity(Dimension::kBandwidth); });
  CHECK(e.where().key == "training.hbm");
  CHECK(e.where().line == 15);
  CHECK(contains(e.what(), "80 GiB"));
  CHECK(contains(e.what(), "bandwidth"));
  CHECK(contains(e.hint(), "size"));  // says what the unit is instead
  CHECK(root["training"]["hbm"].as_quantity(Dimension::kBytes) == 85899345920.0);
}

TEST_CASE("config: an unknown unit") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { (void)root["training"]["step_time"].as_quantity(Dimension::kTime); });
  CHECK(e.where().key == "training.step_time");
  CHECK(e.where().line == 14);
  CHECK(contains(e.what(), "12 parsecs"));
  CHECK(contains(e.hint(), "parsecs"));
  CHECK_FALSE(e.hint().empty());
}

TEST_CASE("config: a value that is not one of the choices") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { (void)root["training"]["precision"].as_choice({"fp32", "bf16", "fp8"}); });
  CHECK(e.where().key == "training.precision");
  CHECK(e.where().line == 8);
  CHECK(contains(e.what(), "bf17"));
  CHECK(contains(e.hint(), "fp32 | bf16 | fp8"));
  CHECK(root["training"]["precision"].as_string() == "bf17");
}

TEST_CASE("config: booleans and list elements") {
  const Node root = load_string("flag: maybe\nlist:\n  - 1\n  - x\n", "b.yaml");
  const auto e = expect_config_error([&] { (void)root["flag"].as_bool(); });
  CHECK(e.where().line == 1);
  CHECK(contains(e.what(), "true or false"));
  const Node second = root["list"].at(1);
  CHECK(second.where().key == "list[1]");
  CHECK(second.where().line == 4);
  CHECK(expect_config_error([&] { (void)second.as_int(); }).where().key == "list[1]");
}

TEST_CASE("config: describe() puts place, key, message and hint on one line") {
  const Node root = scenario();
  const auto e = expect_config_error([&] { (void)root["training"]["parallelism"]["tp"].as_positive_int(); });
  const std::string d = e.describe();
  CHECK(d.starts_with("test.yaml:10: training.parallelism.tp: "));
  CHECK(d.find('\n') == std::string::npos);
  CHECK(d.ends_with(")"));
}

TEST_CASE("config: closest() suggests near keys only") {
  CHECK(closest("hbm_bandwith", {"hbm_bandwidth", "hbm_capacity"}) == "hbm_bandwidth");
  CHECK(closest("tpo", {"tp", "pp", "dp"}) == "tp");
  CHECK(closest("completely_different", {"tp", "pp"}).empty());
  CHECK(closest("x", {}).empty());
}

TEST_CASE("override: sets nested keys with YAML-typed values") {
  Node root = load_string("training:\n  micro_batch: 1\n", "test.yaml");
  apply_override(root, "training.micro_batch=2");
  apply_override(root, "training.sequence_parallel=true");
  apply_override(root, "training.lengths=[1, 2, 3]");
  apply_override(root, "training.parallelism={tp: 8, pp: 2}");
  apply_override(root, "training.hbm=4.8 TB/s");
  const Node t = root["training"];
  CHECK(t["micro_batch"].as_int() == 2);
  CHECK(t["sequence_parallel"].as_bool());
  REQUIRE(t["lengths"].is_sequence());
  CHECK(t["lengths"].size() == 3);
  CHECK(t["lengths"].at(2).as_int() == 3);
  REQUIRE(t["parallelism"].is_map());
  CHECK(t["parallelism"]["tp"].as_int() == 8);
  CHECK(t["hbm"].as_quantity(Dimension::kBandwidth) == exasim::testing::approx(4.8e12));
}

TEST_CASE("override: a catalog name on the way becomes {base: NAME, key: value}") {
  Node root = load_string("cluster:\n  gpu: A100-SXM4-80GB\n  nodes: 2\n", "test.yaml");
  apply_override(root, "cluster.gpu.hbm_bandwidth=4.8TB/s");
  const Node gpu = root["cluster"]["gpu"];
  REQUIRE(gpu.is_map());
  CHECK(gpu["base"].as_string() == "A100-SXM4-80GB");
  CHECK(gpu["hbm_bandwidth"].as_quantity(Dimension::kBandwidth) == exasim::testing::approx(4.8e12));
  CHECK(gpu.keys().size() == 2);
  CHECK(root["cluster"]["nodes"].as_int() == 2);  // siblings untouched
  // A second override edits the same wrapped entry rather than wrapping it again.
  apply_override(root, "cluster.gpu.tdp=1000 W");
  CHECK(root["cluster"]["gpu"]["base"].as_string() == "A100-SXM4-80GB");
  CHECK(root["cluster"]["gpu"]["tdp"].as_quantity(Dimension::kPower) == 1000.0);
}

TEST_CASE("override: missing maps are created") {
  Node root = load_string("name: x\n", "test.yaml");
  apply_override(root, "serving.slo.ttft=500 ms");
  CHECK(root["serving"]["slo"]["ttft"].as_quantity(Dimension::kTime) == exasim::testing::approx(0.5));
  Node with_null = load_string("simulation:\n", "test.yaml");
  apply_override(with_null, "simulation.seed=7");
  CHECK(with_null["simulation"]["seed"].as_int() == 7);
}

TEST_CASE("override: malformed assignments are errors that name the override") {
  Node root = load_string("training:\n  micro_batch: 1\n  list: [1, 2]\n", "test.yaml");
  for (const std::string bad : {"training.micro_batch", "=3", "training..micro_batch=2", ".x=1", "training.micro_batch=[1,",
                          "training.list.x=1"}) {
    INFO("assignment: ", bad);
    const auto e = expect_config_error([&] { apply_override(root, bad); });
    CHECK(e.where().file.starts_with("--set"));
    CHECK(contains(e.where().file, bad));
  }
  CHECK(contains(expect_config_error([&] { apply_override(root, "novalue"); }).hint(), "--set"));
  CHECK(root["training"]["micro_batch"].as_int() == 1);  // nothing was changed
}

TEST_CASE("override: an empty last key is a malformed assignment") {
  Node root = load_string("training:\n  micro_batch: 1\n", "test.yaml");
  for (const std::string bad : {"training.=1", "training.micro_batch.=1"}) {
    INFO("assignment: ", bad);
    const auto e = expect_config_error([&] { apply_override(root, bad); });
    CHECK(e.where().file.starts_with("--set"));
  }
}

TEST_CASE("override: errors in an overridden value name the override, not the file") {
  Node root = load_string("training:\n  micro_batch: 1\n  global_batch: 64\ncluster:\n  gpu: A100-SXM4-80GB\n",
                          "test.yaml");
  apply_override(root, "training.micro_batch=lots");
  apply_override(root, "cluster.gpu={hbm_bandwidth: fast}");
  const auto e = expect_config_error([&] { (void)root["training"]["micro_batch"].as_positive_int(); });
  CHECK(e.where().file.starts_with("--set"));
  CHECK(e.where().file == "--set training.micro_batch");
  CHECK(e.where().key == "training.micro_batch");
  CHECK(e.where().line == 0);
  CHECK(e.describe().starts_with("--set training.micro_batch: "));
  // Keys inside an overridden value belong to the override too.
  const auto f = expect_config_error(
      [&] { (void)root["cluster"]["gpu"]["hbm_bandwidth"].as_quantity(Dimension::kBandwidth); });
  CHECK(f.where().file == "--set cluster.gpu");
  CHECK(f.where().key == "cluster.gpu.hbm_bandwidth");
  // A sibling that was not overridden still names the file and line.
  CHECK(root["training"]["global_batch"].where().file == "test.yaml");
  CHECK(root["training"]["global_batch"].where().line == 3);
  // A key that merely shares a prefix with an overridden one is not treated as overridden.
  Node other = load_string("training:\n  micro: 1\n  micro_batch: 1\n", "test.yaml");
  apply_override(other, "training.micro=2");
  CHECK(other["training"]["micro_batch"].where().file == "test.yaml");
}

// Issue 29's fuzzing classes, each a located error now (they were internal errors, a hang or 4 GB).
TEST_CASE("config: hostile YAML is refused with its line: complex keys, alias bombs, deep nesting") {
  // A complex key has no name to report: yaml-cpp's bad conversion escaped as an internal error.
  ConfigError e = expect_config_error([] { load_string("name: x\n? [a, b]\n: c\n", "k.yaml"); });
  CHECK(e.where().file == "k.yaml");
  CHECK(e.where().line == 2);
  CHECK(contains(e.what(), "a mapping key must be a name"));
  e = expect_config_error([] { load_string("? :\nname: x\n", "null-key.yaml"); });
  CHECK(contains(e.what(), "a mapping key must be a name"));
  // Anchors of anchors: 3 KB of text, 10^7 values once every alias is walked.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 6; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int j = 1; j < 10; ++j) bomb += ", " + prev;
    bomb += "]\n";
  }
  e = expect_config_error([&] { load_string(bomb, "bomb.yaml"); });
  CHECK(contains(e.what(), "more than 1000000 values"));
  CHECK(e.where().line >= 1);
  // Two levels of the same bomb (10 + 100 + 100 values) are read as written.
  CHECK(load_string(bomb.substr(0, bomb.find("a2:")), "small.yaml")["a1"].size() == 10);
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  e = expect_config_error([&] { load_string("x: " + deep + "\n", "deep.yaml"); });
  CHECK(contains(e.what(), "nested deeper than 64 levels"));
  CHECK(load_string("x: " + std::string(10, '[') + std::string(10, ']') + "\n", "ok.yaml").has("x"));
  // --set values pass the same checks.
  Node root = load_string("name: x\n", "s.yaml");
  e = expect_config_error([&] { apply_override(root, "name=" + deep); });
  CHECK(contains(e.what(), "nested deeper"));
}

TEST_CASE("config: a mapping where a list is expected is a located error, not yaml-cpp's InvalidNode") {
  const Node root = load_string("groups:\n  a: 1\n  b: 2\n", "list.yaml");
  const ConfigError e = expect_config_error([&] { root["groups"].at(0); });
  CHECK(e.where().line == 1);  // the key's line
  CHECK(e.where().key == "groups");
  CHECK(contains(e.what(), "expected a list, got a mapping"));
}

TEST_CASE("config: a YAML file larger than any exasim input is refused before it is parsed") {
  // A 100 MB file of unknown keys took 72 s and 5.2 GB before its error.
  const auto path = std::filesystem::temp_directory_path() / "exasim_config_huge.yaml";
  {
    std::ofstream out(path);
    const std::string line(1023, '#');
    for (std::uintmax_t written = 0; written <= exasim::config::kMaxYamlBytes; written += 1024) out << line << '\n';
  }
  const ConfigError e = expect_config_error([&] { exasim::config::load_file(path.string()); });
  CHECK(e.where().file == path.string());
  CHECK(contains(e.what(), "more than the 16 MiB"));
  std::filesystem::remove(path);
}
