#include "models/collective/collective.hpp"

#include <string>

#include "hw/error.hpp"

namespace exasim::models {

namespace {

constexpr std::array<std::string_view, 7> kCollectiveNames = {"all_reduce", "reduce_scatter", "all_gather", "all_to_all",
                                                              "broadcast",  "send_recv",      "reduce"};
constexpr std::array<std::string_view, 7> kAlgorithmNames = {"auto",   "ring",   "hierarchical", "tree",
                                                             "halving_doubling", "direct", "nvls"};

template <std::size_t N>
std::string choices(const std::array<std::string_view, N>& names) {
  std::string s;
  for (std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace

std::string_view collective_name(Collective c) { return kCollectiveNames[static_cast<std::size_t>(c)]; }
std::string_view algorithm_name(CollectiveAlgorithm a) { return kAlgorithmNames[static_cast<std::size_t>(a)]; }

Collective parse_collective(std::string_view name) {
  for (std::size_t i = 0; i < kCollectiveNames.size(); ++i)
    if (kCollectiveNames[i] == name) return static_cast<Collective>(i);
  throw ConfigError("unknown collective '" + std::string(name) + "'", {}, "use one of " + choices(kCollectiveNames));
}

CollectiveAlgorithm parse_algorithm(std::string_view name) {
  for (std::size_t i = 0; i < kAlgorithmNames.size(); ++i)
    if (kAlgorithmNames[i] == name) return static_cast<CollectiveAlgorithm>(i);
  throw ConfigError("unknown collective algorithm '" + std::string(name) + "'", {},
                    "use one of " + choices(kAlgorithmNames));
}

double bus_factor(Collective op, int ranks) {
  const double n = ranks;
  switch (op) {
    case Collective::kAllReduce: return 2 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv: return 1;
  }
  return 1;
}

}  // namespace exasim::models
