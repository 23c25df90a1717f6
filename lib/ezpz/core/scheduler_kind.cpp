// SchedulerKind <-> text, for flags, environment variables, profiles and plans.
#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "ezpz/core/allocation.hpp"

namespace ezpz {
namespace {

// The first row for a kind is its canonical spelling; "none" is what users
// say when there is no scheduler, so it reads as local.
constexpr std::array<std::pair<std::string_view, SchedulerKind>, 5> k_scheduler_names = {{
    {"local", SchedulerKind::local},
    {"pbs", SchedulerKind::pbs},
    {"slurm", SchedulerKind::slurm},
    {"flux", SchedulerKind::flux},
    {"none", SchedulerKind::local},
}};

}  // namespace

std::string_view to_string(SchedulerKind kind) {
  for (const auto& [name, row_kind] : k_scheduler_names) {
    if (row_kind == kind) return name;
  }
  return "local";  // unreachable: every kind has a row
}

std::optional<SchedulerKind> scheduler_from_string(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& [name, kind] : k_scheduler_names) {
    if (name == lower) return kind;
  }
  return std::nullopt;
}

}  // namespace ezpz
