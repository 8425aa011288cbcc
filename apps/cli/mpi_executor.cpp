// The MPI implementation of PointExecutor (built when CMake finds MPI: EXASIM_HAVE_MPI).
// Job i runs on rank i mod size; results are all-gathered as one buffer of
// (index, length, bytes) records, so every rank holds every result in index order.
#ifdef EXASIM_HAVE_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>
#include <cstring>

#include "apps/cli/point_executor.hpp"
#include "hw/error.hpp"

namespace exasim::cli {

namespace {

constexpr char kFailure = '\x01';  // first byte of a result that carries an error message

class MpiExecutor final : public PointExecutor {
 public:
  MpiExecutor() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiExecutor() override { MPI_Finalize(); }
  MpiExecutor(const MpiExecutor&) = delete;
  MpiExecutor& operator=(const MpiExecutor&) = delete;

  bool is_root() const override { return rank_ == 0; }
  int ranks() const override { return size_; }

  std::vector<std::string> map(std::size_t n, const std::function<std::string(std::size_t)>& job) override {
    std::string mine;  // records of this rank's jobs
    for (std::size_t i = static_cast<std::size_t>(rank_); i < n; i += static_cast<std::size_t>(size_)) {
      std::string r;
      try {
        r = job(i);
      } catch (const Error& e) {
        r = kFailure + e.describe();
      } catch (const std::exception& e) {
        r = kFailure + std::string("internal: ") + e.what();
      }
      append(mine, i, r);
    }
    const std::string all = all_gather(mine);
    std::vector<std::string> out(n);
    for (std::size_t at = 0; at < all.size();) {
      std::uint64_t index = 0, length = 0;
      std::memcpy(&index, all.data() + at, 8);
      std::memcpy(&length, all.data() + at + 8, 8);
      out[index] = all.substr(at + 16, length);
      at += 16 + length;
    }
    for (const std::string& r : out)  // the first failure in job order, on every rank
      if (!r.empty() && r[0] == kFailure) throw Error(r.substr(1));
    return out;
  }

 private:
  static void append(std::string& buf, std::uint64_t index, const std::string& r) {
    const std::uint64_t length = r.size();
    buf.append(reinterpret_cast<const char*>(&index), 8);
    buf.append(reinterpret_cast<const char*>(&length), 8);
    buf += r;
  }

  std::string all_gather(const std::string& mine) const {
    const int count = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[static_cast<std::size_t>(r)] = total;
      total += counts[static_cast<std::size_t>(r)];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), count, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
    return all;
  }

  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<PointExecutor> make_mpi_executor() { return std::make_unique<MpiExecutor>(); }

}  // namespace exasim::cli
#endif  // EXASIM_HAVE_MPI
