#pragma once
// The measured NCCL tables of a DGX A100 cluster (Vidur profiles, shared/data/profiles/
// a100_dgx_{all_reduce,send_recv}.csv: median of rank 0, milliseconds) and what the tests do
// with them: predict every row with the analytical backend, aggregate the errors, and fit the
// collective parameters and the cluster's undocumented network to them.
//
// Split: rows with an even row index (every other size) calibrate, the odd ones check.
#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/net/analytical_network.hpp"
#include "sim/net/group_placement.hpp"

namespace exasim::testing {

struct NcclRow {
  sim::CommKind kind = sim::CommKind::kAllReduce;
  int workers = 0;
  int per_node = 0;
  double bytes = 0;
  double seconds = 0;
  bool calibration = false;
  std::string layout() const { return std::to_string(workers / per_node) + "x" + std::to_string(per_node); }
  std::string label() const {
    return std::string(kind == sim::CommKind::kAllReduce ? "all_reduce" : "send_recv") + " " +
           std::to_string(workers / per_node) + " node(s) x " + std::to_string(per_node) + " GPU";
  }
};

inline constexpr double kMiB = 1024.0 * 1024.0;

inline std::vector<NcclRow> load_nccl_table(const std::string& path, sim::CommKind kind) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header: ,min,max,mean,median,std,rank,num_workers,size,collective,devices_per_node,...
  std::vector<NcclRow> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (f.size() < 11) continue;
    NcclRow r;
    r.kind = kind;
    r.workers = std::stoi(f[7]);
    r.per_node = std::stoi(f[10]);
    r.bytes = std::stod(f[8]);
    r.seconds = std::stod(f[4]) * 1e-3;
    r.calibration = std::stoi(f[0]) % 2 == 0;
    rows.push_back(r);
  }
  return rows;
}

inline std::vector<NcclRow> load_dgx_tables() {
  // A copy of the two tables from shared/data/profiles (tests/data/profiles/README.md).
  const std::string dir = std::string(EXASIM_SOURCE_DIR) + "/tests/data/profiles/";
  auto rows = load_nccl_table(dir + "a100_dgx_all_reduce.csv", sim::CommKind::kAllReduce);
  auto sr = load_nccl_table(dir + "a100_dgx_send_recv.csv", sim::CommKind::kSendRecv);
  rows.insert(rows.end(), sr.begin(), sr.end());
  return rows;
}

// Mean absolute relative error per (table, group, size class).
struct ErrorCell {
  double sum = 0;
  int count = 0;
  double mean() const { return count ? sum / count : 0; }
};
struct ErrorTable {
  std::map<std::string, std::array<ErrorCell, 2>> by_group;  // [0]: < 1 MiB, [1]: >= 1 MiB
  std::map<sim::CommKind, std::array<ErrorCell, 2>> by_kind;
};

// Predicts every selected row on `cluster` with `params` (analytical backend).
inline ErrorTable nccl_errors(const std::vector<NcclRow>& rows, const topologies::Cluster& cluster,
                              const models::CollectiveParams& params, const std::function<bool(const NcclRow&)>& use) {
  sim::AnalyticalNetwork net(cluster, params, {});
  ErrorTable t;
  for (const NcclRow& r : rows) {
    if (!use(r)) continue;
    const sim::CommOp op(r.kind, r.bytes, sim::place_group(r.layout(), r.workers, cluster));
    const double e = std::fabs(net.cost(op).time_s / r.seconds - 1);
    const int big = r.bytes >= kMiB ? 1 : 0;
    t.by_group[r.label()][big].sum += e;
    t.by_group[r.label()][big].count += 1;
    t.by_kind[r.kind][big].sum += e;
    t.by_kind[r.kind][big].count += 1;
  }
  return t;
}

// What the fit moves: the collective parameters and the inter-node network of the measured
// cluster (node NIC rate and latency, each GPU's path to the NIC), each within a physical range.
struct FitParameter {
  const char* name;
  double lo, hi;
  double* (*slot)(models::CollectiveParams&, topologies::Cluster&);
};

