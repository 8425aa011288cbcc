#include "models/calibration/kernel_accuracy.hpp"

#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace exasim::models {

namespace {

struct Sums {
  std::vector<double> err;
  std::vector<int> n;
  Sums() : err(token_buckets().size(), 0), n(token_buckets().size(), 0) {}
  void add(double tokens, double e) {
    const auto& b = token_buckets();
    for (std::size_t i = 0; i < b.size(); ++i)
      if (tokens >= b[i].lo && tokens <= b[i].hi) err[i] += e, n[i] += 1;
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

AccuracyTable accuracy_table(const std::vector<KernelSample>& samples, const KernelParams& p,
                             const SamplePredictor& predict) {
  std::vector<std::string> order;
  std::map<std::string, Sums> by_op;
  Sums all;
  // (source, tp, tokens) -> measured and predicted sums of the layer's GEMMs, and their count
  std::map<std::tuple<std::string, int, double>, std::tuple<double, double, int>> layers;
  for (const KernelSample& s : samples) {
    const double predicted = predict(p, s);
    const double e = std::abs(predicted / s.time_s - 1);
    if (!by_op.contains(s.op)) order.push_back(s.op);
    by_op[s.op].add(s.tokens, e);
    all.add(s.tokens, e);
    if (is_layer_gemm(s)) {
      auto& [m, q, c] = layers[{s.source, s.tp, s.tokens}];
      m += s.time_s, q += predicted, c += 1;
    }
  }
  AccuracyTable t;
  for (const std::string& op : order) t.rows.push_back(by_op[op].row(op));
  t.rows.push_back(all.row("all"));
  Sums layer;
  bool any = false;
  for (const auto& [key, v] : layers) {
    const auto& [m, q, c] = v;
    if (c != 4) continue;
    layer.add(std::get<2>(key), std::abs(q / m - 1));
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
