#include "workloads/training/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace exasim::workloads {

namespace {

// GPipe (Huang et al., 2019): all forwards, then all backwards, then flush.
std::vector<PipelineStep> gpipe(int /*stage*/, int /*stages*/, int m, int /*chunks*/) {
  std::vector<PipelineStep> steps;
  for (int i = 0; i < m; ++i) steps.push_back({true, i});
  for (int i = 0; i < m; ++i) steps.push_back({false, i});
  return steps;
}

// 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s warms up with pp - s - 1 forwards, then
// alternates one forward and one backward, then drains the remaining backwards.
std::vector<PipelineStep> one_f_one_b(int stage, int stages, int m, int /*chunks*/) {
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

// Interleaved 1F1B (Narayanan et al., SC'21, Section 2.2.2; Megatron-LM's
// forward_backward_pipelining_with_interleaving): each rank holds v chunks; micro-batches go
// through the chunks in groups of p, so the bubble shrinks by v. The k-th forward runs chunk
// (k mod p v) div p on micro-batch (k div p v) p + k mod p; backwards visit chunks in reverse.
PipelineStep interleaved_step(int k, int stages, int chunks, bool forward) {
  const int group = stages * chunks;
  const int in_group = k % group;
  int chunk = in_group / stages;
  if (!forward) chunk = chunks - 1 - chunk;
  return {forward, (k / group) * stages + k % stages, chunk};
}

std::vector<PipelineStep> interleaved(int stage, int stages, int m, int chunks) {
  const int total = m * chunks;
  int warmup = (stages - stage - 1) * 2 + (chunks - 1) * stages;
  if (m == stages) warmup = total;  // Megatron runs all forwards first in this case
  warmup = std::min(warmup, total);
  std::vector<PipelineStep> steps;
  for (int k = 0; k < warmup; ++k) steps.push_back(interleaved_step(k, stages, chunks, true));
  const int steady = total - warmup;
  for (int k = 0; k < steady; ++k) {
    steps.push_back(interleaved_step(warmup + k, stages, chunks, true));
    steps.push_back(interleaved_step(k, stages, chunks, false));
  }
  for (int k = steady; k < total; ++k) steps.push_back(interleaved_step(k, stages, chunks, false));
  return steps;
}

// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR'24, Section 3.1): 1F1B whose
// backward passes propagate input gradients only (B) and send them on at once, with each rank's
// weight-gradient passes (W) shifted later: rank i runs W of micro-batch j after B of j + i, and
// its last i after its last B. The backward cascade through the stages then costs T_B per stage
// instead of T_B + T_W, the later ranks (which 1F1B leaves idle at the end) absorb the deferred
// W's, and the bubble shrinks from (p - 1)(T_F + T_B + T_W) to (p - 1)(T_F + T_B - T_W). A rank
// keeps a micro-batch's activations until its W: every rank peaks at p micro-batches, 1F1B's
// peak (the first rank's).
std::vector<PipelineStep> zero_bubble_h1(int stage, int stages, int m, int /*chunks*/) {
  const int warmup = std::min(stages - stage - 1, m);
  const int lag = std::min(stage, m);
  std::vector<PipelineStep> steps;
  for (int f = 0; f < warmup; ++f) steps.push_back({true, f});
  for (int b = 0; b < m; ++b) {
    if (warmup + b < m) steps.push_back({true, warmup + b});
    steps.push_back({false, b});
    if (b >= lag) steps.push_back({false, b - lag, 0, true});
  }
  for (int b = m - lag; b < m; ++b) steps.push_back({false, b, 0, true});
  return steps;
}

// ZB-H2 (Qi et al., ICLR'24, Section 3.1, figure 3): each rank may hold 2p - 1 micro-batches
// (ZB-H1: p), so it runs extra forwards in the warm-up and keeps weight-gradient passes (W) to
// fill what would be the drain; the ranks' busy spans form a parallelogram, and the bubble is
// (p - 1)(T_F + T_B - 2 T_W), zero when the three passes cost the same. The paper's rule, applied
// at equal pass times: a rank that is free runs an input-gradient pass (B) if one is ready, else
// a forward if it holds fewer than 2p - 1 micro-batches, else its oldest W. The parallelogram only
// pays if the ranks do not wait for each other between iterations (the paper's post-validation
// of the optimizer step): ScheduleInfo::steady_state_period.
std::vector<PipelineStep> zero_bubble_h2(int stage, int stages, int m, int /*chunks*/) {
  const int limit = 2 * stages - 1;
  struct Rank {
    int forwards = 0, backwards = 0, weights = 0, free_at = 0;
    std::vector<PipelineStep> steps;
  };
  std::vector<Rank> ranks(stages);
  // End times of every rank's forward and input-gradient pass per micro-batch; -1 until it runs.
  std::vector<std::vector<int>> forward_end(stages, std::vector<int>(m, -1)), backward_end = forward_end;
  for (int t = 0, running = stages; running > 0; ++t) {
    running = 0;
    bool moving = false;  // some rank runs a pass during [t, t + 1)
    for (int s = 0; s < stages; ++s) {
      Rank& r = ranks[s];
      if (r.weights == m) continue;
      ++running;
      if (r.free_at > t) {
        moving = true;
        continue;
      }
      const auto done = [t](int end) { return end >= 0 && end <= t; };
      const int b = r.backwards, f = r.forwards;
      if (b < m && done(forward_end[s][b]) && (s == stages - 1 || done(backward_end[s + 1][b]))) {
        r.steps.push_back({false, b});
        backward_end[s][b] = t + 1;
        ++r.backwards;
      } else if (f < m && f - r.weights < limit && (s == 0 || done(forward_end[s - 1][f]))) {
        r.steps.push_back({true, f});
        forward_end[s][f] = t + 1;
        ++r.forwards;
      } else if (r.weights < r.backwards) {
        r.steps.push_back({false, r.weights++, 0, true});
      } else {
        continue;  // waits for a neighbour
      }
      r.free_at = t + 1;
      moving = true;
    }
    // Every rank idle and none done: the rule would wait forever (it cannot with a limit of
    // 2p - 1; this guards the loop, not a plan).
    if (running > 0 && !moving) throw std::logic_error("ZB-H2 list schedule stalled");
  }
  return std::move(ranks[stage].steps);
}

// Breadth-first (Lamy-Poirier, "Breadth-First Pipeline Parallelism", MLSys'23): the looping
// placement of interleaving (v chunks per rank), but each rank runs a chunk's forward for every
// micro-batch before the next chunk, and the backwards chunk by chunk in reverse. The bubble is
// interleaving's (p - 1)(t_f + t_b) / v once m >= p; activations of all m micro-batches of every
// chunk are held (as GPipe's), and each chunk's gradients are final, and can be reduced, as
// soon as its last backward ends, overlapping the other chunks' backwards.
std::vector<PipelineStep> breadth_first(int /*stage*/, int /*stages*/, int m, int chunks) {
  std::vector<PipelineStep> steps;
  for (int c = 0; c < chunks; ++c)
    for (int i = 0; i < m; ++i) steps.push_back({true, i, c});
  for (int c = chunks - 1; c >= 0; --c)
    for (int i = 0; i < m; ++i) steps.push_back({false, i, c});
  return steps;
}

}  // namespace

const std::vector<ScheduleInfo>& pipeline_schedules() {
  static const std::vector<ScheduleInfo> table = {
      {"gpipe", "all forwards, then all backwards (GPipe); holds every micro-batch's activations", false, false, gpipe, false},
      {"1f1b", "one forward, one backward after a warm-up (PipeDream-Flush, Megatron default)", false, false, one_f_one_b, false},
      {"interleaved", "1F1B over vpp model chunks per rank (Megatron interleaved); bubble / vpp", true, false, interleaved, false},
      {"zero-bubble", "ZB-H1: 1F1B with weight gradients split off the backward pass (Qi et al.)", false, true, zero_bubble_h1, false},
      {"breadth-first", "vpp looping chunks, each chunk over all micro-batches (Lamy-Poirier); bubble / vpp, GPipe's memory",
       true, false, breadth_first, false},
      {"zero-bubble-h2",
       "ZB-H2: 2p - 1 micro-batches in flight, weight gradients fill the drain, optimizer steps post-validated (Qi et al.); "
       "bubble (p - 1)(T_F + T_B - 2 T_W)",
       false, true, zero_bubble_h2, true},
  };
  return table;
}

int peak_in_flight(const ScheduleInfo& s, int stage, int stages, int micro_batches, int chunks) {
  int outstanding = 0, peak = 0;
  for (const PipelineStep& step : s.order(stage, stages, micro_batches, chunks)) {
    if (s.splits_weight_grad && !step.forward && !step.weight) continue;
    outstanding += step.forward ? 1 : -1;
    peak = std::max(peak, outstanding);
  }
  return peak;
}

const ScheduleInfo* find_pipeline_schedule(const std::string& name) {
  for (const auto& s : pipeline_schedules())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace exasim::workloads