inline const std::vector<FitParameter>& nccl_fit_parameters() {
  using P = models::CollectiveParams;
  using C = topologies::Cluster;
  static const std::vector<FitParameter> p = {
      {"intra_efficiency", 0.5, 0.95, [](P& q, C&) { return &q.intra_efficiency; }},
      {"reduction_efficiency", 0.5, 1.0, [](P& q, C&) { return &q.reduction_efficiency; }},
      {"step_overhead", 0.5e-6, 20e-6, [](P& q, C&) { return &q.step_overhead_s; }},
      {"inter_step_overhead", 1e-6, 30e-6, [](P& q, C&) { return &q.inter_step_overhead_s; }},
      {"ll_step_overhead", 0.1e-6, 3e-6, [](P& q, C&) { return &q.ll_step_overhead_s; }},
      {"ll_inter_step_overhead", 0.5e-6, 30e-6, [](P& q, C&) { return &q.ll_inter_step_overhead_s; }},
      {"ll128_step_overhead", 0.2e-6, 6e-6, [](P& q, C&) { return &q.ll128_step_overhead_s; }},
      {"ll128_inter_step_overhead", 0.5e-6, 30e-6, [](P& q, C&) { return &q.ll128_inter_step_overhead_s; }},
      {"launch_overhead", 1e-6, 60e-6, [](P& q, C&) { return &q.launch_overhead_s; }},
      {"p2p_launch_overhead", 1e-6, 60e-6, [](P& q, C&) { return &q.p2p_launch_overhead_s; }},
      {"nic.bandwidth", 2e9, 50e9, [](P&, C& c) { return &c.inter->nic.bandwidth; }},
      {"nic.latency", 0.5e-6, 30e-6, [](P&, C& c) { return &c.inter->nic.latency; }},
      {"gpu_nic_bandwidth", 1e9, 30e9, [](P&, C& c) { return &c.inter->gpu_nic_bandwidth; }},
  };
  return p;
}

// The objective: mean over (table, group) of the mean absolute error of the rows from 1 MiB,
// plus a tenth of that below 1 MiB: small messages take 20 or 60 us at random in these tables
// (Python-side launch), which no model predicts row by row; their bound is twice as loose.
inline double nccl_objective(const ErrorTable& t) {
  double sum = 0;
  int cells = 0;
  for (const auto& [label, c] : t.by_group) {
    sum += 0.1 * c[0].mean() + c[1].mean();
    cells += 1;
  }
  return cells ? sum / cells : 0;
}

// Coordinate descent in log space with a golden-section search per parameter, from the values
// in `params` and `cluster`; returns the objective reached on the calibration rows.
inline double fit_nccl(const std::vector<NcclRow>& rows, models::CollectiveParams& params, topologies::Cluster& cluster,
                       int sweeps = 6) {
  const auto& space = nccl_fit_parameters();
  auto objective = [&] {
    return nccl_objective(nccl_errors(rows, cluster, params, [](const NcclRow& r) { return r.calibration; }));
  };
  double best = objective();
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    for (const FitParameter& p : space) {
      double* v = p.slot(params, cluster);
      const double keep = *v;
      auto at = [&](double lx) {
        *v = std::exp(lx);
        return objective();
      };
      double a = std::log(p.lo), c = std::log(p.hi);
      const double g = 0.6180339887;
      double x1 = c - g * (c - a), x2 = a + g * (c - a), f1 = at(x1), f2 = at(x2);
      for (int it = 0; it < 18; ++it) {
        if (f1 < f2) {
          c = x2, x2 = x1, f2 = f1, x1 = c - g * (c - a), f1 = at(x1);
        } else {
          a = x1, x1 = x2, f1 = f2, x2 = a + g * (c - a), f2 = at(x2);
        }
      }
      const double lx = f1 < f2 ? x1 : x2, f = std::min(f1, f2);
      if (f < best) best = f, *v = std::exp(lx);
      else *v = keep;
    }
  }
  return best;
}

}  // namespace exasim::testing
