// `exasim collective --cluster C --op OP --bytes B --ranks R`: one collective's predicted time,
// algorithm and nccl-tests bandwidths, on either network backend.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <set>
#include <string>

#include "apps/cli/cluster_source.hpp"
#include "hw/config/json_text.hpp"
#include "apps/cli/commands.hpp"
#include "apps/cli/table.hpp"
#include "hw/error.hpp"
#include "hw/units.hpp"
#include "models/calibration/calibration_file.hpp"
#include "models/calibration/default_calibration.hpp"
#include "models/collective/custom_all_reduce.hpp"
#include "models/collective/expert_all_to_all.hpp"
#include "models/collective/algorithm.hpp"
#include "sim/net/analytical_network.hpp"
#include "sim/net/group_placement.hpp"
#include "sim/net/network_registry.hpp"

namespace exasim::cli {

namespace {

struct CollectiveOptions {
  std::string cluster;
  std::string op = "all_reduce";
  std::string bytes;
  int ranks = 0;
  int nodes = 0;
  std::string layout = "packed";
  std::string algorithm = "auto";
  std::string fidelity = "analytical";
  std::string flow_model = "LV08";
  std::string calibration;  // a calibration YAML whose collective section applies (empty: none)
  std::string kernel = "nccl";  // nccl; engine: a serving engine's own all-reduce where faster; deepep-normal | deepep-ll
  // An MoE layer's exchange (--kernel deepep-*): tokens a rank routes, row width, routing, SMs.
  double tokens = 0;
  int hidden = 0, topk = 0, experts = 0, sms = models::kDeepEpDefaultSms;
  std::string dispatch_dtype;          // empty: the kernel's measured default (DeepEP fp8, NVLink bf16)
  std::string combine_dtype = "bf16";
  bool json = false;
};

std::string help_footer() {
  std::string s = "\nAlgorithms (--algorithm; auto picks the fastest by size and group shape):\n";
  for (const auto& a : models::algorithm_table())
    s += "  " + std::string(models::algorithm_name(a.id)) + ": " + std::string(a.help) + "\n";
  s += "Fidelities (--fidelity):\n";
  for (const auto& b : sim::network_backend_table()) s += "  " + std::string(b.name) + ": " + std::string(b.help) + "\n";
  s += "Group layouts (--group-layout): packed | spread | NxK (e.g. 2x4) | explicit ranks 0,8,16,24\n";
  return s;
}

// Nodes of a catalog node to build when --nodes is not given: enough for the layout.
int nodes_for(const CollectiveOptions& o, const hw::Catalog& catalog) {
  if (o.nodes > 0 || !catalog.contains(hw::CatalogKind::kNode, o.cluster)) return o.nodes;
  const int g = catalog.node(config::load_string(o.cluster, "<command line>")).gpus_per_node;
  if (const auto x = o.layout.find('x'); x != std::string::npos && o.layout.find(',') == std::string::npos)
    return std::max(1, std::atoi(o.layout.substr(0, x).c_str()));
  if (o.layout == "spread") return o.ranks;
  return (o.ranks + g - 1) / g;
}

double parse_bytes(const std::string& text) {
  std::string why;
  const auto v = units::parse(text, units::Dimension::kBytes, &why);
  if (v && *v < 0) why = "a size cannot be negative";
  if (!v || *v < 0) throw ConfigError("--bytes '" + text + "': " + why, {"<command line>", 0, "--bytes"}, "e.g. --bytes 64MiB");
  return *v;
}

// --kernel deepep-normal | deepep-ll | nvlink-two-sided | nvlink-one-sided: one MoE layer's
// dispatch and combine on each rank of an expert-parallel group inside one NVLink domain
// (models/collective/expert_all_to_all.hpp).
int run_expert_all_to_all(const CollectiveOptions& o, const ClusterSource& src, const std::string& parameters,
                          models::ExpertAllToAllKernel kernel) {
  const SourceLocation cli{"<command line>", 0, "--kernel"};
  if (models::parse_collective(o.op) != models::Collective::kAllToAll)
    throw ConfigError("--kernel " + o.kernel + " is an all-to-all", cli, "use --op all_to_all");
  auto need = [](double v, const char* flag, const char* example) {
    if (!(v > 0)) throw ConfigError(std::string(flag) + " is required with an MoE all-to-all kernel", {"<command line>", 0, flag}, example);
  };
  need(o.tokens, "--tokens", "tokens each rank routes, e.g. --tokens 4096");
  need(o.hidden, "--hidden", "the model's hidden size, e.g. --hidden 7168");
  need(o.topk, "--topk", "experts per token, e.g. --topk 8");
  need(o.experts, "--experts", "routed experts of the layer, e.g. --experts 256");
  if (o.ranks < 2 || o.ranks > src.cluster.gpus_per_node)
    throw ConfigError("the " + o.kernel + " kernels join 2 to " + std::to_string(src.cluster.gpus_per_node) +
                          " GPUs of one NVLink domain here, not " + std::to_string(o.ranks),
                      {"<command line>", 0, "--ranks"}, "internode (RDMA) expert all-to-all is not modelled");
  if (o.topk > o.experts || o.experts % o.ranks != 0)
    throw ConfigError("--experts " + std::to_string(o.experts) + " must be a multiple of --ranks " + std::to_string(o.ranks) +
                          " and at least --topk " + std::to_string(o.topk),
                      {"<command line>", 0, "--experts"}, "each GPU holds experts / ranks experts");
  if (kernel == models::ExpertAllToAllKernel::kDeepEpNormal && (o.sms < 1 || o.sms > src.cluster.gpu.sm_count))
    throw ConfigError("--sms " + std::to_string(o.sms) + " is outside the GPU's 1 to " + std::to_string(src.cluster.gpu.sm_count),
                      {"<command line>", 0, "--sms"}, "SMs the normal kernel runs on (DeepEP's default 20)");
  const bool deepep = models::is_deepep(kernel);
  const std::string dispatch_name = o.dispatch_dtype.empty() ? (deepep ? "fp8" : "bf16") : o.dispatch_dtype;
  const auto dispatch_format = models::parse_expert_payload(dispatch_name);
  const auto combine_format = models::parse_expert_payload(o.combine_dtype);
  if (!dispatch_format || !combine_format || *combine_format == models::ExpertPayload::kFp8)
    throw ConfigError("formats: --dispatch-dtype bf16 | fp8 | nvfp4, --combine-dtype bf16 | nvfp4",
                      {"<command line>", 0, dispatch_format ? "--combine-dtype" : "--dispatch-dtype"}, "e.g. --dispatch-dtype fp8");
  std::vector<models::ExpertAllToAllKey> keys;
  if (kernel == models::ExpertAllToAllKernel::kNvlinkTwoSided)
    keys.push_back({kernel, models::ExpertAllToAllPhase::kPrepare, models::ExpertPayload::kBf16});
  keys.push_back({kernel, models::ExpertAllToAllPhase::kDispatch, *dispatch_format});
  keys.push_back({kernel, models::ExpertAllToAllPhase::kCombine, *combine_format});
  const models::ExpertExchange x{o.tokens, o.hidden, o.topk, o.experts, o.ranks, o.sms};
  struct Phase { models::ExpertAllToAllKey key; double time_s, bytes; };
  std::vector<Phase> phases;
  for (const models::ExpertAllToAllKey& key : keys) {
    const auto c = src.collective.expert_all_to_all.find(key);
    if (c == src.collective.expert_all_to_all.end())
      throw ConfigError("the collective parameters (" + parameters + ") have no " + models::expert_all_to_all_key_name(key), cli,
                        "measured: DeepEP (fp8 dispatch, bf16 combine) on the DGX H100 / H200 / B200 and GB200 files, the "
                        "NVLink kernels on gb200-nvl72's; fit one with exasim calibrate --format aic-nccl");
    phases.push_back({key, models::expert_all_to_all_time(key, x, src.cluster.gpu.sm_count, c->second),
                      models::expert_all_to_all_terms(key, x, src.cluster.gpu.sm_count).link_bytes});
  }
  const int senders = models::expert_all_to_all_senders(kernel, x, src.cluster.gpu.sm_count);
  const double copies = models::expert_all_to_all_copies(kernel, x);
  const std::string sender_kind = deepep ? "SMs" : "peers";
  if (o.json) {
    nlohmann::json j = {{"op", o.op}, {"kernel", o.kernel}, {"ranks", o.ranks}, {"tokens", o.tokens}, {"hidden", o.hidden},
                        {"topk", o.topk}, {"experts", o.experts}, {"senders", senders}, {"copies", copies},
                        {"collective_parameters", parameters}};
    double total = 0;
    for (const Phase& f : phases) {
      j[std::string(models::expert_all_to_all_phase_name(f.key.phase))] = {
          {"time_s", f.time_s}, {"bytes", f.bytes}, {"format", std::string(models::expert_payload_name(f.key.payload))}};
      total += f.time_s;
    }
    j["time_s"] = total;
    std::cout << config::to_json_text(j, 2) << "\n";
    return 0;
  }
  Table t({"", ""});
  t.add_row({"cluster", src.name + " (" + src.cluster.gpu.name + ")"});
  t.add_row({"op", "MoE dispatch and combine, " + o.kernel + ", " + std::to_string(o.ranks) + " ranks"});
  t.add_row({"layer", fmt_fixed(o.tokens, 0) + " tokens a rank, hidden " + std::to_string(o.hidden) + ", top-" +
                          std::to_string(o.topk) + " of " + std::to_string(o.experts) + " experts"});
  t.add_row({"senders", std::to_string(senders) + " " + sender_kind});
  t.add_row({"copies a rank sends", fmt_fixed(copies, 1)});
  t.add_row({"parameters", parameters});
  for (const Phase& f : phases)
    t.add_row({std::string(models::expert_all_to_all_phase_name(f.key.phase)),
               units::format(f.time_s, units::Dimension::kTime, 4) +
                   (f.bytes > 0 ? " (" + units::format(f.bytes, units::Dimension::kBytes, 4) + " of " +
                                      std::string(models::expert_payload_name(f.key.payload)) + " out, " +
                                      units::format(f.bytes / f.time_s, units::Dimension::kBandwidth, 4) + ")"
                                : std::string())});
  t.print(std::cout);
  return 0;
}

int run_collective(const Context& ctx, const CollectiveOptions& o) {
  const hw::Catalog catalog = hw::Catalog::load(ctx.configs_dir);
  ClusterSource src = load_cluster_source(o.cluster, nodes_for(o, catalog), catalog);
  // Where the collective parameters come from: the file given, over the cluster's own.
  // A catalog node runs on its own calibration (configs/calibration/defaults.yaml) unless a file
  // or "none" (the catalog defaults) is given; a cluster file on its calibration: key.
  std::string parameters = src.collective_source;
  const bool catalog_node = !std::filesystem::exists(o.cluster) && catalog.contains(hw::CatalogKind::kNode, o.cluster);
  const std::string file = models::calibration_file_for(o.calibration, ctx.configs_dir, models::CalibrationFor::kNode,
                                                        catalog_node ? o.cluster : std::string());
  if (!file.empty()) {
    models::Calibration cal;
    cal.collective = src.collective;
    src.collective = models::load_calibration(cal, file).collective;
    parameters = file;
  }
  if (const auto expert = models::parse_expert_all_to_all_kernel(o.kernel))
    return run_expert_all_to_all(o, src, parameters, *expert);
  if (o.bytes.empty())
    throw ConfigError("--bytes is required", {"<command line>", 0, "--bytes"}, "e.g. --bytes 64MiB");
  sim::CommOp op;
  const models::Collective kind = models::parse_collective(o.op);
  op.kind = static_cast<sim::CommKind>(kind);
  op.bytes = parse_bytes(o.bytes);
  op.ranks = sim::place_group(o.layout, o.ranks, src.cluster);
  sim::NetworkOptions options;
  options.backend = o.fidelity;
  options.flow_model = o.flow_model;
  const models::CollectiveAlgorithm algorithm = models::parse_algorithm(o.algorithm);
  options.algorithms.set(kind, algorithm);
  sim::AnalyticalNetwork analytical(src.cluster, src.collective, options);
  if (algorithm != models::CollectiveAlgorithm::kAuto) analytical.planner().plan(op, algorithm);  // throws if it cannot run
  const sim::PlanChoice choice = analytical.planner().choose(op);
  const sim::PlannedOp& plan = *choice.plan;
  const auto backend = sim::make_network_backend(src.cluster, src.collective, options);
  models::CollectiveCost cost = sim::cost_of(choice, op, backend->duration(op, 0));
  std::string algo(models::algorithm_name(plan.empty() ? models::CollectiveAlgorithm::kAuto : cost.algorithm));
  std::string protocol(models::protocol_name(choice.protocol));
  if (o.kernel == "engine") {  // the serving engine's all-reduce (custom_all_reduce.hpp), or NCCL where faster
    if (kind != models::Collective::kAllReduce)
      throw ConfigError("--kernel engine is an all-reduce", {"<command line>", 0, "--kernel"}, "use --op all_reduce, or --kernel nccl");
    std::set<int> nodes;
    for (std::uint32_t r : op.ranks) nodes.insert(src.cluster.node_of(static_cast<int>(r)));
    if (nodes.size() > 1)
      throw ConfigError("the engine's all-reduce joins GPUs of one node; this group spans " + std::to_string(nodes.size()),
                        {"<command line>", 0, "--kernel"}, "give at most " + std::to_string(src.cluster.gpus_per_node) + " packed ranks");
    if (!(src.collective.custom_all_reduce_efficiency > 0))
      throw ConfigError("the collective parameters (" + parameters + ") have no engine all-reduce",
                        {"<command line>", 0, "--kernel"},
                        "give a calibration fitted with custom_allreduce_perf.csv (custom_all_reduce_efficiency)");
    const double t = models::engine_all_reduce_time(cost.time_s, op.bytes, static_cast<int>(op.ranks.size()),
                                                    src.cluster.intra.bandwidth, src.collective);
    if (t < cost.time_s) {  // the engine's own kernel
      cost.time_s = t;
      cost.algorithm_bandwidth = op.bytes / t;
      cost.bus_bandwidth = cost.algorithm_bandwidth * models::bus_factor(kind, static_cast<int>(op.ranks.size()));
      algo = "engine all-reduce", protocol = "-";
    }
  }
  if (o.json) {
    const nlohmann::json j = {{"time_s", cost.time_s},           {"algorithm", algo},
                              {"bus_bandwidth", cost.bus_bandwidth}, {"algorithm_bandwidth", cost.algorithm_bandwidth},
                              {"op", o.op},                        {"bytes", op.bytes},
                              {"ranks", op.ranks.size()},          {"fidelity", o.fidelity},
                              {"flows", plan.flows},                {"protocol", protocol},
                              {"kernel", o.kernel},                 {"collective_parameters", parameters}};
    std::cout << config::to_json_text(j, 2) << "\n";
    return 0;
  }
  Table t({"", ""});
  auto bw = [](double b) { return units::format(b, units::Dimension::kBandwidth, 4); };
  t.add_row({"cluster", src.name + " (" + std::to_string(src.cluster.nodes) + " x " +
                            std::to_string(src.cluster.gpus_per_node) + " GPUs)"});
  t.add_row({"op", o.op + ", " + units::format(op.bytes, units::Dimension::kBytes, 4) + " over " +
                       std::to_string(op.ranks.size()) + " ranks (" + o.layout + ")"});
  t.add_row({"fidelity", o.fidelity});
  t.add_row({"parameters", parameters});
  t.add_row({"algorithm", algo + " (" + protocol + " protocol)"});
  t.add_row({"time", units::format(cost.time_s, units::Dimension::kTime, 4)});
  t.add_row({"algorithm bandwidth", bw(cost.algorithm_bandwidth)});
  t.add_row({"bus bandwidth", bw(cost.bus_bandwidth)});
  t.add_row({"flows", std::to_string(plan.flows)});
  t.print(std::cout);
  return 0;
}

}  // namespace

void add_collective_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CollectiveOptions>();
  CLI::App* cmd = app.add_subcommand("collective", "one collective's predicted time, algorithm and bandwidths");
  cmd->footer(help_footer());
  cmd->add_option("--cluster", o->cluster, "catalog node (e.g. dgx-a100) or a scenario/cluster YAML file")->required();
  cmd->add_option("--op", o->op, "all_reduce | reduce_scatter | all_gather | all_to_all | broadcast | reduce | send_recv");
  cmd->add_option("--bytes", o->bytes, "buffer size, e.g. 64MiB (all-reduce buffer, gathered size, per-rank a2a buffer)");
  cmd->add_option("--ranks", o->ranks, "ranks in the group")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--nodes", o->nodes, "nodes of a catalog node to build (default: enough for the group)");
  cmd->add_option("--group-layout", o->layout, "packed | spread | NxK | r0,r1,...");
  cmd->add_option("--algorithm", o->algorithm, "auto | ring | tree | halving_doubling | direct | hierarchical | nvls");
  cmd->add_option("--fidelity", o->fidelity, "analytical | flow");
  cmd->add_option("--calibration", o->calibration,
                  "calibration YAML whose collective section applies over the cluster's, or none for the catalog "
                  "defaults (default: a catalog node's own, configs/calibration/defaults.yaml)");
  cmd->add_option("--flow-model", o->flow_model, "LV08 | CM02 (flow fidelity)");
  cmd->add_option("--kernel", o->kernel,
                  "nccl; engine: a serving engine's own all-reduce (TensorRT-LLM/vLLM custom all-reduce) where "
                  "it is faster than NCCL, as the engine chooses (one node; needs custom_all_reduce_* parameters); "
                  "deepep-normal | deepep-ll | nvlink-two-sided | nvlink-one-sided: DeepEP's or TensorRT-LLM's MoE dispatch "
                  "and combine (--op all_to_all, one NVLink domain; with --tokens --hidden --topk --experts)")
      ->check(CLI::IsMember({"nccl", "engine", "deepep-normal", "deepep-ll", "nvlink-two-sided", "nvlink-one-sided"}));
  cmd->add_option("--dispatch-dtype", o->dispatch_dtype, "MoE kernels: rows dispatch moves, bf16 | fp8 | nvfp4 (default: DeepEP fp8, NVLink bf16)");
  cmd->add_option("--combine-dtype", o->combine_dtype, "MoE kernels: rows combine moves, bf16 | nvfp4 (default bf16)");
  cmd->add_option("--tokens", o->tokens, "MoE kernels: tokens each rank routes")->check(CLI::PositiveNumber);
  cmd->add_option("--hidden", o->hidden, "MoE kernels: the model's hidden size (elements of a token's row)")->check(CLI::PositiveNumber);
  cmd->add_option("--topk", o->topk, "MoE kernels: experts each token is routed to")->check(CLI::PositiveNumber);
  cmd->add_option("--experts", o->experts, "MoE kernels: routed experts of the layer, spread over the ranks")->check(CLI::PositiveNumber);
  cmd->add_option("--sms", o->sms, "deepep-normal: SMs the kernel runs on (default 20)")->check(CLI::PositiveNumber);
  cmd->add_flag("--json", o->json, "print JSON (SI units)");
  cmd->callback([o, &ctx] { ctx.handler = [o, &ctx] { return run_collective(ctx, *o); }; });
}

}  // namespace exasim::cli
