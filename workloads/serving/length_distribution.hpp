#pragma once
// Prompt and output lengths of synthetic requests: fixed, uniform, lognormal, or empirical (rows of
// a length-statistics file). A name -> factory table reads them from `prompt_tokens:` and
// `output_tokens:` in the workload mapping.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hw/config/node.hpp"
#include "workloads/serving/sampling.hpp"

namespace exasim::workloads::serving {

// The rows of a length-statistics file (num_prefill_tokens, num_decode_tokens), held in memory
// because sampling needs random access. `source` names the file for reports.
struct LengthTable {
  std::vector<std::int64_t> prompt;
  std::vector<std::int64_t> output;
  std::string source;
};

// Loads the table named by a `file:` node. Supplied by the caller (the trace layer owns file
// formats); it should return the same pointer for the same file, which makes prompt and output
// lengths from one file be drawn jointly.
using LengthTableLoader = std::function<std::shared_ptr<const LengthTable>(const config::Node& file)>;

class LengthDistribution {
 public:
  virtual ~LengthDistribution() = default;
  virtual std::int64_t sample(Rng& rng) const = 0;  // a token count >= 0
  virtual std::string describe() const = 0;
};

std::unique_ptr<LengthDistribution> fixed_length(std::int64_t tokens);
// Uniform integer in [lo, hi].
std::unique_ptr<LengthDistribution> uniform_length(std::int64_t lo, std::int64_t hi);
// Lognormal given by its median and 90th percentile (both in tokens, p90 > median):
// mu = ln(median), sigma = ln(p90 / median) / z_0.9. Chosen over (mean, sigma) because median and
// p90 are what trace summaries report and they need no knowledge of the log scale. Samples are
// rounded to the nearest integer and clamped to [1, max_tokens].
std::unique_ptr<LengthDistribution> lognormal_length(double median, double p90, std::int64_t max_tokens);
// A uniformly chosen row of `table`; `prompt` selects the prompt column, else the output column.
std::unique_ptr<LengthDistribution> empirical_length(std::shared_ptr<const LengthTable> table, bool prompt);

// The (prompt, output) pair of one request.
class RequestLengths {
 public:
  // Drawn independently.
  RequestLengths(std::unique_ptr<LengthDistribution> prompt, std::unique_ptr<LengthDistribution> output);
  // Drawn jointly: one row of the table gives both, keeping their correlation.
  explicit RequestLengths(std::shared_ptr<const LengthTable> table);

  std::pair<std::int64_t, std::int64_t> sample(Rng& rng) const;
  std::string describe() const;

 private:
  std::unique_ptr<LengthDistribution> prompt_, output_;
  std::shared_ptr<const LengthTable> joint_;
};

struct LengthKind {
  std::string name;
  std::string help;
  std::vector<std::string> keys;  // keys of its mapping besides `dist`
  // `prompt` tells whether the node is prompt_tokens (selects the empirical column).
  std::unique_ptr<LengthDistribution> (*make)(const config::Node& spec, bool prompt, const LengthTableLoader& load);
};

// All registered length distributions (for `help` and validation).
const std::vector<LengthKind>& length_distributions();
// One length: a bare number (fixed) or {dist: NAME, ...}.
std::unique_ptr<LengthDistribution> make_length_distribution(const config::Node& spec, bool prompt,
                                                             const LengthTableLoader& load);
// Both lengths; joint when both are empirical over the same table.
RequestLengths make_request_lengths(const config::Node& prompt, const config::Node& output,
                                    const LengthTableLoader& load);

}  // namespace exasim::workloads::serving
