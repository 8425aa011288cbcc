#include "workloads/training/pipeline_schedule.hpp"

#include <algorithm>

namespace exasim::workloads {

namespace {

// GPipe (Huang et al., 2019): all forwards, then all backwards, then flush.
std::vector<PipelineStep> gpipe(int /*stage*/, int /*stages*/, int m) {
  std::vector<PipelineStep> steps;
  for (int i = 0; i < m; ++i) steps.push_back({true, i});
  for (int i = 0; i < m; ++i) steps.push_back({false, i});
  return steps;
}

// 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s warms up with pp - s - 1 forwards, then
// alternates one forward and one backward, then drains the remaining backwards.
std::vector<PipelineStep> one_f_one_b(int stage, int stages, int m) {
  const int warmup = std::min(stages - stage - 1, m);
  std::vector<PipelineStep> steps;
  int f = 0, b = 0;
  for (; f < warmup; ++f) steps.push_back({true, f});
  while (f < m) {
    steps.push_back({true, f++});
    steps.push_back({false, b++});
  }
  while (b < m) steps.push_back({false, b++});
  return steps;
}

}  // namespace

const std::vector<ScheduleInfo>& pipeline_schedules() {
  static const std::vector<ScheduleInfo> table = {
      {"gpipe", "all forwards, then all backwards (GPipe); holds every micro-batch's activations", gpipe},
      {"1f1b", "one forward, one backward after a warm-up (PipeDream-Flush, Megatron default)", one_f_one_b},
  };
  return table;
}

const ScheduleInfo* find_pipeline_schedule(const std::string& name) {
  for (const auto& s : pipeline_schedules())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace exasim::workloads
