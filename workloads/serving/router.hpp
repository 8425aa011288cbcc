#pragma once
// Routers: which replica of a pool gets a request. A name -> factory table (`serving.router`):
//   round-robin        replicas in turn
//   random             uniformly at random (seeded: same seed, same choices)
//   least-outstanding  the replica with the fewest requests in it (waiting, running or moving)
//   prefix-affinity    the replica whose prefix cache holds the longest prefix of the prompt;
//                      with no hit, the replica the prompt's first prefix block hashes to (so
//                      equal prefixes meet), and least-outstanding without prefix information
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/serving/request.hpp"

namespace exasim::workloads::serving {

struct ReplicaLoad {
  std::int64_t outstanding = 0;
  std::int64_t prefix_hit_tokens = 0;  // filled only when the router asks for it
};

class Router {
 public:
  virtual ~Router() = default;
  virtual std::size_t pick(const Request& r, const std::vector<ReplicaLoad>& replicas) = 0;
  virtual bool wants_prefix_hits() const { return false; }
};

struct RouterInfo {
  std::string name;
  std::string help;
  std::function<std::unique_ptr<Router>(std::uint64_t seed)> make;
};

const std::vector<RouterInfo>& routers();
const RouterInfo* find_router(std::string_view name);
std::string router_names();  // "round-robin | random | ..."

}  // namespace exasim::workloads::serving
