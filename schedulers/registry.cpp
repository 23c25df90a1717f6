#include <array>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "schedulers/scheduler.hpp"

namespace ezpz {
namespace {

// Detection order: the first row whose variables are present wins; local always matches.
// Flux first: scheduler.hpp says why.
const std::array<const SchedulerSpec*, 4> k_schedulers = {&k_flux, &k_pbs, &k_slurm, &k_local};

const SchedulerSpec& spec_for(SchedulerKind kind) {
  for (const SchedulerSpec* spec : k_schedulers) {
    if (spec->kind == kind) return *spec;
  }
  return k_local;
}

SchedulerKind parse_scheduler_name(const std::string& text, std::string_view origin) {
  auto kind = scheduler_from_string(text);
  if (!kind) {
    throw Error(fmt::format("{}: unknown scheduler \"{}\"; expected pbs, slurm, flux or local",
                            origin, text));
  }
  return *kind;
}

}  // namespace

SchedulerChoice choose_scheduler(const std::optional<std::string>& flag, const Env& env) {
  if (flag) {
    return {parse_scheduler_name(*flag, "--scheduler"), fmt::format("--scheduler {}", *flag)};
  }
  if (auto named = get_nonempty(env, "EZPZ_SCHEDULER")) {
    return {parse_scheduler_name(*named, "EZPZ_SCHEDULER"),
            fmt::format("EZPZ_SCHEDULER={}", *named)};
  }
  for (const SchedulerSpec* spec : k_schedulers) {
    if (auto reason = spec->detect(env)) return {spec->kind, *reason};
  }
  return {SchedulerKind::local, "nothing detected"};
}

Allocation read_allocation(SchedulerKind kind, const Env& env, const FileReader& files,
                           const CommandReader& commands, std::string_view hostname) {
  return spec_for(kind).read(env, files, commands, hostname);
}

}  // namespace ezpz
