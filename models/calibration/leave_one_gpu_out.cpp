#include "models/calibration/leave_one_gpu_out.hpp"

#include <map>
#include <memory>

#include "hw/error.hpp"
#include "models/calibration/kernel_calibration.hpp"

namespace exasim::models {

SamplePredictor multi_gpu_predictor(const std::vector<MeasuredGpu>& gpus) {
  auto by_source = std::make_shared<std::map<std::string, const hw::GpuSpec*>>();
  for (const MeasuredGpu& g : gpus)
    for (const KernelSample& s : g.gemms) (*by_source)[s.source] = &g.gpu;
  return [by_source](const KernelParams& p, const KernelSample& s) {
    return predict_sample(*by_source->at(s.source), p, s);
  };
}

std::vector<LeftOutGpu> leave_one_gpu_out(const std::vector<MeasuredGpu>& gpus, KernelParams start,
                                          const LeaveOneOutOptions& o) {
  if (gpus.size() < 2) throw ConfigError("leave-one-GPU-out needs two GPUs or more", {"", 0, ""}, "give tables of several GPUs");
  std::map<std::string, std::string> owner;
  for (const MeasuredGpu& g : gpus)
    for (const KernelSample& s : g.gemms) {
      auto [it, fresh] = owner.emplace(s.source, g.gpu.name);
      if (!fresh && it->second != g.gpu.name)
        throw ConfigError("two GPUs share the source \"" + s.source + "\"", {"", 0, ""}, "name each table's samples apart");
    }
  const SamplePredictor predict = multi_gpu_predictor(gpus);
  std::vector<LeftOutGpu> out;
  for (std::size_t left = 0; left < gpus.size(); ++left) {
    std::vector<KernelSample> train;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (i == left) continue;
      const auto subset = spread_subset(gpus[i].gemms, o.fit_gemms_per_gpu, o.seed);
      train.insert(train.end(), subset.begin(), subset.end());
    }
    KernelParams p = start;
    resolve_format_efficiencies(p);
    p.smem_operand_mma = p.stream_k = p.narrow_output_16bit = 1;  // as the per-GPU fits on these tables
    const KernelFit f = fit_kernel_params(p, gemm_parameters_for(train), train, predict, o.fit);
    LeftOutGpu r;
    r.gpu = gpus[left].gpu.name;
    r.fitted = f.params;
    r.fitted.source = "fitted on every GPU but " + r.gpu;
    r.by_time = accuracy_table(gpus[left].gemms, r.fitted, predict, BucketBy::kMeasuredTime);
    r.by_roofline = accuracy_table(gpus[left].gemms, datasheet_params(), roofline_predictor(gpus[left].gpu),
                                   BucketBy::kMeasuredTime);
    r.mean_abs_error = mean_abs_error(r.fitted, gpus[left].gemms, predict);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace exasim::models
