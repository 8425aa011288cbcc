#include "traces/replay_options.hpp"

#include <cmath>
#include <sstream>

namespace exasim::traces {

ReplaySource::ReplaySource(std::unique_ptr<workloads::serving::RequestSource> inner, ReplayOptions options, SourceLocation trace)
    : inner_(std::move(inner)), options_(options), trace_(std::move(trace)) {}

std::optional<workloads::serving::Request> ReplaySource::next() {
  if (done_ || (options_.max_requests >= 0 && issued_ >= options_.max_requests)) return std::nullopt;
  while (auto r = inner_->next()) {
    if (r->arrival_s < options_.window_start_s) continue;
    if (r->arrival_s >= options_.window_end_s) break;  // arrivals never decrease: nothing later fits
    r->arrival_s = (r->arrival_s - options_.window_start_s) / options_.time_scale;
    r->id = static_cast<std::uint64_t>(issued_++);
    return r;
  }
  done_ = true;
  if (issued_ == 0) {
    const bool windowed = options_.window_start_s > 0 || std::isfinite(options_.window_end_s);
    throw ConfigError((windowed ? "no request arrives inside the window: " : "the trace has no requests: ") + inner_->describe(), trace_,
                      windowed ? "widen serving.workload.window, or check the trace's time span" : "a trace needs at least one row");
  }
  return std::nullopt;
}

std::string ReplaySource::describe() const {
  std::ostringstream d;
  d << inner_->describe();
  if (options_.window_start_s > 0 || std::isfinite(options_.window_end_s))
    d << ", window [" << options_.window_start_s << ", " << options_.window_end_s << ") s";
  if (options_.time_scale != 1) d << ", " << options_.time_scale << "x speed";
  if (options_.max_requests >= 0) d << ", at most " << options_.max_requests << " requests";
  return d.str();
}

}  // namespace exasim::traces
