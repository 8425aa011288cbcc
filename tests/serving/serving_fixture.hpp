#pragma once
// Shared set-up for serving tests: scenarios from YAML text against the real catalog, and
// in-test request sources (fixed lists, Poisson arrivals) so that tests do not depend on traces.
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "workloads/scenario/scenario.hpp"
#include "workloads/serving/iteration_cost.hpp"
#include "workloads/serving/serving_simulation.hpp"

namespace exasim::testing {

namespace sv = workloads::serving;

inline const hw::Catalog& serving_catalog() {
  static const hw::Catalog c = hw::Catalog::load(std::string(EXASIM_SOURCE_DIR) + "/configs");
  return c;
}

// A scenario from the body of its serving: section (indented two spaces), on `gpus` H100s.
inline workloads::Scenario serving_scenario(const std::string& serving_body, const std::string& model = "llama3.1-8b",
                                            int gpus_per_node = 8, const std::string& gpu = "H100-SXM5-80GB") {
  const std::string yaml = "name: test\ncluster: {gpu: " + gpu + ", gpus_per_node: " + std::to_string(gpus_per_node) +
                           ", nodes: 1}\nmodel: " + model + "\nserving:\n" + serving_body +
                           "  workload: {arrival: offline, requests: 1, prompt_tokens: 1, output_tokens: 1}\n";
  return workloads::scenario_from_node(config::load_string(yaml, "test.yaml"), serving_catalog(), ".");
}

class ListSource final : public sv::RequestSource {
 public:
  explicit ListSource(std::vector<sv::Request> r) : requests_(std::move(r)) {}
  std::optional<sv::Request> next() override {
    if (i_ >= requests_.size()) return std::nullopt;
    return requests_[i_++];
  }
  std::string describe() const override { return "test list"; }

 private:
  std::vector<sv::Request> requests_;
  std::size_t i_ = 0;
};

// Poisson arrivals at `rate` with fixed lengths; exponential gaps by inversion of a 53-bit uniform.
class PoissonSource final : public sv::RequestSource {
 public:
  PoissonSource(double rate, std::int64_t count, std::int64_t prompt, std::int64_t output, std::uint64_t seed)
      : rate_(rate), count_(count), prompt_(prompt), output_(output), rng_(seed) {}
  std::optional<sv::Request> next() override {
    if (issued_ >= count_) return std::nullopt;
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    t_ += -std::log1p(-u) / rate_;
    sv::Request r;
    r.id = static_cast<std::uint64_t>(issued_++);
    r.arrival_s = t_;
    r.prompt_tokens = prompt_;
    r.output_tokens = output_;
    return r;
  }
  std::string describe() const override { return "test poisson"; }

 private:
  double rate_;
  std::int64_t count_, prompt_, output_, issued_ = 0;
  std::mt19937_64 rng_;
  double t_ = 0;
};

inline sv::Request request(std::uint64_t id, double arrival, std::int64_t prompt, std::int64_t output) {
  sv::Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

// The iteration cost model of the scenario's first pool for `model` (its own or a variant), on
// the scenario's intra-node links, 8 GPUs a node, no CPU overhead or host link.
inline sv::IterationCostModel pool_cost_model(const workloads::Scenario& s, const workloads::ModelSpec& model) {
  const auto& c = *s.serving_config;
  const auto& p = c.pools[0];
  models::GroupLinks links{s.cluster.intra.bandwidth, s.cluster.intra.latency, 0, 0};
  return sv::IterationCostModel({model, p.gpu, p.kernel, s.calibration.collective, links, 8, p.parallelism, c.precision,
                                 c.kv_dtype, 0, 0, nullptr});
}

inline sv::ServingResult run_serving(const workloads::Scenario& s, sv::RequestSource& src,
                                     std::function<void(const sv::RequestRecord&)> sink = {}) {
  sv::ServingInputs in{s.model, s.cluster, *s.serving_config, s.calibration.collective, s.cost, s.simulation.seed, nullptr,
                       std::move(sink)};
  return sv::simulate_serving(in, src);
}

}  // namespace exasim::testing
