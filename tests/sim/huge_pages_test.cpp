// The huge-page hint never changes what a vector holds, whatever its size or alignment.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "sim/huge_pages.hpp"

using namespace exasim::sim;

TEST_CASE("huge pages: a hint on null, small, unaligned and large ranges leaves the data as written") {
  advise_huge_pages(nullptr, 1 << 30);  // nothing to advise
  std::vector<std::uint32_t> small;
  reserve_huge(small, 10);
  small.assign(10, 7);
  CHECK(std::accumulate(small.begin(), small.end(), 0u) == 70u);
  std::vector<std::uint32_t> large;
  reserve_huge(large, 3u << 20);  // 12 MiB: spans several 2 MiB pages, starts unaligned
  CHECK(large.capacity() >= (3u << 20));
  large.resize(3u << 20);
  std::iota(large.begin(), large.end(), 0u);
  advise_huge_pages(reinterpret_cast<const char*>(large.data()) + 1, large.size() * 4 - 1);  // odd bounds
  CHECK(large.front() == 0u);
  CHECK(large[12345] == 12345u);
  CHECK(large.back() == (3u << 20) - 1);
}
