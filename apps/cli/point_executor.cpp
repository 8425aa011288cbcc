#include "apps/cli/point_executor.hpp"

#include <cstdlib>

#include "hw/error.hpp"

namespace exasim::cli {

#ifdef EXASIM_HAVE_MPI
std::unique_ptr<PointExecutor> make_mpi_executor();  // mpi_executor.cpp
#endif

namespace {

class SerialExecutor final : public PointExecutor {
 public:
  std::vector<std::string> map(std::size_t n, const std::function<std::string(std::size_t)>& job) override {
    std::vector<std::string> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(job(i));
    return out;
  }
  bool is_root() const override { return true; }
  int ranks() const override { return 1; }
};

// Ranks mpirun started, from the launcher's environment (OpenMPI, then PMI-based launchers).
int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 0;
}

}  // namespace

std::unique_ptr<PointExecutor> make_point_executor() {
  const int ranks = launched_ranks();
  if (ranks >= 1) {
#ifdef EXASIM_HAVE_MPI
    return make_mpi_executor();
#else
    if (ranks > 1)
      throw ConfigError("this exasim was built without MPI but mpirun started " + std::to_string(ranks) + " ranks",
                        {"<command line>", 0, "mpirun"}, "install libopenmpi-dev and rebuild, or run without mpirun");
#endif
  }
  return std::make_unique<SerialExecutor>();
}

}  // namespace exasim::cli
