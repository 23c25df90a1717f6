#pragma once
// Where start-up time goes, across ranks (issue 19): the stamps of stamp_line.hpp summed up per
// phase for `ezpz runs show` and the verdict's JSON. Pure.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ezpz/output/stamp_line.hpp"

namespace ezpz::output {
// One phase across ranks.
struct PhaseSummary {
  std::string phase;
  std::size_t ranks = 0;
  double min = 0, p50 = 0, p90 = 0, max = 0;
  long slowest_rank = -1;
  std::string slowest_host;  // "" when the rank's exec stamp named none
  std::string histogram;     // k_histogram_buckets characters, min to max
};
inline constexpr std::size_t k_histogram_buckets = 10;

// Each rank's first stamp of each phase counts; phases in the order of their medians.
std::vector<PhaseSummary> summarize(const std::vector<Stamp>& stamps);

// `ezpz runs show`: the phases as a table, then the slowest ranks and hosts. Empty: no stamps.
std::string startup_table(const std::vector<Stamp>& stamps);

// The verdict's "startup": {"phases": [...summaries], "ranks": [{rank, host, phases: {..}}]}.
nlohmann::ordered_json startup_json(const std::vector<Stamp>& stamps);
// Back from the verdict's "startup" ("ranks"); what does not parse is left out.
std::vector<Stamp> stamps_from_json(const nlohmann::ordered_json& startup);

}  // namespace ezpz::output
