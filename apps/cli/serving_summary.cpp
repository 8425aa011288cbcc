#include "apps/cli/serving_summary.hpp"

#include "apps/cli/table.hpp"
#include "hw/units.hpp"
#include "workloads/serving/deployment_shapes.hpp"

namespace exasim::cli {

namespace {

using units::Dimension;
namespace sv = workloads::serving;

std::string ms(double s) { return fmt_fixed(s * 1e3, 1); }

std::string pools_line(const sv::ServingResult& r) {
  std::string out;
  for (const sv::PoolResult& p : r.pools) {
    if (!out.empty()) out += "; ";
    out += std::string(sv::pool_role_name(p.role)) + " " + std::to_string(p.replicas) + " x TP" +
           std::to_string(p.parallelism.tp) + (p.parallelism.pp > 1 ? " PP" + std::to_string(p.parallelism.pp) : "") +
           (p.parallelism.ep > 1 ? " EP" + std::to_string(p.parallelism.ep) : "") + " on " + p.gpu;
  }
  return out;
}

}  // namespace

std::string latency_cell(const sv::LatencySummary& l) {
  return ms(l.mean) + " / " + ms(l.p50) + " / " + ms(l.p90) + " / " + ms(l.p99);
}

void print_serving_summary(std::ostream& out, const workloads::Scenario& s, const sv::ServingConfig& c,
                           const sv::ServingResult& r, const std::string& workload) {
  out << "exasim: " << s.name << " — " << s.model.name << ", " << pools_line(r) << "; scheduler " << c.scheduler
      << ", router " << c.router << ", " << dtype_name(c.precision) << " weights, " << dtype_name(c.kv_dtype) << " KV\n"
      << "workload: " << workload << "\n\n";
  Table t({"metric", "value"});
  t.set_align_right(1);
  t.add_row({"requests", std::to_string(r.completed) + " completed" +
                             (r.rejected ? ", " + std::to_string(r.rejected) + " rejected (prompt beyond the model context or the KV cache)" : "")});
  t.add_row({"duration", units::format(r.duration_s, Dimension::kTime, 4)});
  t.add_row({"throughput", fmt_fixed(r.output_tokens_per_s, 0) + " output tokens/s, " + fmt_fixed(r.input_tokens_per_s, 0) +
                               " input tokens/s, " + fmt_fixed(r.requests_per_s, 2) + " requests/s"});
  t.add_row({"TTFT ms (mean/p50/p90/p99)", latency_cell(r.ttft)});
  t.add_row({"TPOT ms", latency_cell(r.tpot)});
  t.add_row({"ITL ms", latency_cell(r.itl)});
  t.add_row({"E2E ms", latency_cell(r.e2e)});
  t.add_row({"queueing delay ms", latency_cell(r.queueing)});
  if (c.slo.ttft_s > 0 || c.slo.tpot_s > 0) {
    t.add_row({"SLO (TTFT <= " + ms(c.slo.ttft_s) + " ms, TPOT <= " + ms(c.slo.tpot_s) + " ms)",
               fmt_percent(r.slo_attainment, 1) + " attained, goodput " + fmt_fixed(r.goodput_requests_per_s, 2) + " requests/s"});
  }
  // With a sliding-window model the tokens are slots of every layer; its sliding layers hold
  // only their window of each sequence (serving.sliding_window_kv: window), so more fit.
  const std::string slots = s.model.sliding_window > 0 && c.sliding_window_kv_window
                                ? " token slots of every layer (sliding layers keep about " + std::to_string(s.model.sliding_window) +
                                      " tokens of a sequence)"
                                : " tokens";
  for (const sv::PoolResult& p : r.pools) {
    t.add_row({std::string("KV cache per replica (") + sv::pool_role_name(p.role) + ")",
               std::to_string(p.memory.kv_tokens()) + slots + ", " + units::format(p.memory.kv_bytes, Dimension::kBytes, 3) +
                   " per GPU; GPU busy " + fmt_percent(p.busy_fraction, 1)});
  }
  t.add_row({"KV utilization", "peak " + fmt_percent(r.kv_peak_utilization, 1) + ", mean " + fmt_percent(r.kv_mean_utilization, 1)});
  t.add_row({"preemptions", std::to_string(r.preemptions)});
  if (c.prefix_caching) t.add_row({"prefix cache hit rate", fmt_percent(r.prefix_hit_rate, 1)});
  if (c.disaggregated()) t.add_row({"KV moved prefill -> decode", units::format(r.kv_transfer_bytes, Dimension::kBytes, 4)});
  t.add_row({"power (cluster, IT)", units::format(r.power_avg_w, Dimension::kPower, 4) + " (" +
                                         units::format(r.gpu_power_w, Dimension::kPower, 4) + " per serving GPU)"});
  t.add_row({"energy per output token", units::format(r.energy_per_token_j, Dimension::kEnergy, 4)});
  t.add_row({"cost", "$" + fmt_fixed(r.cost.usd_per_hour, 2) + "/h, $" + fmt_fixed(r.cost.usd_per_million_tokens, 4) +
                         " per M output tokens"});
  t.print(out);
  out << "\n" << r.iterations << " iterations, " << r.events << " events; CPU overhead "
      << units::format(c.cpu_overhead_s, Dimension::kTime, 3) << " per iteration; kernel parameters: "
      << s.calibration.kernel.source << "; collective parameters: " << s.calibration.collective.source << "\n";
}

}  // namespace exasim::cli
