#include "hw/catalog.hpp"

#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

using exasim::ConfigError;
using exasim::DType;
using exasim::hw::Catalog;
using exasim::hw::CatalogKind;
using exasim::config::load_string;
using exasim::config::Node;

namespace {

Catalog real_catalog() { return Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs"); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A catalog name as a scenario would write it.
Node ref(const std::string& name) { return load_string(name, "scenario.yaml"); }

// Memory sizes are marketed in GB but devices report GiB; either reading of "N GB" is accepted.
void check_marketed_gb(double bytes, double n) {
  CHECK(bytes >= n * 1e9 * 0.999);
  CHECK(bytes <= n * 1024.0 * 1024.0 * 1024.0 * 1.001);
}

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

// Builds every entry of one kind; a failure reports the entry and the catalog's own message.
template <class Build>
void build_all(const Catalog& cat, CatalogKind kind, Build build) {
  const auto names = cat.names(kind);
  CHECK_FALSE(names.empty());
  for (const auto& name : names) {
    INFO(exasim::hw::catalog_kind_name(kind), " ", name);
    try {
      build(ref(name));
    } catch (const exasim::Error& e) {
      FAIL_CHECK("does not build: ", e.describe());
    }
  }
}

// A complete inline GPU, so a test can drop one key and see that key named.
const char* const kInlineGpu =
    "gpu:\n"
    "  vendor: nvidia\n"
    "  architecture: hopper\n"
    "  sm_count: 132\n"
    "  boost_clock: 1980 MHz\n"
    "  peak: {fp32: 67 TFLOP/s, bf16: 989 TFLOP/s}\n"
    "  vector_fp32: 67 TFLOP/s\n"
    "  hbm_capacity: 80 GB\n"
    "  l2_size: 50 MiB\n"
    "  smem_per_sm: 228 KiB\n"
    "  tdp: 700 W\n"
    "  idle_power: 70 W\n"
    "  nvlink_bandwidth: 450 GB/s\n"
    "  pcie: pcie-gen5\n"
    "  node_fabric: nvswitch-h100\n";

}  // namespace

TEST_CASE("catalog: every hardware entry builds into a spec") {
  const Catalog cat = real_catalog();
  build_all(cat, CatalogKind::kGpu, [&](const Node& r) { (void)cat.gpu(r); });
  build_all(cat, CatalogKind::kLink, [&](const Node& r) { (void)cat.link(r); });
  build_all(cat, CatalogKind::kFabric, [&](const Node& r) { (void)cat.fabric(r); });
  build_all(cat, CatalogKind::kNic, [&](const Node& r) { (void)cat.nic(r); });
  build_all(cat, CatalogKind::kNode, [&](const Node& r) { (void)cat.node(r); });
  build_all(cat, CatalogKind::kCpu, [&](const Node& r) { (void)cat.cpu(r); });
  build_all(cat, CatalogKind::kStorage, [&](const Node& r) { (void)cat.storage(r); });
  build_all(cat, CatalogKind::kFailures, [&](const Node& r) { (void)cat.failure_rates(r); });
}

TEST_CASE("catalog: names a GPU refers to exist") {
  const Catalog cat = real_catalog();
  for (const auto& name : cat.names(CatalogKind::kGpu)) {
    INFO("GPU ", name);
    const auto g = cat.gpu(ref(name));
    CHECK(g.name == name);
    CHECK_MESSAGE(cat.contains(CatalogKind::kFabric, g.node_fabric), "node_fabric \"", g.node_fabric, "\" is not a fabric");
    CHECK_MESSAGE(cat.contains(CatalogKind::kLink, g.pcie), "pcie \"", g.pcie, "\" is not a link");
    CHECK((g.supports(DType::kBf16) || g.supports(DType::kFp16)));  // a 16-bit matrix path (V100: fp16 only)
    CHECK(g.hbm_bandwidth > 0);
    CHECK(g.idle_power_w < g.tdp_w);
  }
}

TEST_CASE("catalog: names a fabric or node refers to exist") {
  const Catalog cat = real_catalog();
  for (const auto& name : cat.names(CatalogKind::kFabric)) {
    INFO("fabric ", name);
    const auto f = cat.fabric(ref(name));
    if (!f.link.empty()) CHECK_MESSAGE(cat.contains(CatalogKind::kLink, f.link), "link \"", f.link, "\" is not a link");
  }
  for (const auto& name : cat.names(CatalogKind::kNode)) {
    INFO("node ", name);
    const auto n = cat.node(ref(name));
    CHECK_MESSAGE(cat.contains(CatalogKind::kGpu, n.gpu), "gpu \"", n.gpu, "\" is not a GPU");
    CHECK_MESSAGE(cat.contains(CatalogKind::kFabric, n.fabric), "fabric \"", n.fabric, "\" is not a fabric");
    CHECK_MESSAGE(cat.contains(CatalogKind::kNic, n.nic), "nic \"", n.nic, "\" is not a NIC");
    if (!n.cpu.empty()) CHECK_MESSAGE(cat.contains(CatalogKind::kCpu, n.cpu), "cpu \"", n.cpu, "\" is not a CPU");
    if (!n.pcie.empty()) CHECK_MESSAGE(cat.contains(CatalogKind::kLink, n.pcie), "pcie \"", n.pcie, "\" is not a link");
    // A node's fabric must hold its GPUs.
    const auto f = cat.fabric(ref(n.fabric));
    if (f.max_gpus > 0) CHECK(n.gpus_per_node <= f.max_gpus);
  }
}

TEST_CASE("catalog: every name in DESIGN.md exists") {
  const Catalog cat = real_catalog();
  const std::pair<CatalogKind, std::vector<std::string>> expected[] = {
      {CatalogKind::kGpu,
       {"A100-SXM4-40GB", "A100-SXM4-80GB", "A40", "H100-SXM5-80GB", "H100-PCIe-80GB", "H200-SXM-141GB", "B200", "GB200",
        "MI250X", "MI300X",
        // Not in DESIGN.md's list (added after it): Blackwell Ultra.
        "B300", "GB300"}},
      {CatalogKind::kNic, {"ib-hdr-200", "ib-ndr-400", "ib-xdr-800", "roce-400", "slingshot-11"}},
      {CatalogKind::kFabric,
       {"nvswitch-a100", "nvswitch-h100", "nvswitch-b200", "nvl72-gb200", "xgmi-mi300x", "pcie-gen4", "pcie-gen5"}},
      {CatalogKind::kModel,
       {"gpt3-175b", "llama2-7b", "llama2-70b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "mixtral-8x7b",
        "mixtral-8x22b", "deepseek-v3", "qwen2.5-72b"}},
      {CatalogKind::kCpu, {"host-cpu"}},
  };
  for (const auto& [kind, names] : expected) {
    for (const auto& name : names) {
      INFO(exasim::hw::catalog_kind_name(kind), " ", name);
      CHECK(cat.contains(kind, name));
    }
  }
}

TEST_CASE("catalog: every model has the shape keys") {
  const Catalog cat = real_catalog();
  for (const auto& name : cat.names(CatalogKind::kModel)) {
    INFO("model ", name);
    const Node& m = cat.entry(CatalogKind::kModel, name);
    for (const char* key : {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab"}) {
      INFO("key ", key);
      CHECK_NOTHROW((void)m.required(key).as_positive_int());
    }
    if (m.has("heads") && m.has("kv_heads"))
      CHECK(m["heads"].as_positive_int() % m["kv_heads"].as_positive_int() == 0);
  }
}

TEST_CASE("catalog: spot checks against published figures") {
  const Catalog cat = real_catalog();
  const auto a100 = cat.gpu(ref("A100-SXM4-80GB"));
  CHECK(a100.peak(DType::kBf16) == exasim::testing::approx(312e12));   // A100 datasheet, dense
  CHECK(a100.hbm_bandwidth >= 2.0e12);                         // 2,039 GB/s
  check_marketed_gb(a100.hbm_capacity_bytes, 80);
  CHECK(a100.sm_count == 108);
  const auto h100 = cat.gpu(ref("H100-SXM5-80GB"));
  // 989 TFLOP/s dense (whitepaper 989.4), not the 1979 sparse figure.
  CHECK(h100.peak(DType::kBf16) == exasim::testing::approx(989e12).epsilon(0.001));
  CHECK(h100.hbm_bandwidth == exasim::testing::approx(3.35e12).epsilon(0.01));
  CHECK(h100.sm_count == 132);
  CHECK(h100.tdp_w == exasim::testing::approx(700));
  const auto h200 = cat.gpu(ref("H200-SXM-141GB"));
  check_marketed_gb(h200.hbm_capacity_bytes, 141);
  CHECK(h200.hbm_bandwidth == exasim::testing::approx(4.8e12));
  const auto mi300x = cat.gpu(ref("MI300X"));
  check_marketed_gb(mi300x.hbm_capacity_bytes, 192);
  CHECK(mi300x.peak(DType::kBf16) == exasim::testing::approx(1307.4e12).epsilon(0.001));  // dense, not 2614.9 sparse
  CHECK(cat.nic(ref("ib-hdr-200")).bandwidth == exasim::testing::approx(25e9));   // 200 Gb/s
  CHECK(cat.nic(ref("ib-ndr-400")).bandwidth == exasim::testing::approx(50e9));   // 400 Gb/s
  CHECK(cat.fabric(ref("nvswitch-h100")).bandwidth == exasim::testing::approx(450e9));  // 900 GB/s bidirectional
  const auto v100 = cat.gpu(ref("V100-SXM3-32GB"));
  // 640 Tensor Cores x 128 FLOP per clock (4x4x4 FMA = 64 x 2) at 1530 MHz = 125.3 TFLOP/s.
  CHECK(v100.peak(DType::kFp16) == exasim::testing::approx(640.0 * 128 * 1530e6).epsilon(0.003));
  CHECK_FALSE(v100.supports(DType::kBf16));  // Volta's tensor cores take fp16 only
  CHECK(v100.sm_count == 80);
  CHECK(cat.fabric(ref("nvswitch-v100")).max_gpus == 16);  // DGX-2
}

// Blackwell Ultra, against the published figures (shared/validation/gpu_specs.yaml: NVIDIA's
// "Inside NVIDIA Blackwell Ultra" blog, verda.com's per-GPU table without sparsity), not against the
// catalog read back another way.
TEST_CASE("catalog: B300 and GB300 carry Blackwell Ultra's published figures") {
  using exasim::testing::approx;
  const Catalog cat = real_catalog();
  const auto b300 = cat.gpu(ref("B300"));
  CHECK(b300.architecture == "blackwell");
  CHECK(b300.peak(DType::kBf16) == approx(2250e12));  // dense; the same 16-bit rate as B200
  CHECK(b300.peak(DType::kFp8) == approx(4500e12));
  CHECK(b300.peak(DType::kFp4) == approx(14000e12));  // verda table (glennklockwood's HGX figure: 13125)
  CHECK(b300.peak(DType::kInt8) == approx(150e12));   // Blackwell Ultra cut INT8: far below the fp8 rate
  CHECK(b300.peak(DType::kInt8) < b300.peak(DType::kFp8) / 10);
  check_marketed_gb(b300.hbm_capacity_bytes, 288);
  CHECK(b300.hbm_bandwidth == approx(8.0e12));
  CHECK(b300.tdp_w == approx(1100));                  // verda table (glennklockwood: up to 1400 W on HGX)
  CHECK(b300.scaleup_bandwidth == approx(900e9));     // NVLink 5: 1.8 TB/s bidirectional

  const auto gb300 = cat.gpu(ref("GB300"));
  CHECK(gb300.peak(DType::kBf16) == approx(2500e12));
  CHECK(gb300.peak(DType::kFp8) == approx(5000e12));
  CHECK(gb300.peak(DType::kFp4) == approx(15000e12));
  CHECK(gb300.peak(DType::kInt8) == approx(165e12));
  check_marketed_gb(gb300.hbm_capacity_bytes, 288);
  CHECK(gb300.hbm_bandwidth == approx(8.0e12));
  CHECK(gb300.tdp_w == approx(1400));
  // Neither has measured matmul tables: the kernel models take the Blackwell family's fraction.
  CHECK(b300.measured_matmul(DType::kBf16) == 0);
  CHECK(gb300.measured_matmul(DType::kBf16) == 0);
}

TEST_CASE("catalog: a GB300 NVL72 rack is 72 GPUs in one NVLink domain, a DGX B300 8") {
  using exasim::testing::approx;
  const Catalog cat = real_catalog();
  const auto rack = cat.node(ref("gb300-nvl72"));
  CHECK(rack.gpu == "GB300");
  CHECK(rack.gpus_per_node == 72);
  const auto nvl72 = cat.fabric(ref(rack.fabric));
  CHECK(nvl72.kind == "nvswitch");
  CHECK(nvl72.max_gpus == 72);                         // the whole rack is one NVLink domain
  CHECK(nvl72.bandwidth == approx(900e9));             // per GPU per direction
  CHECK(rack.nics_per_node == 72);                     // one ConnectX-8 per GPU
  CHECK(cat.nic(ref(rack.nic)).bandwidth == approx(100e9));  // 800 Gb/s
  CHECK(rack.cpus_per_node == 36);                     // 36 Grace

  const auto dgx = cat.node(ref("dgx-b300"));
  CHECK(dgx.gpu == "B300");
  CHECK(dgx.gpus_per_node == 8);
  const auto board = cat.fabric(ref(dgx.fabric));
  CHECK(board.max_gpus == 8);
  CHECK(board.bandwidth == approx(900e9));
  CHECK(cat.nic(ref(dgx.nic)).bandwidth == approx(100e9));  // ConnectX-8, 800 Gb/s
  // The GPU's own link must not cap its 800 Gb/s NIC (B300's PCIe Gen6 path to the ConnectX-8).
  const std::string gpu_link = cat.gpu(ref("B300")).pcie;
  CHECK(cat.link(ref(gpu_link)).bandwidth >= cat.nic(ref(dgx.nic)).bandwidth);
}

TEST_CASE("catalog: {base: NAME, ...} overrides some fields and keeps the rest") {
  const Catalog cat = real_catalog();
  const Node scenario =
      load_string("gpu: {base: H100-SXM5-80GB, hbm_bandwidth: 4.8 TB/s, hbm_capacity: 141 GB}\n", "scenario.yaml");
  const auto g = cat.gpu(scenario["gpu"]);
  const auto base = cat.gpu(ref("H100-SXM5-80GB"));
  CHECK(g.hbm_bandwidth == exasim::testing::approx(4.8e12));
  CHECK(g.hbm_capacity_bytes == exasim::testing::approx(141e9));
  CHECK(g.sm_count == base.sm_count);
  CHECK(g.peak(DType::kBf16) == base.peak(DType::kBf16));
  CHECK(g.peak_flops == base.peak_flops);
  CHECK(g.tdp_w == base.tdp_w);
  CHECK(g.node_fabric == base.node_fabric);
  CHECK(g.pcie == base.pcie);
  CHECK(cat.reference_name(scenario["gpu"]) == "H100-SXM5-80GB (modified)");
}

TEST_CASE("catalog: an unknown key in an override names the scenario, not the catalog") {
  const Catalog cat = real_catalog();
  const Node scenario = load_string("cluster:\n  gpu: {base: H100-SXM5-80GB, hbm_bandwith: 4.8 TB/s}\n", "scenario.yaml");
  const auto e = expect_config_error([&] { (void)cat.gpu(scenario["cluster"]["gpu"]); });
  CHECK(e.where().file == "scenario.yaml");
  CHECK(e.where().line == 2);
  CHECK(e.where().key == "cluster.gpu.hbm_bandwith");
  CHECK(contains(e.hint(), "did you mean \"hbm_bandwidth\""));
}

TEST_CASE("catalog: a bad value in an override names the scenario") {
  const Catalog cat = real_catalog();
  const Node scenario = load_string("gpu:\n  base: A100-SXM4-80GB\n  hbm_bandwidth: 80 GiB\n", "scenario.yaml");
  const auto e = expect_config_error([&] { (void)cat.gpu(scenario["gpu"]); });
  CHECK(e.where().file == "scenario.yaml");
  CHECK(e.where().line == 3);
  CHECK(e.where().key == "gpu.hbm_bandwidth");
}

TEST_CASE("catalog: a measured matmul rate above the dense peak names the key") {
  const Catalog cat = real_catalog();
  const Node scenario = load_string("gpu:\n  base: H100-SXM5-80GB\n  measured_matmul: {bf16: 1200 TFLOP/s}\n", "scenario.yaml");
  const auto e = expect_config_error([&] { (void)cat.gpu(scenario["gpu"]); });
  CHECK(e.where().file == "scenario.yaml");
  CHECK(e.where().line == 3);
  CHECK(e.where().key == "gpu.measured_matmul.bf16");
  CHECK(contains(e.what(), "exceeds the dense peak"));
  // Below the peak it is taken as given.
  const auto g = cat.gpu(load_string("gpu: {base: H100-SXM5-80GB, measured_matmul: {bf16: 700 TFLOP/s}}", "s.yaml")["gpu"]);
  CHECK(g.measured_matmul(DType::kBf16) == exasim::testing::approx(700e12));
  CHECK(g.measured_matmul(DType::kFp8) == exasim::testing::approx(1402.6e12));  // the catalog's, kept
}

TEST_CASE("catalog: an unknown name suggests the closest one") {
  const Catalog cat = real_catalog();
  const Node scenario = load_string("gpu: {base: H100-SXM5-80G, tdp: 600 W}\nnic: ib-hdr200\n", "scenario.yaml");
  const auto e = expect_config_error([&] { (void)cat.gpu(scenario["gpu"]); });
  CHECK(e.where().file == "scenario.yaml");
  CHECK(e.where().key == "gpu.base");
  CHECK(contains(e.what(), "H100-SXM5-80G"));
  CHECK(contains(e.hint(), "did you mean \"H100-SXM5-80GB\""));
  const auto f = expect_config_error([&] { (void)cat.nic(scenario["nic"]); });
  CHECK(f.where().line == 2);
  CHECK(contains(f.hint(), "did you mean \"ib-hdr-200\""));
  // A name of another kind is not accepted either.
  CHECK(contains(expect_config_error([&] { (void)cat.gpu(ref("ib-hdr-200")); }).what(), "unknown GPU"));
}

TEST_CASE("catalog: an inline GPU missing a required key names the key") {
  const Catalog cat = real_catalog();
  const Node complete = load_string(std::string(kInlineGpu) + "  hbm_bandwidth: 3.35 TB/s\n", "scenario.yaml");
  const auto g = cat.gpu(complete["gpu"]);
  CHECK(g.hbm_bandwidth == exasim::testing::approx(3.35e12));
  CHECK(cat.reference_name(complete["gpu"]) == "inline");

  const Node missing = load_string(kInlineGpu, "scenario.yaml");
  const auto e = expect_config_error([&] { (void)cat.gpu(missing["gpu"]); });
  CHECK(e.where().file == "scenario.yaml");
  CHECK(e.where().key == "gpu");
  CHECK(contains(e.what(), "missing required key \"hbm_bandwidth\""));
}

TEST_CASE("catalog: did-you-mean lists the family a short name begins") {
  using exasim::hw::did_you_mean;
  const Catalog cat = real_catalog();
  const auto gpus = cat.names(CatalogKind::kGpu);
  // Issue 28: H100 suggested B200 (two edits away); it begins both H100 entries.
  CHECK(did_you_mean("H100", gpus) == "did you mean \"H100-PCIe-80GB\" or \"H100-SXM5-80GB\"? ");
  CHECK(did_you_mean("h200", gpus) == "did you mean \"H200-SXM-141GB\"? ");  // case aside
  // Part of a name: the entries that contain it.
  CHECK(did_you_mean("SXM5", gpus) == "did you mean \"H100-SXM5-80GB\"? ");
  // Neither: the closest within a few edits, as before.
  CHECK(did_you_mean("ib-hdr200", cat.names(CatalogKind::kNic)) == "did you mean \"ib-hdr-200\"? ");
  CHECK(did_you_mean("nothing-like-it", gpus).empty());
  // Through a scenario: the hint lists them.
  const auto e = expect_config_error([&] { (void)cat.gpu(ref("H100")); });
  CHECK(contains(e.hint(), "did you mean \"H100-PCIe-80GB\" or \"H100-SXM5-80GB\"?"));
}
