#include "workloads/serving/capacity_search.hpp"

#include <cmath>

#include "hw/error.hpp"

namespace exasim::workloads::serving {

namespace {

class ScaledSource final : public RequestSource {
 public:
  ScaledSource(std::unique_ptr<RequestSource> inner, double factor) : inner_(std::move(inner)), factor_(factor) {}
  std::optional<Request> next() override {
    auto r = inner_->next();
    if (r) r->arrival_s /= factor_;
    return r;
  }
  std::string describe() const override { return inner_->describe() + ", arrivals x" + std::to_string(factor_); }

 private:
  std::unique_ptr<RequestSource> inner_;
  double factor_;
};

}  // namespace

std::unique_ptr<RequestSource> scale_arrivals(std::unique_ptr<RequestSource> source, double factor) {
  return std::make_unique<ScaledSource>(std::move(source), factor);
}

double base_arrival_rate(const SourceFactory& make_source) {
  auto src = make_source();
  double first = 0, last = 0;
  std::uint64_t n = 0;
  while (auto r = src->next()) {
    if (n++ == 0) first = r->arrival_s;
    last = r->arrival_s;
  }
  return n > 1 && last > first ? static_cast<double>(n - 1) / (last - first) : 0;
}

ServingResult run_at_rate(const ServingInputs& in, const SourceFactory& make_source, double base_rate, double rate) {
  auto src = scale_arrivals(make_source(), rate / base_rate);
  return simulate_serving(in, *src);
}

CapacityResult max_rate_meeting_slo(const ServingInputs& in, const SourceFactory& make_source,
                                    const CapacityOptions& o) {
  const SloConfig& slo = in.config.slo;
  if (slo.ttft_s <= 0 && slo.tpot_s <= 0)
    throw ConfigError("capacity search needs a latency SLO", {"", 0, "serving.slo"}, "give serving.slo: {ttft: 500 ms, tpot: 50 ms}");
  CapacityResult c;
  c.base_rate_per_s = base_arrival_rate(make_source);
  if (c.base_rate_per_s <= 0)
    throw ConfigError("capacity search needs arrivals spread over time, not all at once", {"", 0, "serving.workload"},
                      "use a trace or arrival: poisson with rate_per_s");
  auto probe = [&](double factor, ServingResult* keep) {
    const double rate = c.base_rate_per_s * factor;
    ServingResult r = run_at_rate(in, make_source, c.base_rate_per_s, rate);
    const bool meets = r.completed > 0 && r.slo_attainment >= slo.attainment;
    c.probes.push_back({rate, r.slo_attainment, meets});
    if (meets && keep) *keep = std::move(r);
    return meets;
  };
  double lo = 0, hi = 0;  // factors: lo meets, hi does not
  ServingResult best;
  if (probe(1, &best)) {
    lo = 1;
    for (hi = 2; hi <= o.max_factor && probe(hi, &best); hi *= 2) lo = hi;
    if (hi > o.max_factor) hi = 0;  // met everywhere probed: report the largest
  } else {
    hi = 1;
    for (lo = 0.5; lo >= o.min_factor && !probe(lo, &best); lo /= 2) hi = lo;
    if (lo < o.min_factor) return c;
  }
  while (hi > 0 && (hi - lo) / lo > o.tolerance) {
    const double mid = std::sqrt(lo * hi);  // geometric: the bracket spans octaves
    if (probe(mid, &best)) lo = mid;
    else hi = mid;
  }
  c.max_rate_per_s = c.base_rate_per_s * lo;
  c.at_max = std::move(best);
  return c;
}

}  // namespace exasim::workloads::serving
