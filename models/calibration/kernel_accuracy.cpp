#include "models/calibration/kernel_accuracy.hpp"

#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace exasim::models {

namespace {

struct Sums {
  const std::vector<Bucket>* b;
  std::vector<double> err;
  std::vector<int> n;
  explicit Sums(const std::vector<Bucket>& buckets = token_buckets())
      : b(&buckets), err(buckets.size(), 0), n(buckets.size(), 0) {}
  void add(double key, double e) {
    for (std::size_t i = 0; i < b->size(); ++i)
      if (key >= (*b)[i].lo && key <= (*b)[i].hi) err[i] += e, n[i] += 1;
  }
  AccuracyRow row(const std::string& label) const {
    AccuracyRow r{label, {}, n};
    for (std::size_t i = 0; i < err.size(); ++i) r.mae.push_back(n[i] ? err[i] / n[i] : -1);
    return r;
  }
};

bool is_layer_gemm(const KernelSample& s) {
  return s.kind == SampleKind::kGemm && (s.op == "attn_pre_proj" || s.op == "attn_post_proj" ||
                                         s.op == "mlp_up_proj" || s.op == "mlp_down_proj");
}

}  // namespace

const std::vector<TokenBucket>& token_buckets() {
  static const std::vector<TokenBucket> kBuckets = {{1, 63, "1-63"},          {64, 511, "64-511"},
                                                    {512, 4095, "512-4095"},  {4096, 1e300, ">=4096"},
                                                    {64, 1e300, ">=64"},      {0, 1e300, "all"}};
  return kBuckets;
}

const std::vector<Bucket>& time_buckets() {
  static const std::vector<Bucket> kBuckets = {
      {0, 10 - 1e-9, "<10 us"}, {10, 50 - 1e-9, "10-50 us"}, {50, 1e300, ">=50 us"}, {0, 1e300, "all"}};
  return kBuckets;
}

const std::vector<Bucket>& buckets(BucketBy by) { return by == BucketBy::kTokens ? token_buckets() : time_buckets(); }

AccuracyTable accuracy_table(const std::vector<KernelSample>& samples, const KernelParams& p,
                             const SamplePredictor& predict, BucketBy by) {
  const std::vector<Bucket>& b = buckets(by);
  auto bucket_key = [by](const KernelSample& s) { return by == BucketBy::kTokens ? s.tokens : s.time_s * 1e6; };
  std::vector<std::string> order;
  std::map<std::string, Sums> by_op;
  Sums all(b);
  // (source, tp, tokens) -> measured and predicted sums of the layer's GEMMs, and their count
  std::map<std::tuple<std::string, int, double>, std::tuple<double, double, int>> layers;
  for (const KernelSample& s : samples) {
    const double predicted = predict(p, s);
    const double e = std::abs(predicted / s.time_s - 1);
    if (!by_op.contains(s.op)) order.push_back(s.op), by_op.emplace(s.op, Sums(b));
    by_op.at(s.op).add(bucket_key(s), e);
    all.add(bucket_key(s), e);
    if (is_layer_gemm(s)) {
      auto& [m, q, c] = layers[{s.source, s.tp, s.tokens}];
      m += s.time_s, q += predicted, c += 1;
    }
  }
  AccuracyTable t;
  for (const std::string& op : order) t.rows.push_back(by_op.at(op).row(op));
  t.rows.push_back(all.row("all"));
  Sums layer(b);
  bool any = false;
  for (const auto& [key, v] : layers) {
    const auto& [m, q, c] = v;
    if (c != 4) continue;
    layer.add(by == BucketBy::kTokens ? std::get<2>(key) : m * 1e6, std::abs(q / m - 1));
    any = true;
  }
  if (any) t.rows.push_back(layer.row("layer sum"));
  return t;
}

const AccuracyRow& accuracy_row(const AccuracyTable& t, const std::string& label) {
  for (const AccuracyRow& r : t.rows)
    if (r.label == label) return r;
  throw std::out_of_range("no accuracy row " + label);
}

}  // namespace exasim::models
