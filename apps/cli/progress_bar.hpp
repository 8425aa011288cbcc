#pragma once
// A one-line progress bar with ETA on stderr, shown only when stderr is a terminal and the work
// has run for more than a second (short searches print nothing; pipes and files never see it).
#include <chrono>
#include <string>

namespace exasim::cli {

class ProgressBar {
 public:
  ProgressBar();
  ~ProgressBar();  // clears the line if one was drawn
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  // `phase` restarts the ETA when it changes.
  void update(const std::string& phase, std::size_t done, std::size_t total);

 private:
  using Clock = std::chrono::steady_clock;
  bool terminal_ = false;
  bool drawn_ = false;
  Clock::time_point start_, phase_start_, last_draw_;
  std::string phase_;
};

}  // namespace exasim::cli
