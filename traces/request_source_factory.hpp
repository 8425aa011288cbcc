#pragma once
// Builds the request source of a serving scenario from its `serving.workload` mapping:
//   trace replay: {trace: PATH, format: NAME (detected from the first line when absent),
//                  max_requests: N, time_scale: X, window: [a, b], <format keys>}
//   synthetic:    {arrival: offline|poisson|gamma|bursty, <arrival keys>, requests: N,
//                  prompt_tokens: L, output_tokens: L}
// Formats, arrival processes and length distributions are name -> factory tables with help text.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hw/config/node.hpp"
#include "workloads/serving/request.hpp"

namespace exasim::traces {

struct TraceFormat {
  std::string name;
  std::string help;
  // Keys of the workload mapping it reads besides trace, format, max_requests, time_scale, window.
  std::vector<std::string> (*keys)(const config::Node& workload);
  // Whether a file whose first line is `first_line` is in this format.
  bool (*detect)(std::string_view first_line);
  std::unique_ptr<workloads::serving::RequestSource> (*open)(const std::string& path, const config::Node& workload,
                                                             std::uint64_t seed);
};

// All registered trace formats, in detection order.
const std::vector<TraceFormat>& trace_formats();
// The format whose detector accepts the first line of `path`, or nullptr.
const TraceFormat* detect_trace_format(const std::string& path);

// The source described by `workload`. Relative paths are resolved against `base_dir` (the
// scenario's folder). `seed` seeds the source's one RNG (synthetic draws, Mooncake jitter).
// Unknown keys or values are ConfigErrors naming the key; a missing file is an IoError.
std::unique_ptr<workloads::serving::RequestSource> make_request_source(const config::Node& workload, std::uint64_t seed,
                                                                       const std::string& base_dir);

// The choices above as text, one per line, for `help` output.
std::string workload_help();

}  // namespace exasim::traces
