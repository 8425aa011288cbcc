#include "workloads/serving/router.hpp"

#include <random>

namespace exasim::workloads::serving {

namespace {

std::size_t least_outstanding(const std::vector<ReplicaLoad>& loads) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < loads.size(); ++i)
    if (loads[i].outstanding < loads[best].outstanding) best = i;
  return best;
}

class RoundRobinRouter final : public Router {
 public:
  std::size_t pick(const Request&, const std::vector<ReplicaLoad>& loads) override { return next_++ % loads.size(); }

 private:
  std::size_t next_ = 0;
};

class RandomRouter final : public Router {
 public:
  explicit RandomRouter(std::uint64_t seed) : rng_(seed) {}
  // A plain modulo, not std::uniform_int_distribution, whose output differs between standard
  // libraries: the same seed must give the same choices everywhere (the bias is < n / 2^64).
  std::size_t pick(const Request&, const std::vector<ReplicaLoad>& loads) override {
    return static_cast<std::size_t>(rng_() % loads.size());
  }

 private:
  std::mt19937_64 rng_;
};

class LeastOutstandingRouter final : public Router {
 public:
  std::size_t pick(const Request&, const std::vector<ReplicaLoad>& loads) override { return least_outstanding(loads); }
};

class PrefixAffinityRouter final : public Router {
 public:
  bool wants_prefix_hits() const override { return true; }
  std::size_t pick(const Request& r, const std::vector<ReplicaLoad>& loads) override {
    std::size_t best = 0;
    for (std::size_t i = 1; i < loads.size(); ++i) {
      const auto& a = loads[i];
      const auto& b = loads[best];
      if (a.prefix_hit_tokens > b.prefix_hit_tokens ||
          (a.prefix_hit_tokens == b.prefix_hit_tokens && a.outstanding < b.outstanding))
        best = i;
    }
    if (loads[best].prefix_hit_tokens > 0) return best;
    if (!r.prefix_blocks.empty()) return static_cast<std::size_t>(r.prefix_blocks.front() % loads.size());
    return least_outstanding(loads);
  }
};

}  // namespace

const std::vector<RouterInfo>& routers() {
  static const std::vector<RouterInfo> table = {
      {"round-robin", "replicas in turn", [](std::uint64_t) { return std::make_unique<RoundRobinRouter>(); }},
      {"random", "uniformly at random (seeded)", [](std::uint64_t seed) { return std::make_unique<RandomRouter>(seed); }},
      {"least-outstanding", "the replica with the fewest requests in it",
       [](std::uint64_t) { return std::make_unique<LeastOutstandingRouter>(); }},
      {"prefix-affinity", "the replica caching the longest prefix of the prompt; else by the prompt's first prefix block",
       [](std::uint64_t) { return std::make_unique<PrefixAffinityRouter>(); }},
  };
  return table;
}

const RouterInfo* find_router(std::string_view name) {
  for (const RouterInfo& r : routers())
    if (r.name == name) return &r;
  return nullptr;
}

std::string router_names() {
  std::string out;
  for (const RouterInfo& r : routers()) out += (out.empty() ? "" : " | ") + r.name;
  return out;
}

}  // namespace exasim::workloads::serving
