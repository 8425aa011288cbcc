#include "apps/cli/progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

namespace exasim::cli {

ProgressBar::ProgressBar() : terminal_(isatty(STDERR_FILENO) != 0), start_(Clock::now()), phase_start_(start_), last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::update(const std::string& phase, std::size_t done, std::size_t total) {
  if (!terminal_) return;
  const auto now = Clock::now();
  if (phase != phase_) {
    phase_ = phase;
    phase_start_ = now;
  }
  const double since_start = std::chrono::duration<double>(now - start_).count();
  const double since_draw = std::chrono::duration<double>(now - last_draw_).count();
  if (since_start < 1.0 || (drawn_ && since_draw < 0.1 && done < total)) return;
  last_draw_ = now;
  drawn_ = true;
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const double elapsed = std::chrono::duration<double>(now - phase_start_).count();
  const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r\033[K%s [%s] %zu/%zu  %3.0f%%  ETA %.0f s", phase.c_str(), bar.c_str(), done, total, 100 * fraction, eta);
  std::fflush(stderr);
}

}  // namespace exasim::cli
