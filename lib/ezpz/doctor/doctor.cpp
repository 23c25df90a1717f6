// `ezpz doctor`'s checks about the job: scheduler, allocation and machine
// profile; and the runner that calls every check. The launcher check is in
// doctor_launcher.cpp, checks about this node in doctor_node.cpp, about the
// ranks' Python and the module system in doctor_python.cpp.
#include "ezpz/doctor/doctor.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/hostlist.hpp"
#include "ezpz/doctor/doctor_checks.hpp"
#include "ezpz/doctor/this_host.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/stage/yeet.hpp"

namespace ezpz::doctor {

std::string_view to_string(Status status) {
  constexpr std::array<std::string_view, 3> k_names = {"ok", "warn", "error"};
  return k_names[static_cast<std::size_t>(status)];
}

CheckResult result(std::string_view name, Status status, std::string message, std::string remedy) {
  return {std::string(name), status, std::move(message), std::move(remedy)};
}

std::string first_line(std::string_view text) {
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    std::size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos) {
      line = line.substr(first);
      return std::string(line.substr(0, line.find_last_not_of(" \t\r") + 1));
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return "";
}

std::string list_some(const std::vector<std::string>& items, std::size_t shown) {
  std::vector<std::string> head(items.begin(), items.begin() + std::min(shown, items.size()));
  std::string text = fmt::format("{}", fmt::join(head, ", "));
  if (items.size() > shown) text += fmt::format(" and {} more", items.size() - shown);
  return text;
}

std::string run_failure(const ProgramRun& run) {
  if (!run.start_error.empty()) return fmt::format("could not start: {}", run.start_error);
  if (run.timed_out) return fmt::format("did not finish within {:g} s", run.timeout_s);
  if (run.signal != 0) return fmt::format("died of signal {}", run.signal);
  if (!run.exit_code) return "did not run";
  if (*run.exit_code == 0) return "";
  std::string why = first_line(run.err);
  if (why.empty()) why = first_line(run.out);
  return why.empty() ? fmt::format("exit {}", *run.exit_code)
                     : fmt::format("exit {}: {}", *run.exit_code, why);
}

// ---- What several checks share ----------------------------------------------

std::string launcher_program(std::string_view dialect) {
  return launcher_argv(dialect, LauncherInput{}).front();
}

YeetTarget yeet_target(const Env& env) {
  YeetTarget target;
  target.source = yeet::default_source(env).value_or("");
  std::string destination =
      yeet::default_destination(target.source.empty() ? "env" : target.source);
  target.directory = std::filesystem::path(destination).parent_path().string();
  if (!target.source.empty()) target.destination = destination;
  return target;
}

bool netrc_has_machine(std::string_view text, std::string_view host) {
  // .netrc is a stream of whitespace-separated tokens: "machine <host> login ... password ...".
  std::string_view previous;
  while (!text.empty()) {
    std::size_t start = text.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    std::string_view token = text.substr(0, text.find_first_of(" \t\r\n"));
    if (previous == "machine" && token == host) return true;
    previous = token;
    text.remove_prefix(token.size());
  }
  return false;
}

namespace {

// Each file on its own, so that one broken file is reported and the others still load.
void load_each(const std::vector<ProfileFile>& files, Derived& d) {
  LoadedProfiles loaded = load_each_profile(files);
  for (const BrokenProfile& broken : loaded.broken) d.profile_errors.push_back(broken.error);
  d.profiles = std::move(loaded.profiles);
}

}  // namespace

Derived derive(const Snapshot& s) {
  Derived d;
  try {
    load_each(s.profile_files, d);
    ProfileChoice choice = select_profile(d.profiles, s.machine_flag, s.env, s.hostname,
                                          s.scheduler.value_or(SchedulerKind::local));
    d.profile = *choice.profile;
    d.profile_rule = choice.rule;
    d.launcher = canonical_launcher(s.launcher_flag.value_or(d.profile->launcher));
  } catch (const std::exception& error) {
    d.profile_error = error.what();
  }
  return d;
}

// ---- scheduler --------------------------------------------------------------

namespace {

constexpr std::string_view k_scheduler = "scheduler";

std::string describe_scheduler(const Snapshot& s) {
  if (*s.scheduler == SchedulerKind::local) {
    return fmt::format("local: this host alone ({})", s.scheduler_rule);
  }
  std::string job = s.allocation ? s.allocation->job_id : "";
  return fmt::format("{}{} ({})", to_string(*s.scheduler), job.empty() ? "" : ", job " + job,
                     s.scheduler_rule);
}

// The variables a job of each scheduler must have besides the one that revealed it.
struct Contract {
  SchedulerKind kind;
  std::vector<std::string_view> any_of;  // at least one must be set
  std::string_view missing;              // the message's end when none is
  std::string_view remedy;
};
const std::array<Contract, 2> k_contracts = {{
    {SchedulerKind::pbs,
     {"PBS_NODEFILE"},
     "PBS_NODEFILE is not set",
     "run inside the PBS job (qsub -I, or a job script), or pass --scheduler local"},
    {SchedulerKind::slurm,
     {"SLURM_JOB_NODELIST", "SLURM_NODELIST"},
     "neither SLURM_JOB_NODELIST nor SLURM_NODELIST is set",
     "run inside the Slurm job (salloc, or an sbatch script), or pass --scheduler local"},
}};

// The job variables of the schedulers other than `kind` that are also set.
std::vector<std::string> other_job_variables(const Snapshot& s, SchedulerKind kind) {
  const std::array<std::pair<SchedulerKind, std::string_view>, 4> k_job_vars = {{
      {SchedulerKind::flux, "FLUX_URI"},
      {SchedulerKind::pbs, "PBS_JOBID"},
      {SchedulerKind::slurm, "SLURM_JOB_ID"},
      {SchedulerKind::slurm, "SLURM_JOBID"},
  }};
  std::vector<std::string> names;
  for (const auto& [owner, name] : k_job_vars) {
    if (owner != kind && get_nonempty(s.env, name)) names.emplace_back(name);
  }
  return names;
}

}  // namespace

CheckResult check_scheduler(const Snapshot& s, const Derived&) {
  if (!s.scheduler) {
    return result(k_scheduler, Status::error, s.scheduler_error,
                  "pass --scheduler pbs, slurm, flux or local, or unset EZPZ_SCHEDULER");
  }
  std::string detected = describe_scheduler(s);
  for (const Contract& contract : k_contracts) {
    if (contract.kind != *s.scheduler) continue;
    if (!first_nonempty(s.env, contract.any_of)) {
      return result(k_scheduler, Status::error,
                    fmt::format("{}, but {}", detected, contract.missing),
                    std::string(contract.remedy));
    }
    if (!s.hosts_error.empty()) {
      return result(k_scheduler, Status::error, fmt::format("{}, but {}", detected, s.hosts_error),
                    std::string(contract.remedy));
    }
  }
  std::vector<std::string> others = other_job_variables(s, *s.scheduler);
  if (!others.empty() && *s.scheduler != SchedulerKind::local) {
    return result(k_scheduler, Status::warn,
                  fmt::format("{}; {} is set too", detected, fmt::join(others, " and ")),
                  "pass --scheduler (or set EZPZ_SCHEDULER) to say which scheduler runs this job");
  }
  return result(k_scheduler, Status::ok, detected);
}

// ---- allocation -------------------------------------------------------------

namespace {

constexpr std::string_view k_allocation = "allocation";

std::string describe_hosts(const Snapshot& s) {
  const std::vector<std::string>& hosts = s.allocation->hosts;
  std::string names = compress_hostlist(hosts);
  if (names.size() > 60) names = names.substr(0, 57) + "...";
  return fmt::format("{} host{} from {}: {}", hosts.size(), hosts.size() == 1 ? "" : "s",
                     s.hosts_source, names);
}

// Repeated nodefile lines are slots when every host repeats alike; anything
// else is a request ezpz cannot honour (it runs every host once).
std::optional<CheckResult> judge_repeats(const Snapshot& s, std::string& message) {
  const std::size_t lines = s.listed_hosts.size();
  const std::size_t hosts = s.allocation->hosts.size();
  if (lines <= hosts) return std::nullopt;
  if (s.allocation->slots_per_host) {
    message += fmt::format("; each listed {} times", *s.allocation->slots_per_host);
    return std::nullopt;
  }
  return result(k_allocation, Status::warn,
                fmt::format("{}; {} repeated lines, not the same number for every host", message,
                            lines - hosts),
                "ezpz starts each host once: check the job's resource request (select, mpiprocs)");
}

// A PBS nodefile that does not list this host: PBS_JOBID and PBS_NODEFILE came from another job
// (a shell that kept them), and a launch would start ranks on that job's nodes.
std::optional<CheckResult> judge_this_host(const Snapshot& s, const std::string& message) {
  if (s.scheduler != SchedulerKind::pbs || !s.hosts_source.starts_with("PBS_NODEFILE")) {
    return std::nullopt;
  }
  if (lists_this_host(s.allocation->hosts, s.hostname, [&s] { return s.lookups; })) {
    return std::nullopt;
  }
  return result(k_allocation, Status::error,
                fmt::format("{}; this host ({}) is not one of them", message, s.hostname),
                fmt::format("PBS_JOBID={} is not this node's job: unset PBS_JOBID and "
                            "PBS_NODEFILE, or run inside the job",
                            s.allocation->job_id));
}

std::vector<std::string> hosts_with(const Snapshot& s, HostLookup::Result wanted) {
  std::vector<std::string> hosts;
  for (const HostLookup& lookup : s.lookups) {
    if (lookup.result == wanted) hosts.push_back(lookup.host);
  }
  return hosts;
}

CheckResult judge_lookups(const Snapshot& s, std::string message) {
  const std::size_t total = s.lookups.size();
  std::vector<std::string> failed = hosts_with(s, HostLookup::Result::failed);
  if (!failed.empty()) {
    // Alone, this host's name only matters to Gloo's choice of network interface.
    bool alone = *s.scheduler == SchedulerKind::local;
    return result(k_allocation, alone ? Status::warn : Status::error,
                  fmt::format("{}; {} of {} do not resolve: {}", message, failed.size(), total,
                              list_some(failed)),
                  alone ? "Gloo finds its network interface by this name: add it to /etc/hosts, "
                          "or set GLOO_SOCKET_IFNAME"
                        : "launchers reach nodes by these names: check the nodefile, /etc/hosts "
                          "or DNS");
  }
  std::vector<std::string> slow = hosts_with(s, HostLookup::Result::timed_out);
  if (!slow.empty()) {
    return result(k_allocation, Status::warn,
                  fmt::format("{}; {} of {} did not resolve within {:g} s: {}", message,
                              slow.size(), total, s.lookup_timeout_s, list_some(slow)),
                  "slow name lookups delay every launch: check /etc/resolv.conf, or list the "
                  "nodes in /etc/hosts");
  }
  return result(k_allocation, Status::ok,
                message + (total == 1 ? "; it resolves" : "; all resolve"));
}

}  // namespace

CheckResult check_allocation(const Snapshot& s, const Derived&) {
  if (!s.allocation) {
    return result(k_allocation, Status::error, s.allocation_error,
                  "fix the variable or file named here: ezpz launch stops at it too");
  }
  std::string message = describe_hosts(s);
  if (auto repeats = judge_repeats(s, message)) return *repeats;
  CheckResult lookups = judge_lookups(s, message);
  if (lookups.status == Status::error) return lookups;  // names that do not resolve come first
  if (auto stray = judge_this_host(s, message)) return *stray;
  return lookups;
}

// ---- profile ----------------------------------------------------------------

namespace {

constexpr std::string_view k_profile = "profile";

}  // namespace

CheckResult check_profile(const Snapshot& s, const Derived& d) {
  if (!s.profiles_error.empty()) {
    return result(k_profile, Status::error, s.profiles_error,
                  "make the profile directories readable (EZPZ_MACHINES_PATH, "
                  "~/.config/ezpz/machines)");
  }
  if (!d.profile_errors.empty()) {
    return result(
        k_profile, Status::error,
        fmt::format("{} profile file{} did not load: {}", d.profile_errors.size(),
                    d.profile_errors.size() == 1 ? "" : "s", fmt::join(d.profile_errors, "; ")),
        "fix or remove the file: ezpz launch stops at a profile that does not load");
  }
  if (!d.profile) {
    return result(k_profile, Status::error, d.profile_error,
                  "pass --machine with a known name, or add machines/NAME.yaml "
                  "(see machines/README.md)");
  }
  const MachineProfile& p = *d.profile;
  std::string message = fmt::format("{} from {} ({})", p.name, p.source, d.profile_rule);
  if (s.scheduler && p.scheduler && *p.scheduler != *s.scheduler) {
    return result(k_profile, Status::warn,
                  fmt::format("{}; it is for {} jobs, but the scheduler is {}", message,
                              to_string(*p.scheduler), to_string(*s.scheduler)),
                  fmt::format("run inside a {} job, or pass --machine for this system",
                              to_string(*p.scheduler)));
  }
  return result(k_profile, Status::ok, message);
}

// ---- The runner ---------------------------------------------------------------

namespace {

struct CheckRow {
  std::string_view name;
  CheckResult (*run)(const Snapshot&, const Derived&);
};

// Report order: the job first, then this node.
const std::array<CheckRow, 15> k_checks = {{
    {"scheduler", check_scheduler},
    {"allocation", check_allocation},
    {"profile", check_profile},
    {"launcher", check_launcher},
    {"gpus", check_gpus},
    {"libraries", check_libraries},
    {"trainer", check_trainer},
    {"storage", check_storage},
    {"limits", check_limits},
    {"port", check_port},
    {"python", check_python},
    {"torch", check_torch},
    {"modules", check_modules},
    {"tracking", check_tracking},
    {"stacks", check_stacks},
}};

}  // namespace

std::vector<CheckResult> run_checks(const Snapshot& snapshot) {
  return run_checks(snapshot, derive(snapshot));
}

std::vector<CheckResult> run_checks(const Snapshot& snapshot, const Derived& derived) {
  std::vector<CheckResult> results;
  for (const CheckRow& row : k_checks) {
    try {
      results.push_back(row.run(snapshot, derived));
    } catch (const std::exception& error) {
      results.push_back(result(row.name, Status::error,
                               fmt::format("the check itself failed: {}", error.what()),
                               "report this as an ezpz bug, with the output of ezpz doctor -v"));
    }
  }
  return results;
}

Status worst(const std::vector<CheckResult>& results) {
  Status status = Status::ok;
  for (const CheckResult& r : results) status = std::max(status, r.status);
  return status;
}

}  // namespace ezpz::doctor
