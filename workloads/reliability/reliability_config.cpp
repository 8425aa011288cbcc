#include "workloads/reliability/reliability_config.hpp"

namespace exasim::workloads::reliability {

namespace {

using units::Dimension;

// Below a minute a job at any scale does no work: 100,000-GPU jobs see hours (Llama 3: one
// interruption every ~3 h on 16,384 GPUs).
double read_job_mtbf(const config::Node& n) {
  const double v = n.as_positive_quantity(Dimension::kTime);
  if (v < 60) n.fail("a job interrupted more than once a minute is not a plausible cluster", "e.g. job_mtbf: 3 h");
  return v;
}

RestartParts read_restart(const config::Node& n) {
  n.expect_map();
  n.check_keys({"detection", "reschedule", "startup"});
  RestartParts p;
  if (n.has("detection")) p.detection_s = n["detection"].as_nonnegative_quantity(Dimension::kTime);
  if (n.has("reschedule")) p.reschedule_s = n["reschedule"].as_nonnegative_quantity(Dimension::kTime);
  if (n.has("startup")) p.startup_s = n["startup"].as_nonnegative_quantity(Dimension::kTime);
  return p;
}

}  // namespace

ReliabilityConfig read_reliability(const config::Node& n, const hw::Catalog& catalog) {
  n.expect_map();
  n.check_keys({"job_mtbf", "failures", "storage", "checkpoint", "restart", "restart_time", "elastic", "horizon", "tokens", "trials",
                "seed"});
  ReliabilityConfig c;
  if (n.has("job_mtbf") && n.has("failures"))
    n["failures"].fail("give job_mtbf or failures, not both", "job_mtbf: the whole job's; failures: rates per component");
  if (n.has("job_mtbf")) c.job_mtbf_s = read_job_mtbf(n["job_mtbf"]);
  else if (n.has("failures")) c.failures = catalog.failure_rates(n["failures"]);
  else n.fail("how often the job is interrupted is missing", "job_mtbf: 3 h, or failures: llama3-h100 (configs/hw/failures.yaml)");
  if (n.has("storage")) c.storage = catalog.storage(n["storage"]);

  const config::Node ckpt = n.required("checkpoint");
  ckpt.expect_map();
  ckpt.check_keys({"interval", "write_time", "mode", "upload_time"});
  if (ckpt.has("mode")) c.checkpoint_async = ckpt["mode"].as_choice({"sync", "async"}) == "async";
  if (ckpt.has("write_time")) c.checkpoint_write_s = ckpt["write_time"].as_nonnegative_quantity(Dimension::kTime);
  else if (!c.storage) ckpt.fail("a checkpoint needs its write_time or a storage: to write to", "e.g. write_time: 30 s, or storage: tectonic-llama3");
  if (ckpt.has("upload_time")) {
    if (!c.checkpoint_async) ckpt["upload_time"].fail("an upload overlapping training is an asynchronous checkpoint's", "add mode: async");
    c.checkpoint_upload_s = ckpt["upload_time"].as_nonnegative_quantity(Dimension::kTime);
  } else if (c.checkpoint_async && !c.storage) {
    ckpt.fail("an asynchronous checkpoint needs its upload_time or a storage: to upload to", "e.g. upload_time: 2 min");
  }
  if (ckpt.has("interval")) {
    const config::Node interval = ckpt["interval"];
    if (!(interval.is_scalar() && interval.as_string() == "optimal"))
      c.checkpoint_interval_s = interval.as_positive_quantity(Dimension::kTime);
  }

  if (n.has("restart_time") && n.has("restart"))
    n["restart"].fail("give restart_time or restart parts, not both", "restart_time: the whole restart");
  if (n.has("restart_time")) {
    c.restart_s = n["restart_time"].as_nonnegative_quantity(Dimension::kTime);
  } else if (n.has("restart")) {
    c.restart = read_restart(n["restart"]);
    if (!c.storage) n["restart"].fail("restart parts add the checkpoint's load from storage", "name a storage:, or give restart_time");
  } else {
    n.fail("what a restart costs is missing", "restart_time: 15 min, or restart: {detection, reschedule, startup} with a storage:");
  }

  if (n.has("elastic")) {
    const config::Node e = n["elastic"];
    e.expect_map();
    e.check_keys({"repair_time", "reconfigure_time"});
    c.elastic = ElasticConfig{e.required("repair_time").as_positive_quantity(Dimension::kTime),
                              e.required("reconfigure_time").as_nonnegative_quantity(Dimension::kTime)};
  }
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
