#include "workloads/serving/length_distribution.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace exasim::workloads::serving {

namespace {

// Standard normal quantile at 0.9.
constexpr double kZ90 = 1.2815515655446004;

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

class Fixed final : public LengthDistribution {
 public:
  explicit Fixed(std::int64_t n) : n_(n) {}
  std::int64_t sample(Rng& /*rng*/) const override { return n_; }
  std::string describe() const override { return std::to_string(n_); }

 private:
  std::int64_t n_;
};

class Uniform final : public LengthDistribution {
 public:
  Uniform(std::int64_t lo, std::int64_t hi) : lo_(lo), hi_(hi) {}
  std::int64_t sample(Rng& rng) const override { return uniform_int(rng, lo_, hi_); }
  std::string describe() const override { return "uniform[" + std::to_string(lo_) + ", " + std::to_string(hi_) + "]"; }

 private:
  std::int64_t lo_, hi_;
};

class Lognormal final : public LengthDistribution {
 public:
  Lognormal(double median, double p90, std::int64_t max)
      : median_(median), p90_(p90), mu_(std::log(median)), sigma_(std::log(p90 / median) / kZ90), max_(max) {}
  std::int64_t sample(Rng& rng) const override {
    const double x = std::exp(mu_ + sigma_ * standard_normal(rng));
    // Clamp in floating point first: llround of a value beyond int64 is undefined.
    return std::llround(std::clamp(x, 1.0, static_cast<double>(max_)));
  }
  std::string describe() const override {
    return "lognormal(median " + number(median_) + ", p90 " + number(p90_) + ")";
  }

 private:
  double median_, p90_, mu_, sigma_;
  std::int64_t max_;
};

class Empirical final : public LengthDistribution {
 public:
  Empirical(std::shared_ptr<const LengthTable> t, bool prompt) : table_(std::move(t)), prompt_(prompt) {}
  std::int64_t sample(Rng& rng) const override {
    const auto& column = prompt_ ? table_->prompt : table_->output;
    return column[static_cast<std::size_t>(uniform_int(rng, 0, static_cast<std::int64_t>(column.size()) - 1))];
  }
  std::string describe() const override { return "empirical(" + table_->source + ")"; }

 private:
  std::shared_ptr<const LengthTable> table_;
  bool prompt_;
};

std::unique_ptr<LengthDistribution> make_fixed(const config::Node& s, bool, const LengthTableLoader&) {
  return fixed_length(s.required("tokens").as_positive_int());
}

std::unique_ptr<LengthDistribution> make_uniform(const config::Node& s, bool, const LengthTableLoader&) {
  const long long lo = s.required("min").as_positive_int();
  const config::Node max = s.required("max");
  const long long hi = max.as_positive_int();
  if (hi < lo) max.fail("must be at least min (" + std::to_string(lo) + "), got " + max.as_string());
  return uniform_length(lo, hi);
}

std::unique_ptr<LengthDistribution> make_lognormal(const config::Node& s, bool, const LengthTableLoader&) {
  const config::Node median = s.required("median"), p90 = s.required("p90");
  const double m = median.as_number(), q = p90.as_number();
  if (!(m > 0)) median.fail("must be positive, got " + median.as_string());
  if (!(q > m)) p90.fail("must exceed the median (" + median.as_string() + "), got " + p90.as_string(),
                         "p90 = median gives a fixed length: write the number instead");
  const long long max = s.has("max") ? s["max"].as_positive_int() : std::numeric_limits<std::int64_t>::max();
  return lognormal_length(m, q, max);
}

std::unique_ptr<LengthDistribution> make_empirical(const config::Node& s, bool prompt, const LengthTableLoader& load) {
  const config::Node file = s.required("file");
  if (!load) file.fail("empirical lengths cannot be read here", "give the workload to traces::make_request_source");
  return empirical_length(load(file), prompt);
}

const LengthKind& find_kind(const config::Node& dist) {
  const std::string name = dist.as_string();
  std::string list;
  for (const auto& k : length_distributions()) {
    if (k.name == name) return k;
    list += (list.empty() ? "" : " | ") + k.name;
  }
  dist.fail("unknown length distribution \"" + name + "\"", "choose one of: " + list);
}

bool is_empirical(const config::Node& spec) {
  return spec.is_map() && spec.has("dist") && spec["dist"].is_scalar() && spec["dist"].as_string() == "empirical";
}

}  // namespace

