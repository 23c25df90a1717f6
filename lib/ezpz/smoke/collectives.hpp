#pragma once
// The collective-performance part of `ezpz test`: which message sizes the
// sweep covers, how many times each is timed, and what the times mean as
// bandwidth, the way nccl-tests defines it (doc/PERFORMANCE.md in
// NVIDIA/nccl-tests; oneCCL's benchmark uses the same factors):
//
//   algbw = S / t                      S: the size of the whole array, bytes
//   busbw = algbw x 2(n-1)/n           all-reduce
//   busbw = algbw x (n-1)/n            all-gather (S = every rank's part, n x sendcount)
//
// Bus bandwidth is comparable with the hardware's link speed whatever the
// number of ranks n. Pure: the trainer times the collectives (apps/smoke).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ezpz::report {

enum class Collective { all_reduce, all_gather };

// "all_reduce", "all_gather": the names in summary.json and the report.
const char* collective_name(Collective c);

// nccl-tests' correction from algorithm to bus bandwidth (0 for one rank:
// nothing crosses a link).
double bus_factor(Collective c, int ranks);

// float32 elements each rank contributes for an operation of about `bytes`
// (all-gather: each rank's share of the array), at least 1.
std::int64_t elements_per_rank(Collective c, std::size_t bytes, int ranks);

// The array size S those elements make, in bytes.
std::size_t array_bytes(Collective c, std::int64_t elements, int ranks);

// Sizes swept: powers of 4 from 1 KiB up to `max_bytes` (at least 1 KiB).
std::vector<std::size_t> sweep_sizes(std::size_t max_bytes);

// Timed operations at `bytes` (after one untimed): many for small messages,
// where the time is mostly latency and noisy, few for large ones, so that
// each size takes tens of milliseconds over Gloo on a laptop.
int sweep_iterations(std::size_t bytes);

// One measured size: the mean time of one operation (the slowest rank's).
struct BandwidthRow {
  Collective collective = Collective::all_reduce;
  std::size_t bytes = 0;  // S
  double time_s = 0;
  int ranks = 1;
  double algbw_gbs() const;  // GB/s, 1e9 bytes
  double busbw_gbs() const;
};

// "1 KiB", "256 KiB", "4 MiB".
std::string size_label(std::size_t bytes);

// A Markdown table: collective | size | time (us) | algbw | busbw.
std::string bandwidth_table(const std::vector<BandwidthRow>& rows);

// A text plot of bus bandwidth by size, one bar per row, grouped by collective.
std::string bandwidth_plot(const std::vector<BandwidthRow>& rows, int width = 50);

// The latency (time at the smallest size, us) and peak bus bandwidth of `c`.
struct CollectiveHeadline {
  double latency_us = 0;
  double peak_busbw_gbs = 0;
};
CollectiveHeadline headline(const std::vector<BandwidthRow>& rows, Collective c);

}  // namespace ezpz::report
