// The measured DGX A100 NCCL tables (Vidur) against the cluster file that holds their fitted
// network and calibration (configs/clusters/a100-dgx-vidur.yaml): mean absolute error on the
// rows not used for fitting, per table and size class, at most 15% from 1 MiB and 30% below.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "models/calibration/calibration_file.hpp"
#include "network_fixture.hpp"
#include "vidur_nccl.hpp"

using namespace exasim;
using namespace exasim::testing;

namespace {

struct Fitted {
  topologies::Cluster cluster;
  models::CollectiveParams params;
};

Fitted load_fitted() {
  const std::string file = std::string(EXASIM_SOURCE_DIR) + "/configs/clusters/a100-dgx-vidur.yaml";
  const config::Node root = config::load_file(file);
  Fitted f;
  f.cluster = workloads::read_cluster(root["cluster"], net_catalog());
  const std::string cal = (std::filesystem::path(file).parent_path() / root["calibration"].as_string()).string();
  f.params = models::load_calibration({}, cal).collective;
  return f;
}

std::string table(const ErrorTable& t) {
  std::ostringstream s;
  s << "\n  group                              < 1 MiB   >= 1 MiB\n";
  auto row = [&](const std::string& name, const std::array<ErrorCell, 2>& c) {
    s << "  " << name << std::string(name.size() < 34 ? 34 - name.size() : 1, ' ') << (c[0].mean() * 100) << "%   "
      << (c[1].mean() * 100) << "%\n";
  };
  for (const auto& [label, c] : t.by_group) row(label, c);
  for (const auto& [kind, c] : t.by_kind) row(kind == sim::CommKind::kAllReduce ? "ALL-REDUCE" : "SEND/RECV", c);
  return s.str();
}

}  // namespace

TEST_CASE("DGX A100 NCCL all-reduce and send/recv: held-out error within 15% (>= 1 MiB) and 30% (< 1 MiB)") {
  const Fitted f = load_fitted();
  const auto rows = load_dgx_tables();
  REQUIRE(rows.size() == 6958 + 1988);
  const ErrorTable held_out = nccl_errors(rows, f.cluster, f.params, [](const NcclRow& r) { return !r.calibration; });
  MESSAGE("held-out rows:", table(held_out));
  for (const auto& [kind, cells] : held_out.by_kind) {
    CAPTURE(static_cast<int>(kind));
    CHECK(cells[1].mean() <= 0.15);
    CHECK(cells[0].mean() <= 0.30);
  }
  const ErrorTable all = nccl_errors(rows, f.cluster, f.params, [](const NcclRow&) { return true; });
  MESSAGE("all rows:", table(all));
}