std::unique_ptr<LengthDistribution> fixed_length(std::int64_t tokens) { return std::make_unique<Fixed>(tokens); }
std::unique_ptr<LengthDistribution> uniform_length(std::int64_t lo, std::int64_t hi) {
  return std::make_unique<Uniform>(lo, hi);
}
std::unique_ptr<LengthDistribution> lognormal_length(double median, double p90, std::int64_t max_tokens) {
  return std::make_unique<Lognormal>(median, p90, max_tokens);
}
std::unique_ptr<LengthDistribution> empirical_length(std::shared_ptr<const LengthTable> table, bool prompt) {
  return std::make_unique<Empirical>(std::move(table), prompt);
}

RequestLengths::RequestLengths(std::unique_ptr<LengthDistribution> prompt, std::unique_ptr<LengthDistribution> output)
    : prompt_(std::move(prompt)), output_(std::move(output)) {}

RequestLengths::RequestLengths(std::shared_ptr<const LengthTable> table) : joint_(std::move(table)) {}

std::pair<std::int64_t, std::int64_t> RequestLengths::sample(Rng& rng) const {
  if (joint_) {
    const auto row = static_cast<std::size_t>(uniform_int(rng, 0, static_cast<std::int64_t>(joint_->prompt.size()) - 1));
    return {joint_->prompt[row], joint_->output[row]};
  }
  const std::int64_t p = prompt_->sample(rng);
  return {p, output_->sample(rng)};
}

std::string RequestLengths::describe() const {
  if (joint_) return "prompt/output rows of " + joint_->source;
  return "prompt " + prompt_->describe() + ", output " + output_->describe();
}

const std::vector<LengthKind>& length_distributions() {
  static const std::vector<LengthKind> table = {
      {"fixed", "every request the same length: {dist: fixed, tokens: N} or just N", {"tokens"}, make_fixed},
      {"uniform", "uniform integer in [min, max]", {"min", "max"}, make_uniform},
      {"lognormal", "lognormal by median and p90 (tokens), rounded, clamped to [1, max]", {"median", "p90", "max"},
       make_lognormal},
      {"empirical",
       "rows of a length-statistics CSV (num_prefill_tokens, num_decode_tokens); prompt and output from the "
       "same file are drawn from one row",
       {"file"},
       make_empirical},
  };
  return table;
}

std::unique_ptr<LengthDistribution> make_length_distribution(const config::Node& spec, bool prompt,
                                                             const LengthTableLoader& load) {
  if (spec.is_scalar()) return fixed_length(spec.as_positive_int());
  if (!spec.is_map()) spec.fail("expected a token count or {dist: ...}", "e.g. 1000 or {dist: lognormal, median: 800, p90: 3000}");
  const LengthKind& kind = find_kind(spec.required("dist"));
  std::vector<std::string> allowed = kind.keys;
  allowed.emplace_back("dist");
  spec.check_keys(allowed);
  return kind.make(spec, prompt, load);
}

RequestLengths make_request_lengths(const config::Node& prompt, const config::Node& output,
                                    const LengthTableLoader& load) {
  auto p = make_length_distribution(prompt, true, load);
  auto o = make_length_distribution(output, false, load);
  // Same file on both sides: draw one row for both (the loader hands out one table per file).
  if (is_empirical(prompt) && is_empirical(output)) {
    auto table = load(prompt["file"]);
    if (table == load(output["file"])) return RequestLengths(std::move(table));
  }
  return RequestLengths(std::move(p), std::move(o));
}

}  // namespace exasim::workloads::serving
