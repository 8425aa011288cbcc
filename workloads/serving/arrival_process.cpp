#include "workloads/serving/arrival_process.hpp"

#include <sstream>

namespace exasim::workloads::serving {

namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

class Offline final : public ArrivalProcess {
 public:
  double next(Rng& /*rng*/) override { return 0.0; }
  std::string describe() const override { return "offline (all at t=0)"; }
};

class Poisson final : public ArrivalProcess {
 public:
  explicit Poisson(double rate) : rate_(rate) {}
  double next(Rng& rng) override { return now_ += exponential(rng, 1.0 / rate_); }
  std::string describe() const override { return "poisson " + number(rate_) + "/s"; }

 private:
  double rate_;
  double now_ = 0;
};

class GammaRenewal final : public ArrivalProcess {
 public:
  GammaRenewal(double rate, double cv) : rate_(rate), cv_(cv), shape_(1.0 / (cv * cv)) {}
  // Mean gap shape * scale = 1 / rate, so scale = 1 / (rate * shape).
  double next(Rng& rng) override { return now_ += gamma_unit(rng, shape_) / (rate_ * shape_); }
  std::string describe() const override { return "gamma " + number(rate_) + "/s cv " + number(cv_); }

 private:
  double rate_, cv_, shape_;
  double now_ = 0;
};

class OnOff final : public ArrivalProcess {
 public:
  OnOff(double rate, double on_s, double off_s)
      : rate_(rate), on_s_(on_s), off_s_(off_s), on_rate_(rate * (on_s + off_s) / on_s) {}

  double next(Rng& rng) override {
    if (!started_) {
      started_ = true;
      on_ = uniform01(rng) < on_s_ / (on_s_ + off_s_);
      left_ = exponential(rng, on_ ? on_s_ : off_s_);  // memoryless: residual = full period
    }
    for (;;) {
      if (on_) {
        // Memoryless gaps: a gap that overruns the ON period is simply redrawn in the next one.
        const double gap = exponential(rng, 1.0 / on_rate_);
        if (gap < left_) {
          left_ -= gap;
          return now_ += gap;
        }
      }
      now_ += left_;
      on_ = !on_;
      left_ = exponential(rng, on_ ? on_s_ : off_s_);
    }
  }
  std::string describe() const override {
    return "bursty " + number(rate_) + "/s (on " + number(on_s_) + " s, off " + number(off_s_) + " s)";
  }

 private:
  double rate_, on_s_, off_s_, on_rate_;
  double now_ = 0, left_ = 0;
  bool on_ = true, started_ = false;
};

double rate_of(const config::Node& w) { return w.required("rate_per_s").as_positive_quantity(units::Dimension::kFrequency); }

std::unique_ptr<ArrivalProcess> make_offline(const config::Node& /*w*/) { return offline_arrivals(); }
std::unique_ptr<ArrivalProcess> make_poisson(const config::Node& w) { return poisson_arrivals(rate_of(w)); }

std::unique_ptr<ArrivalProcess> make_gamma(const config::Node& w) {
  const config::Node cv = w.required("cv");
  const double v = cv.as_number();
  if (!(v > 0)) cv.fail("must be positive, got " + cv.as_string(), "cv = 1 is Poisson; 2 is bursty, 0.5 regular");
  return gamma_arrivals(rate_of(w), v);
}

std::unique_ptr<ArrivalProcess> make_bursty(const config::Node& w) {
  const double on = w.required("on_duration").as_positive_quantity(units::Dimension::kTime);
  const double off = w.required("off_duration").as_positive_quantity(units::Dimension::kTime);
  return bursty_arrivals(rate_of(w), on, off);
}

}  // namespace

std::unique_ptr<ArrivalProcess> offline_arrivals() { return std::make_unique<Offline>(); }
std::unique_ptr<ArrivalProcess> poisson_arrivals(double rate_per_s) { return std::make_unique<Poisson>(rate_per_s); }
std::unique_ptr<ArrivalProcess> gamma_arrivals(double rate_per_s, double cv) {
  return std::make_unique<GammaRenewal>(rate_per_s, cv);
}
std::unique_ptr<ArrivalProcess> bursty_arrivals(double rate_per_s, double on_mean_s, double off_mean_s) {
  return std::make_unique<OnOff>(rate_per_s, on_mean_s, off_mean_s);
}

const std::vector<ArrivalKind>& arrival_processes() {
  static const std::vector<ArrivalKind> table = {
      {"offline", "every request at t = 0 (offline throughput)", {}, make_offline},
      {"poisson", "exponential gaps with mean 1/rate_per_s", {"rate_per_s"}, make_poisson},
      {"gamma", "gamma gaps: mean 1/rate_per_s, coefficient of variation cv (1 = Poisson)", {"rate_per_s", "cv"},
       make_gamma},
      {"bursty",
       "on/off: Poisson during ON periods, silence during OFF; exponential period lengths with means "
       "on_duration and off_duration; long-run rate rate_per_s",
       {"rate_per_s", "on_duration", "off_duration"},
       make_bursty},
  };
  return table;
}

const ArrivalKind& find_arrival_process(const config::Node& arrival) {
  const std::string name = arrival.as_string();
  std::string list;
  for (const auto& k : arrival_processes()) {
    if (k.name == name) return k;
    list += (list.empty() ? "" : " | ") + k.name;
  }
  arrival.fail("unknown arrival process \"" + name + "\"", "choose one of: " + list);
}

std::unique_ptr<ArrivalProcess> make_arrival_process(const config::Node& workload) {
  return find_arrival_process(workload.required("arrival")).make(workload);
}

}  // namespace exasim::workloads::serving
