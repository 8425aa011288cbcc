#pragma once
// Transparent huge pages for the engine's large arrays. With every rank simulated (16,384 GPUs)
// the tasks, edges and per-task state span gigabytes and the engine visits them in event order,
// which jumps between ranks: with 4 KiB pages nearly every access also misses the TLB. Asking
// for 2 MiB pages (where the kernel grants them on request: THP "madvise" mode, Debian's
// default) cut the Llama 3.1 405B all-ranks run on 16,384 GPUs from 86 s to 59 s (same build,
// same machine, exasim-training-bench). A hint only: results never depend on it, and it does
// nothing where the system does not support it.
#include <cstddef>
#include <vector>

namespace exasim::sim {

// Asks for huge pages over the 2 MiB-aligned part of [data, data + bytes); small ranges are left alone.
void advise_huge_pages(const void* data, std::size_t bytes);

// Reserves room for n elements and asks for huge pages over it, before anything touches it
// (the kernel backs a page when it is first written).
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace exasim::sim
