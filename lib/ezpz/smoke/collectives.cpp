#include "ezpz/smoke/collectives.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ezpz::report {
namespace {

constexpr std::size_t k_float = 4;
constexpr std::size_t k_smallest = 1024;

struct CollectiveRow {
  Collective collective;
  const char* name;
  double links_per_element;  // bus factor x n / (n - 1): 2 for all-reduce, 1 for all-gather
  bool split;                // each rank holds S / n (all-gather) rather than all of S
};

constexpr CollectiveRow k_collectives[] = {
    {Collective::all_reduce, "all_reduce", 2, false},
    {Collective::all_gather, "all_gather", 1, true},
};

const CollectiveRow& row_of(Collective c) {
  return c == Collective::all_reduce ? k_collectives[0] : k_collectives[1];
}

}  // namespace

const char* collective_name(Collective c) {
  return row_of(c).name;
}

double bus_factor(Collective c, int ranks) {
  if (ranks < 2) return 0;
  return row_of(c).links_per_element * (ranks - 1) / ranks;
}

std::int64_t elements_per_rank(Collective c, std::size_t bytes, int ranks) {
  std::size_t share =
      row_of(c).split ? bytes / static_cast<std::size_t>(std::max(ranks, 1)) : bytes;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(share / k_float));
}

std::size_t array_bytes(Collective c, std::int64_t elements, int ranks) {
  std::size_t per_rank = static_cast<std::size_t>(elements) * k_float;
  return row_of(c).split ? per_rank * static_cast<std::size_t>(std::max(ranks, 1)) : per_rank;
}

std::vector<std::size_t> sweep_sizes(std::size_t max_bytes) {
  std::vector<std::size_t> sizes{k_smallest};
  while (sizes.back() * 4 <= max_bytes) sizes.push_back(sizes.back() * 4);
  return sizes;
}

int sweep_iterations(std::size_t bytes) {
  // 64 MiB moved per size: 16 operations of 4 MiB, capped at 40 for the small ones.
  constexpr std::size_t k_budget = 64u << 20;
  return static_cast<int>(
      std::clamp<std::size_t>(k_budget / std::max<std::size_t>(bytes, 1), 5, 40));
}

double BandwidthRow::algbw_gbs() const {
  return time_s > 0 ? static_cast<double>(bytes) / time_s / 1e9 : 0;
}

double BandwidthRow::busbw_gbs() const {
  return algbw_gbs() * bus_factor(collective, ranks);
}

std::string size_label(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

std::string bandwidth_table(const std::vector<BandwidthRow>& rows) {
  std::string out =
      "| collective | size | time (us) | algbw (GB/s) | busbw (GB/s) |\n"
      "|---|---:|---:|---:|---:|\n";
  for (const BandwidthRow& r : rows) {
    out += fmt::format("| {} | {} | {:.1f} | {:.3f} | {:.3f} |\n", collective_name(r.collective),
                       size_label(r.bytes), r.time_s * 1e6, r.algbw_gbs(), r.busbw_gbs());
  }
  return out;
}

std::string bandwidth_plot(const std::vector<BandwidthRow>& rows, int width) {
  double peak = 0;
  for (const BandwidthRow& r : rows) peak = std::max(peak, r.busbw_gbs());
  std::string out = fmt::format("bus bandwidth by message size (GB/s, full bar {:.3f})\n", peak);
  const char* last = nullptr;
  for (const BandwidthRow& r : rows) {
    const char* name = collective_name(r.collective);
    if (last != name) out += fmt::format("{}\n", name);
    last = name;
    long bar = peak > 0 ? std::lround(r.busbw_gbs() / peak * width) : 0;
    out += fmt::format("  {:>8} |{:<{}}| {:.3f}\n", size_label(r.bytes),
                       std::string(static_cast<std::size_t>(bar), '#'), width, r.busbw_gbs());
  }
  return out;
}

CollectiveHeadline headline(const std::vector<BandwidthRow>& rows, Collective c) {
  CollectiveHeadline h;
  std::size_t smallest = 0;
  for (const BandwidthRow& r : rows) {
    if (r.collective != c) continue;
    if (smallest == 0 || r.bytes < smallest) {
      smallest = r.bytes;
      h.latency_us = r.time_s * 1e6;
    }
    h.peak_busbw_gbs = std::max(h.peak_busbw_gbs, r.busbw_gbs());
  }
  return h;
}

}  // namespace ezpz::report
