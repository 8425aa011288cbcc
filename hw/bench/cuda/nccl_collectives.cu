// NCCL collectives across every visible GPU of this process (one communicator per GPU, as
// nccl-tests runs them): all-reduce, all-gather, reduce-scatter and all-to-all (grouped send/recv)
// over message sizes. `bytes` is the per-rank buffer size, nccl-tests' "size". Built when CMake
// finds NCCL; runs when more than one GPU is visible.
#include <nccl.h>

#include <chrono>
#include <string>
#include <vector>

#include "hw/bench/cuda/cuda_suites.hpp"
#include "hw/bench/cuda/cuda_timing.hpp"

namespace exasim::bench::cuda {

namespace {

void check_nccl(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess) fail(std::string("NCCL error: ") + ncclGetErrorString(r), call, file, line);
}
#define EXASIM_NCCL_CHECK(call) check_nccl((call), #call, __FILE__, __LINE__)

struct Ranks {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<float*> send, recv;

  Ranks(int n, std::size_t bytes) : comms(n), streams(n), send(n), recv(n) {
    std::vector<int> devs(n);
    for (int i = 0; i < n; ++i) devs[i] = i;
    EXASIM_NCCL_CHECK(ncclCommInitAll(comms.data(), n, devs.data()));
    for (int i = 0; i < n; ++i) {
      EXASIM_CUDA_CHECK(cudaSetDevice(i));
      EXASIM_CUDA_CHECK(cudaStreamCreate(&streams[i]));
      EXASIM_CUDA_CHECK(cudaMalloc(&send[i], bytes));
      EXASIM_CUDA_CHECK(cudaMalloc(&recv[i], bytes));
      fill_random(send[i], bytes / sizeof(float), 100 + i, streams[i]);
    }
  }
  ~Ranks() {
    for (std::size_t i = 0; i < comms.size(); ++i) {
      cudaSetDevice(static_cast<int>(i));
      cudaFree(send[i]);
      cudaFree(recv[i]);
      cudaStreamDestroy(streams[i]);
      ncclCommDestroy(comms[i]);
    }
  }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  void sync() {
    for (std::size_t i = 0; i < streams.size(); ++i) {
      EXASIM_CUDA_CHECK(cudaSetDevice(static_cast<int>(i)));
      EXASIM_CUDA_CHECK(cudaStreamSynchronize(streams[i]));
    }
  }
};

// Enqueues one collective of `bytes` per rank on every rank.
void enqueue(Ranks& r, const std::string& op, std::size_t bytes) {
  const int n = static_cast<int>(r.comms.size());
  const std::size_t count = bytes / sizeof(float), part = count / n;
  EXASIM_NCCL_CHECK(ncclGroupStart());
  for (int i = 0; i < n; ++i) {
    if (op == "all_reduce") {
      EXASIM_NCCL_CHECK(ncclAllReduce(r.send[i], r.recv[i], count, ncclFloat, ncclSum, r.comms[i], r.streams[i]));
    } else if (op == "all_gather") {
      EXASIM_NCCL_CHECK(ncclAllGather(r.send[i], r.recv[i], part, ncclFloat, r.comms[i], r.streams[i]));
    } else if (op == "reduce_scatter") {
      EXASIM_NCCL_CHECK(ncclReduceScatter(r.send[i], r.recv[i], part, ncclFloat, ncclSum, r.comms[i], r.streams[i]));
    } else {  // all_to_all
      for (int peer = 0; peer < n; ++peer) {
        EXASIM_NCCL_CHECK(ncclSend(r.send[i] + peer * part, part, ncclFloat, peer, r.comms[i], r.streams[i]));
        EXASIM_NCCL_CHECK(ncclRecv(r.recv[i] + peer * part, part, ncclFloat, peer, r.comms[i], r.streams[i]));
      }
    }
  }
  EXASIM_NCCL_CHECK(ncclGroupEnd());
}

void run_collectives(Recorder& rec, const hw::ProfileDevice& dev) {
  if (ordinal_of(dev) != 0) return;  // one run covers all GPUs; it is recorded on the first
  int n = 0;
  EXASIM_CUDA_CHECK(cudaGetDeviceCount(&n));
  if (n < 2) {
    rec.log << "collective: one GPU visible: NCCL suites need more than one, skipped\n";
    return;
  }
  const std::vector<std::size_t> sizes = rec.options.quick
                                             ? std::vector<std::size_t>{1u << 20, 64u << 20}
                                             : std::vector<std::size_t>{8u << 10, 256u << 10, 4u << 20, 64u << 20, 1u << 30};
  Ranks ranks(n, sizes.back());
  TimingPlan wall = plan_for(rec.options.quick);
  wall.thread_clock = false;  // the host waits for the GPUs: wall time is the answer
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}) {
    for (std::size_t size : sizes) {
      // Host wall clock around launches on every GPU and their synchronization: no single
      // device's events see the others finish.
      const Timed r = time_call(
          [&] {
            enqueue(ranks, op, size);
            ranks.sync();
          },
          wall);
      hw::Measurement m;
      m.suite = "collective";
      m.op = op;
      m.device = dev.index;
      m.dtype = "fp32";
      m.shape = {{"ranks", double(n)}, {"bytes", double(size)}};
      m.bytes = double(size);
      m.repeats = r.repeats;
      m.time_s = r.per_call;
      rec.add(m);
    }
  }
}

}  // namespace

Suite collective_suite() {
  return {"collective", "gpu", "NCCL all-reduce/all-gather/reduce-scatter/all-to-all across the visible GPUs",
          run_collectives};
}

}  // namespace exasim::bench::cuda
