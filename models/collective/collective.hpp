#pragma once
// The collective operations and the algorithms that implement them, with their names as they
// appear in scenarios and on the command line.
#include <array>
#include <string_view>

namespace exasim::models {

// all-to-all(v) is kAllToAll; the v form carries per-pair sizes (see Schedule builders).
enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv, kReduce };
inline constexpr std::array<Collective, 7> kAllCollectives = {
    Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather, Collective::kAllToAll,
    Collective::kBroadcast, Collective::kSendRecv,      Collective::kReduce};

enum class CollectiveAlgorithm { kAuto, kRing, kHierarchical, kTree, kHalvingDoubling, kDirect, kNvls };

std::string_view collective_name(Collective c);
std::string_view algorithm_name(CollectiveAlgorithm a);
// Parse a name ("all_reduce", "ring", ...); throws exasim::ConfigError listing the choices.
Collective parse_collective(std::string_view name);
CollectiveAlgorithm parse_algorithm(std::string_view name);

// nccl-tests bus-bandwidth factor: all-reduce 2(n-1)/n, reduce-scatter, all-gather and
// all-to-all (n-1)/n, broadcast, reduce and send/recv 1.
double bus_factor(Collective op, int ranks);

// The algorithm to use per collective: kAuto lets the tuner choose by size and group shape.
struct AlgorithmChoice {
  std::array<CollectiveAlgorithm, kAllCollectives.size()> per_op{};  // all kAuto
  CollectiveAlgorithm operator[](Collective c) const { return per_op[static_cast<std::size_t>(c)]; }
  void set(Collective c, CollectiveAlgorithm a) { per_op[static_cast<std::size_t>(c)] = a; }
  void set_all(CollectiveAlgorithm a) { per_op.fill(a); }
};

}  // namespace exasim::models
