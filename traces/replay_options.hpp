#pragma once
// What every replayed source can be asked for: a time window of the trace, replay N times faster,
// and a cap on the number of requests. Applied in that order, to any RequestSource.
#include <cstdint>
#include <limits>
#include <memory>

#include "hw/error.hpp"
#include "workloads/serving/request.hpp"

namespace exasim::traces {

struct ReplayOptions {
  // Keep requests with window_start <= arrival < window_end (trace seconds); arrivals are then
  // shifted so that window_start becomes t = 0. Reading stops at the first arrival >= window_end.
  double window_start_s = 0;
  double window_end_s = std::numeric_limits<double>::infinity();
  // Arrivals divided by this (2 = twice as fast; lengths unchanged).
  double time_scale = 1;
  // At most this many requests; negative = no cap.
  std::int64_t max_requests = -1;
};

// A trace that yields no request (a header and no rows, or nothing inside the window) is a
// ConfigError at `trace`, the workload's trace key: a run over nothing reports nothing.
class ReplaySource final : public workloads::serving::RequestSource {
 public:
  ReplaySource(std::unique_ptr<workloads::serving::RequestSource> inner, ReplayOptions options, SourceLocation trace = {});
  // Ids are renumbered 0, 1, ... in the order handed out.
  std::optional<workloads::serving::Request> next() override;
  std::string describe() const override;

 private:
  std::unique_ptr<workloads::serving::RequestSource> inner_;
  ReplayOptions options_;
  SourceLocation trace_;
  std::int64_t issued_ = 0;
  bool done_ = false;
};

}  // namespace exasim::traces
