#pragma once
// A serving request and the interface every request source implements (synthetic arrivals,
// trace replay). Sources stream: they hand out requests one at a time in arrival order, so a
// trace of tens of millions of rows is never held in memory.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace exasim::workloads::serving {

struct Request {
  std::uint64_t id = 0;
  double arrival_s = 0;            // seconds from the start of the run
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  // Prefix-cache identity: one hash per fixed-size block of prompt tokens (Mooncake hash_ids).
  // Equal leading hashes = a shareable KV prefix. Empty when the source has no prefix information.
  std::vector<std::uint64_t> prefix_blocks;
  std::uint32_t prefix_block_tokens = 0;  // tokens per prefix block (Mooncake: 512)
};

class RequestSource {
 public:
  virtual ~RequestSource() = default;
  // The next request in arrival order, or nullopt when the source is exhausted. Arrival times
  // never decrease. Throws ConfigError naming file and line on a malformed row.
  virtual std::optional<Request> next() = 0;
  // A short description for reports ("azure-2023 conv trace, 19366 requests").
  virtual std::string describe() const = 0;
};

}  // namespace exasim::workloads::serving
