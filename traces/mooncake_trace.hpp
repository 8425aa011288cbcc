#pragma once
// Replays a Mooncake trace (kvcache-ai/Mooncake): JSON Lines, one object a line with timestamp
// (ms since the start), input_length, output_length and hash_ids (one id per 512-token prompt
// block; equal leading ids = a shareable KV prefix), which become Request::prefix_blocks.
//
// Some Mooncake traces bucket arrivals (the conversation trace to ~3 s). With jitter on, the
// requests of one bucket (rows with the same timestamp) are spread uniformly over
// [t, t + w), w = min(jitter width, time of the next bucket - t), drawn from an RNG seeded once,
// and handed out in time order. Only one bucket is held at a time.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/line_reader.hpp"
#include "traces/trace_clock.hpp"
#include "workloads/serving/request.hpp"
#include "workloads/serving/sampling.hpp"

namespace exasim::traces {

// Prompt tokens per hash_ids entry in the Mooncake traces.
inline constexpr std::uint32_t kMooncakeBlockTokens = 512;

struct MooncakeOptions {
  double jitter_s = 0;  // bucket width to spread arrivals over; 0 = replay timestamps as they are
  std::uint64_t seed = 0;
};

class MooncakeTraceSource final : public workloads::serving::RequestSource {
 public:
  MooncakeTraceSource(const std::string& path, MooncakeOptions options);
  std::optional<workloads::serving::Request> next() override;
  std::string describe() const override;

 private:
  std::optional<workloads::serving::Request> read_row();
  bool fill_bucket();

  LineReader lines_;
  MooncakeOptions options_;
  TraceClock clock_;
  workloads::serving::Rng rng_;
  std::vector<workloads::serving::Request> bucket_;  // jittered, sorted; handed out from bucket_pos_
  std::size_t bucket_pos_ = 0;
  std::optional<workloads::serving::Request> ahead_;  // first row of the next bucket
  std::uint64_t next_id_ = 0;
};

}  // namespace exasim::traces
