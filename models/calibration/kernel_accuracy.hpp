#pragma once
// Accuracy of a kernel-time predictor against measured samples, the way the calibration
// reports it: mean absolute relative error |predicted / measured - 1| per op and per bucket of
// token count (decode-like 1-63, 64-511, 512-4095, >= 4096, and the >= 64 and all summaries),
// plus the same for the sum of a layer's four GEMMs (QKV, attention output, MLP up, MLP down)
// of one (source, TP, token count) row.
#include <string>
#include <vector>

#include "models/calibration/kernel_fit.hpp"

namespace exasim::models {

struct Bucket {
  double lo, hi;       // inclusive: token counts, or measured microseconds
  std::string label;   // "1-63", "64-511", ..., ">=64", "all"; "<10 us", ...
};
using TokenBucket = Bucket;
const std::vector<Bucket>& token_buckets();
// By the measured kernel time: under 10 us (launch- and latency-bound), 10-50 us, 50 us or more
// (the bound for large kernels), and all.
const std::vector<Bucket>& time_buckets();
enum class BucketBy { kTokens, kMeasuredTime };
const std::vector<Bucket>& buckets(BucketBy by);

struct AccuracyRow {
  std::string label;            // op name, "all GEMMs", "layer (4 GEMMs summed)", ...
  std::vector<double> mae;      // per bucket; negative when the bucket is empty
  std::vector<int> count;
};

struct AccuracyTable {
  std::vector<AccuracyRow> rows;
};

// Rows: one per op (in order of first appearance), then "all" over `samples`, then (when the
// samples hold all four Vidur GEMMs of rows) "layer sum".
AccuracyTable accuracy_table(const std::vector<KernelSample>& samples, const KernelParams& p,
                             const SamplePredictor& predict, BucketBy by = BucketBy::kTokens);

// The row labelled `label` (throws std::out_of_range when absent).
const AccuracyRow& accuracy_row(const AccuracyTable& t, const std::string& label);

}  // namespace exasim::models
