#pragma once
// Runs independent jobs (sweep points, simulations of a plan search) serially, or split over
// MPI ranks when exasim was built with MPI and launched by mpirun. Every rank receives every
// result in job order, so all ranks finish identically; only the root prints and writes files.
// Results travel as strings (JSON text), so a serial run and an MPI run give the same bytes.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace exasim::cli {

class PointExecutor {
 public:
  virtual ~PointExecutor() = default;
  // job(i) for i in [0, n); results in index order. A job's exception stops the run on every
  // rank and is thrown again (as exasim::Error) by map().
  virtual std::vector<std::string> map(std::size_t n, const std::function<std::string(std::size_t)>& job) = 0;
  virtual bool is_root() const = 0;
  virtual int ranks() const = 0;
};

// MPI when launched by mpirun (OMPI_COMM_WORLD_SIZE / PMI_SIZE set) and built with MPI, else
// serial. Throws ConfigError when mpirun started several ranks of a build without MPI.
std::unique_ptr<PointExecutor> make_point_executor();

}  // namespace exasim::cli
