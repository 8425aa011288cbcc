#include "workloads/serving/serving_report.hpp"

#include <cstdio>

namespace exasim::workloads::serving {

namespace {

nlohmann::json pools_json(const ServingResult& r) {
  nlohmann::json pools = nlohmann::json::array();
  for (const PoolResult& p : r.pools) {
    pools.push_back({{"role", pool_role_name(p.role)},
                     {"replicas", p.replicas},
                     {"parallelism", {{"tp", p.parallelism.tp}, {"pp", p.parallelism.pp}, {"ep", p.parallelism.ep}}},
                     {"gpu", p.gpu},
                     {"weights_per_gpu_bytes", p.memory.weights_bytes},
                     {"workspace_per_gpu_bytes", p.memory.workspace_bytes},
                     {"kv_cache_per_gpu_bytes", p.memory.kv_bytes},
                     {"kv_cache_tokens_per_replica", p.memory.kv_tokens()},
                     {"busy_fraction", p.busy_fraction},
                     {"iterations", p.iterations},
                     {"mean_decode_batch", p.mean_decode_batch},
                     {"busy_time_split",
                      {{"linear", p.linear_fraction}, {"attention", p.attention_fraction}, {"cpu", p.cpu_fraction}}}});
  }
  return pools;
}

}  // namespace

nlohmann::json latency_json(const LatencySummary& s) {
  return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}};
}

nlohmann::json serving_result_json(const Scenario& s, const ServingResult& r, const std::string& workload) {
  const ServingConfig& c = *s.serving_config;
  return {{"scenario", s.name},
          {"kind", "serving"},
          {"model", s.model.name},
          {"gpu", s.cluster.gpu.name},
          {"gpus", s.cluster.gpu_count()},
          {"serving",
           {{"pools", pools_json(r)},
            {"scheduler", c.scheduler},
            {"router", c.router},
            {"precision", dtype_name(c.precision)},
            {"kv_cache_dtype", dtype_name(c.kv_dtype)},
            {"max_batch_tokens", c.max_batch_tokens},
            {"max_num_seqs", c.max_num_seqs},
            {"chunked_prefill", c.chunked_prefill},
            {"prefix_caching", c.prefix_caching},
            {"cpu_overhead_s", c.cpu_overhead_s},
            {"decode_attention", c.decode_attention_matrix ? "matrix" : "vector"},
            {"sliding_window_kv", c.sliding_window_kv_window ? "window" : "full"},
            {"moe_all_to_all", moe_all_to_all_name(c.moe_all_to_all)},
            {"workload", workload}}},
          {"requests_completed", r.completed},
          {"requests_rejected", r.rejected},
          {"duration_s", r.duration_s},
          {"throughput_tokens_per_s", r.output_tokens_per_s},
          {"input_tokens_per_s", r.input_tokens_per_s},
          {"requests_per_s", r.requests_per_s},
          {"ttft_s", latency_json(r.ttft)},
          {"tpot_s", latency_json(r.tpot)},
          {"itl_s", latency_json(r.itl)},
          {"e2e_s", latency_json(r.e2e)},
          {"queueing_delay_s", latency_json(r.queueing)},
          {"slo", {{"ttft_s", c.slo.ttft_s}, {"tpot_s", c.slo.tpot_s}, {"attainment_target", c.slo.attainment}}},
          {"slo_attainment", r.slo_attainment},
          {"goodput_requests_per_s", r.goodput_requests_per_s},
          {"kv_cache", {{"peak_utilization", r.kv_peak_utilization}, {"mean_utilization", r.kv_mean_utilization}}},
          {"preemptions", r.preemptions},
          {"prefix_cache", {{"hit_rate", r.prefix_hit_rate}}},
          {"kv_transfer_bytes", r.kv_transfer_bytes},
          {"power", {{"avg_w", r.power_avg_w}, {"per_gpu_w", r.gpu_power_w}}},
          {"energy", {{"total_j", r.energy_j}, {"per_token_j", r.energy_per_token_j}}},
          {"cost", {{"usd_per_hour", r.cost.usd_per_hour}, {"usd_per_million_tokens", r.cost.usd_per_million_tokens}}},
          {"simulation",
           {{"fidelity", s.simulation.fidelity}, {"seed", s.simulation.seed}, {"iterations", r.iterations},
            {"events", r.events}, {"kernel_parameters", s.calibration.kernel.source},
            {"collective_parameters", s.calibration.collective.source}}}};
}

void write_request_csv_header(std::ostream& out) {
  out << "id,arrival_s,prompt_tokens,output_tokens,replica,prefill_replica,queueing_s,ttft_s,tpot_s,e2e_s,finish_s,"
         "preemptions,prefix_hit_tokens,kv_transfer_bytes,slo_met\n";
}

void write_request_csv_row(std::ostream& out, const RequestRecord& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%llu,%.9g,%lld,%lld,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%d,%lld,%.9g,%d\n",
                static_cast<unsigned long long>(r.id), r.arrival_s, static_cast<long long>(r.prompt_tokens),
                static_cast<long long>(r.output_tokens), r.replica, r.prefill_replica, r.queueing_s, r.ttft_s, r.tpot_s,
                r.e2e_s, r.finish_s, r.preemptions, static_cast<long long>(r.prefix_hit_tokens), r.kv_transfer_bytes,
                r.slo_met ? 1 : 0);
  out << buf;
}

}  // namespace exasim::workloads::serving
