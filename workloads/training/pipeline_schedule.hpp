#pragma once
// Pipeline schedules: the order in which one stage runs the forward and backward passes of its
// micro-batches. A name -> factory table, so new schedules register without if/else chains.
#include <string>
#include <vector>

namespace exasim::workloads {

struct PipelineStep {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;  // model chunk (virtual stage) on this pipeline rank; 0 without interleaving
  bool weight = false;  // a weight-gradient pass (forward == false): zero-bubble schedules split it off
};

struct ScheduleInfo {
  std::string name;
  std::string help;
  bool interleaved = false;        // runs several model chunks (virtual stages) per pipeline rank
  bool splits_weight_grad = false; // backward passes compute input gradients only; weight passes follow
  // The steps of pipeline rank `stage` of `stages`, with `chunks` model chunks per rank.
  std::vector<PipelineStep> (*order)(int stage, int stages, int micro_batches, int chunks);
  // The ranks do not wait for each other between iterations: each steps its optimizer when its
  // own passes end and checks the global conditions (gradient norm, overflow) afterwards, redoing
  // the step in the rare case they fail (Qi et al.'s post-validation). One iteration then lasts
  // the longest rank's span, not the time from the first rank's start to the last rank's end.
  bool steady_state_period = false;
};

// The most model-chunk passes whose activations rank `stage` holds at once under `s`: forwards
// whose backward has not released them yet (with split backward passes, ZB-H1, the weight-
// gradient pass releases them: it needs the layers' inputs).
int peak_in_flight(const ScheduleInfo& s, int stage, int stages, int micro_batches, int chunks);

// All registered schedules (for `help` and validation).
const std::vector<ScheduleInfo>& pipeline_schedules();
// The schedule called `name`, or nullptr.
const ScheduleInfo* find_pipeline_schedule(const std::string& name);

}  // namespace exasim::workloads
