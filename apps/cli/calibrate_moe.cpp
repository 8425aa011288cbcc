#include "apps/cli/calibrate_moe.hpp"

#include <fstream>

#include "hw/error.hpp"
#include "models/calibration/aic_moe_table.hpp"
#include "models/kernel/moe_experts_model.hpp"

namespace exasim::cli {

std::vector<models::KernelSample> read_moe_table(const std::string& in, std::ostream& out) {
  models::AicMoeTable t = models::read_aic_moe_table(in);
  out << "exasim: " << t.samples.size() << " MoE calls read from " << in;
  for (const auto& [what, rows] : t.left_out) out << "; " << rows << " rows of " << what << " left out";
  out << "\n";
  const models::MoeRowsDropped dropped = models::drop_moe_rows_slower_than_more_work(t.samples);
  if (dropped.than_more_tokens + dropped.than_half_ranks > 0)
    out << "exasim: balanced MoE calls left out, slower than a measurement of more work: " << dropped.than_more_tokens
        << " than the same layer at more tokens, " << dropped.than_half_ranks
        << " (whole configurations) than over half as many ranks\n";
  return t.samples;
}

void report_moe_faster_than_hbm(const models::FasterThanHbm& dropped, const std::string& gpu, std::ostream& out) {
  if (dropped.moe)
    out << "exasim: " << dropped.moe << " MoE calls left out: they read their experts' weights faster than " << gpu
        << "'s HBM peak, so the table's replays found them in L2\n";
}

void write_moe_residuals(const std::string& path, const hw::GpuSpec& gpu, const models::KernelParams& p,
                         const std::vector<models::KernelSample>& samples) {
  std::ofstream f(path);
  if (!f) throw IoError("cannot write the residuals", {path, 0, ""}, "check the folder exists and is writable");
  f << "op,line,tokens,hidden,expert_ffn,top_k,experts,active_experts,routed_tokens,measured_us,predicted_us,error,"
       "route_us,permute_us,up_us,act_us,down_us,finalize_us\n";
  f.precision(6);
  for (const models::KernelSample& s : samples) {
    const double t = models::predict_sample(gpu, p, s);
    // The parts at the clocks predict_sample priced the sample at.
    const models::KernelParams q = models::params_at(p, s.clocks);
    const models::MoeExpertsCost c = models::moe_experts_time(gpu, q, {"moe", s.dtype, s.recipe, s.cast}, s.moe);
    const models::MoeExpertsShape& m = s.moe;
    f << s.op << ',' << s.line << ',' << m.tokens << ',' << m.hidden << ',' << m.expert_ffn << ',' << m.top_k << ','
      << m.experts << ',' << m.load.active_experts << ',' << m.load.routed_tokens << ',' << s.time_s * 1e6 << ','
      << t * 1e6 << ',' << t / s.time_s - 1;
    for (const models::KernelCost* k : {&c.route, &c.permute, &c.up, &c.act, &c.down, &c.finalize}) f << ',' << k->time_s * 1e6;
    f << '\n';
  }
}

}  // namespace exasim::cli
