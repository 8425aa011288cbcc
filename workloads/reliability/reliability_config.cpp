#include "workloads/reliability/reliability_config.hpp"

namespace exasim::workloads::reliability {

ReliabilityConfig read_reliability(const config::Node& n) {
  using units::Dimension;
  n.expect_map();
  n.check_keys({"job_mtbf", "checkpoint", "restart_time", "horizon", "tokens", "trials", "seed"});
  ReliabilityConfig c;
  const config::Node mtbf = n.required("job_mtbf");
  c.job_mtbf_s = mtbf.as_positive_quantity(Dimension::kTime);
  // Below a minute a job at any scale does no work: 100,000-GPU jobs see hours (Llama 3: one
  // interruption every ~3 h on 16,384 GPUs).
  if (c.job_mtbf_s < 60) mtbf.fail("a job interrupted more than once a minute is not a plausible cluster", "e.g. job_mtbf: 3 h");
  const config::Node ckpt = n.required("checkpoint");
  ckpt.expect_map();
  ckpt.check_keys({"interval", "write_time"});
  c.checkpoint_write_s = ckpt.required("write_time").as_nonnegative_quantity(Dimension::kTime);
  if (ckpt.has("interval")) {
    const config::Node interval = ckpt["interval"];
    if (!(interval.is_scalar() && interval.as_string() == "optimal"))
      c.checkpoint_interval_s = interval.as_positive_quantity(Dimension::kTime);
  }
  c.restart_s = n.required("restart_time").as_nonnegative_quantity(Dimension::kTime);
  if (n.has("horizon")) {
    if (n.has("tokens")) n["horizon"].fail("give horizon or tokens, not both", "tokens: the job runs until it is trained");
    c.horizon_s = n["horizon"].as_positive_quantity(Dimension::kTime);
    if (c.horizon_s > 10 * 365 * 86400.0) n["horizon"].fail("a horizon over ten years is not a training job", "e.g. horizon: 60 d");
  }
  if (n.has("tokens")) {
    const double tokens = n["tokens"].as_number();
    if (!(tokens >= 1)) n["tokens"].fail("the token budget must be at least one token", "e.g. tokens: 15.6e12");
    c.train_tokens = tokens;
  }
  if (n.has("trials")) {
    c.trials = n["trials"].as_positive_count();
    if (c.trials < 2) n["trials"].fail("one trial gives no confidence interval", "e.g. trials: 100");
    if (c.trials > 100000) n["trials"].fail("more than 100000 trials", "100-1000 give a confidence interval well under 1%");
  }
  if (n.has("seed")) c.seed = static_cast<std::uint64_t>(n["seed"].as_nonnegative_int());
  return c;
}

}  // namespace exasim::workloads::reliability
