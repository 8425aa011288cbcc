#pragma once
// Turns the absolute timestamps of trace rows into arrival times (seconds since the first row) and
// keeps them in order. Rows a little out of order (by at most kBackwardsTolerance, as merged logs
// are) are moved up to the latest time seen; a bigger step back means an unsorted file, which a
// streaming reader cannot reorder, so the reader reports it as an error.
#include <cstdint>
#include <string>

namespace exasim::traces {

class TraceClock {
 public:
  static constexpr std::int64_t kBackwardsToleranceNs = 1'000'000;  // 1 ms

  // Records a row's timestamp; false if it lies more than the tolerance before the latest one.
  bool accept(std::int64_t ns) {
    if (!started_) {
      started_ = true;
      first_ = latest_ = ns;
    }
    if (ns < latest_ - kBackwardsToleranceNs) {
      behind_ = latest_ - ns;
      return false;
    }
    if (ns > latest_) latest_ = ns;
    return true;
  }
  // Arrival of the row last accepted, in seconds since the first row (exact integer difference,
  // then one correctly rounded division).
  double arrival_s() const { return static_cast<double>(latest_ - first_) / 1e9; }
  // How far the rejected row lay before the latest one, in seconds.
  double behind_s() const { return static_cast<double>(behind_) / 1e9; }
  std::string backwards_message() const { return "time goes backwards by " + std::to_string(behind_s()) + " s"; }

 private:
  bool started_ = false;
  std::int64_t first_ = 0, latest_ = 0, behind_ = 0;
};

}  // namespace exasim::traces
