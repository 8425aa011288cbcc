#pragma once
// A measurement profile: what exasim-bench (hw/bench/) measured on a machine, as one JSON file
// that `exasim calibrate` fits model parameters to. Schema version 1:
// {
//   "schema_version": 1, "tool": "exasim-bench 0.1.0", "date": "2026-12-02T15:00:00Z",
//   "host":    {"hostname": "...", "cpu_model": "...", "cores": 2, "threads": 2, "l1d_bytes": ..., "l2_bytes": ...,
//               "l3_bytes": ..., "memory_bytes": ...},
//   "devices": [{"index": 0, "kind": "cpu" | "gpu", "name": "...", "compute_units": ..., "clock_hz": ...,
//               "memory_bytes": ..., "l2_bytes": ..., "extra": {...}}],
//   "measurements": [{"suite": "gemm", "op": "gemm", "device": 0, "dtype": "fp32",
//                     "shape": {"m": 1024, "n": 1024, "k": 1024, "batch": 1}, "threads": 2,
//                     "working_set_bytes": 0, "flops": 2.1e9, "bytes": 1.2e7, "repeats": 20,
//                     "time_s": {"min": ..., "median": ..., "max": ...}}],
//   "notes": ["no CUDA GPU visible: GPU suites skipped"]            (optional)
// }
// time_s is seconds per call (per access for latency), from `repeats` samples; exasim-bench times
// work on one thread by that thread's CPU clock (time other processes held the core is left out)
// and everything else by the wall clock. Suites and ops: gemm/gemm; stream/{copy,scale,add,triad}; latency/pointer_chase (time per
// access); memcpy/{host,h2d,d2h,d2d}; launch/empty_kernel; collective/{all_reduce,...} with
// shape.ranks and bytes.
#include <map>
#include <string>
#include <vector>

namespace exasim::hw {

struct ProfileDevice {
  int index = 0;
  std::string kind;  // cpu | gpu
  std::string name;
  double compute_units = 0;  // cores or SMs
  double clock_hz = 0;
  double memory_bytes = 0;
  double l2_bytes = 0;
  std::map<std::string, double> extra;
};

struct TimeStats {
  double min = 0, median = 0, max = 0;
};

struct Measurement {
  std::string suite;
  std::string op;
  int device = 0;
  std::string dtype;
  std::map<std::string, double> shape;  // m, n, k, batch, ranks, ...
  int threads = 0;
  double working_set_bytes = 0;
  double flops = 0;
  double bytes = 0;
  int repeats = 0;
  TimeStats time_s;
  // What the library chose, where the runner can ask it (optional): for cuBLASLt GEMMs tile_id,
  // tile_m, tile_n (the output tile, hw/profile/cublaslt_tiles.hpp) and split_k.
  std::map<std::string, double> library;
};

struct Profile {
  int schema_version = 1;
  std::string tool;
  std::string date;
  std::map<std::string, std::string> host_text;  // hostname, cpu_model
  std::map<std::string, double> host;            // cores, threads, cache and memory sizes
  std::vector<ProfileDevice> devices;
  std::vector<Measurement> measurements;
  std::vector<std::string> notes;  // optional: what the runner could not measure, and why
};

// Throws IoError (missing file) or ConfigError naming the file, the JSON path of the bad field
// (e.g. "measurements[12].time_s.median") and what was expected.
Profile read_profile(const std::string& path);
void write_profile(const Profile& p, const std::string& path);
// The same from and to JSON text; `name` stands in for the file name in errors.
Profile parse_profile(const std::string& text, const std::string& name);
std::string profile_to_json(const Profile& p);

}  // namespace exasim::hw
