#include "ezpz/supervise/run_prune.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace ezpz {
namespace {

constexpr std::array<std::pair<char, long>, 5> k_age_units = {{
    {'s', 1},
    {'m', 60},
    {'h', 3600},
    {'d', 86400},
    {'w', 7 * 86400},
}};

}  // namespace

RunsKept runs_kept(const Env& env) {
  std::optional<std::string> value = get_nonempty(env, "EZPZ_RUNS_KEEP");
  if (!value) return {k_default_runs_kept, ""};
  if (*value == "all") return {std::nullopt, ""};
  std::optional<long> count = parse_count(*value);
  if (count && *count >= 1) return {static_cast<std::size_t>(*count), ""};
  return {std::nullopt,
          fmt::format("EZPZ_RUNS_KEEP={}: expected a number of runs (1 or more) or all; every run "
                      "record is kept",
                      *value)};
}

std::optional<std::chrono::seconds> parse_age(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  std::optional<long> count = parse_count(text.substr(0, text.size() - 1));
  if (!count) return std::nullopt;
  for (const auto& [unit, seconds] : k_age_units) {
    if (text.back() != unit) continue;
    if (*count > std::numeric_limits<long>::max() / seconds) return std::nullopt;
    return std::chrono::seconds(*count * seconds);
  }
  return std::nullopt;
}

namespace {

// Runs of one second in `ezpz runs`' order (started_after): newest started first.
void order_by_start(std::span<std::string> same_second, const StartedNs& started_ns) {
  std::vector<RunSummary> runs(same_second.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    runs[i].started_ns = started_ns(same_second[i]);
    runs[i].id = std::move(same_second[i]);
  }
  std::sort(runs.begin(), runs.end(), started_after);
  for (std::size_t i = 0; i < runs.size(); ++i) same_second[i] = std::move(runs[i].id);
}

}  // namespace

std::vector<std::string> beyond_newest(std::vector<std::string> names,
                                       std::optional<std::size_t> keep,
                                       const StartedNs& started_ns) {
  std::sort(names.begin(), names.end(), std::greater<>());
  const std::size_t kept = std::min(keep.value_or(0), names.size());
  const auto cut = names.begin() + static_cast<std::ptrdiff_t>(kept);
  if (cut != names.begin() && cut != names.end() && run_second(cut[-1]) == run_second(*cut)) {
    // The second the cut falls in: which of its runs are kept. Those of other seconds are
    // all kept or all gone, whatever their order.
    const std::string_view second = run_second(*cut);
    const auto in_second = [&](const std::string& name) { return run_second(name) == second; };
    const auto first = std::find_if(names.begin(), cut, in_second);
    const auto last = std::find_if_not(cut, names.end(), in_second);
    order_by_start({first, last}, started_ns);
  }
  return {cut, names.end()};
}

bool prune_due(std::size_t records, std::size_t keep) {
  return records > keep + keep / 10;
}

bool prunable(RunState state, std::optional<bool> lock_held, std::chrono::seconds age,
              const PruneRule& rule) {
  const bool over = state == RunState::finished || state == RunState::lost;
  const bool old_enough = !rule.older_than || age >= *rule.older_than;
  return over && lock_held != true && old_enough;
}

}  // namespace ezpz
