#include "ezpz/supervise/walltime_warning.hpp"

#include <algorithm>
#include <array>
#include <csignal>
#include <ctime>
#include <initializer_list>
#include <span>

#include <fmt/format.h>

#include "ezpz/core/env.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/signals.hpp"
#include "ezpz/core/text.hpp"

namespace ezpz::walltime {
namespace {

// The signals each launcher passes on to every rank on every node, and whether that is
// verified (tried, or the launcher's own manual). Only a verified row's signals go to the
// launcher; any other signal, and any launcher without a verified row, goes to the ranks
// through a step on each node (`ezpz kill --on-node --ranks-only`), which needs nothing of the
// launcher: most launchers die of a signal they do not handle, and the job with them.
struct Forwarding {
  std::string_view dialect;
  bool verified = false;
  std::initializer_list<int> signals;
};
// hydra: MPICH 4.0.2's mpiexec sends INT, QUIT, TERM and USR1 on to every proxy (tried, two
// hosts: each reached both ranks; CONT reached none, USR2 killed mpiexec, exit 140).
// srun: "Signals sent to the srun command are automatically forwarded to the tasks" (srun(1)).
// openmpi: "SIGUSR1 and SIGUSR2 signals received by orterun are propagated" (mpirun(1); tried
// with 4.1: both reached both ranks, TERM ended the job).
// aprun: HPE's list (HUP INT QUIT TERM ABRT USR1 USR2 URG WINCH: "aprun Signal Processing",
// hpe.com/psnow/resources/ebooks/a00114008en_us_v2/Additional_aprun_Information.html).
// pals: UNVERIFIED, so the node step delivers there: its row is aprun's, its predecessor's, a
// guess kept for the record. No public document says which signals PALS's mpiexec passes on:
// its mpiexec(1) is on HPE's support portal only (Open MPI's "Launching with HPE PALS" says to
// search there); ALCF's user guides name only `qsig -s SIG JOBID` (docs/running-jobs), which
// signals the job script, not the ranks; HPE's own tools signal a PALS application's ranks with
// `palsig -n EXEC_HOST -s SIGNUM APID` (common-tools-interface/cti, PALS/Frontend.cpp,
// PALSApp::kill), and libpals with pals_signal(state, -1, signum) for every rank (pals.h), not
// through mpiexec. A wrong guess would kill Aurora's job instead of warning it. flux and
// torchrun: no row (torchrun dies of USR1, pytorch/pytorch#154849; flux run has its own
// --signal).
const std::array<Forwarding, 5> k_forwarding = {{
    {"hydra", true, {SIGINT, SIGQUIT, SIGTERM, SIGUSR1}},
    {"srun", true, {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGALRM}},
    {"openmpi", true, {SIGUSR1, SIGUSR2}},
    {"aprun",
     true,
     {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT, SIGUSR1, SIGUSR2, SIGURG, SIGWINCH}},
    {"pals",
     false,
     {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT, SIGUSR1, SIGUSR2, SIGURG, SIGWINCH}},
}};

// The signals `dialect` verifiably passes on; none without a verified row.
std::span<const int> forwarded_by(std::string_view dialect) {
  auto row = std::find_if(k_forwarding.begin(), k_forwarding.end(),
                          [dialect](const Forwarding& f) { return f.dialect == dialect; });
  if (row == k_forwarding.end() || !row->verified) return {};
  return {row->signals.begin(), row->signals.size()};
}

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// A signal by name ("USR1", "SIGUSR1") or number (1-64).
std::optional<int> signal_of(std::string_view text) {
  if (auto number = parse_count(text)) {
    if (*number >= 1 && *number <= 64) return static_cast<int>(*number);
    return std::nullopt;
  }
  return signal_number(text);
}

// Local time as mktime reads it (the scheduler prints its times in the node's zone).
std::int64_t local_epoch(std::tm tm) {
  tm.tm_isdst = -1;
  return static_cast<std::int64_t>(std::mktime(&tm));
}

std::optional<std::int64_t> parse_local_time(std::string_view text, const char* format) {
  std::tm tm{};
  const std::string copy(text);
  const char* end = ::strptime(copy.c_str(), format, &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return local_epoch(tm);
}

// The value of "    name = value" in `qstat -f` output; nullopt when absent.
std::optional<std::string_view> qstat_value(std::string_view output, std::string_view name) {
  for (std::string_view line : split_lines(output)) {
    line = trimmed(line);
    if (!line.starts_with(name)) continue;
    std::string_view rest = trimmed(line.substr(name.size()));
    if (rest.starts_with('=')) return trimmed(rest.substr(1));
  }
  return std::nullopt;
}

}  // namespace

WarnSpec parse_spec(std::string_view text) {
  const auto at = text.find('@');
  const std::string_view sig = text.substr(0, at);
  const auto signal = signal_of(sig);
  if (!signal) {
    throw Error(fmt::format(
        "--signal {}: expected SIG[@SECONDS]: a signal name or number (USR1, SIGUSR1, 10), then "
        "the seconds before the walltime ends (default {})",
        text, k_default_seconds));
  }
  WarnSpec spec{.signal = *signal};
  if (at == std::string_view::npos) return spec;
  const auto seconds = parse_count(text.substr(at + 1));
  if (!seconds || *seconds < 1 || *seconds > 0xFFFF) {
    throw Error(fmt::format("--signal {}: expected whole seconds from 1 to 65535 after '@'", text));
  }
  spec.seconds = static_cast<int>(*seconds);
  return spec;
}

std::string describe(const WarnSpec& spec) {
  const auto abbrev = signal_abbrev(spec.signal);
  return fmt::format("{}@{}", abbrev ? std::string(*abbrev) : std::to_string(spec.signal),
                     spec.seconds);
}

std::int64_t end_from_epoch_variable(std::string_view value) {
  const auto epoch = parse_count(trimmed(value));
  if (!epoch || *epoch == 0) {
    throw Error(fmt::format("SLURM_JOB_END_TIME=\"{}\" is not a time in seconds", value));
  }
  return *epoch;
}

std::int64_t end_from_squeue(std::string_view output) {
  const std::string_view text = trimmed(output);
  if (auto end = parse_local_time(text, "%Y-%m-%dT%H:%M:%S")) return *end;
  throw Error(fmt::format("squeue gave \"{}\" for the job's end time", text));
}

std::optional<std::int64_t> walltime_seconds(std::string_view text) {
  text = text.substr(0, text.find('.'));  // PBS's milliseconds, if given
  const auto fields = split(text, ':');
  if (fields.size() > 3) return std::nullopt;
  std::int64_t seconds = 0;
  for (std::string_view field : fields) {
    const auto count = parse_count(field);
    if (!count) return std::nullopt;
    seconds = seconds * 60 + *count;
  }
  return seconds;
}

std::int64_t end_from_qstat(std::string_view output) {
  const auto walltime = qstat_value(output, "Resource_List.walltime");
  if (!walltime) throw Error("qstat -f gives the job no Resource_List.walltime");
  const auto seconds = walltime_seconds(*walltime);
  if (!seconds) {
    throw Error(
        fmt::format("qstat -f: Resource_List.walltime \"{}\" is not [[HH:]MM:]SS", *walltime));
  }
  const auto stime = qstat_value(output, "stime");
  if (!stime) throw Error("qstat -f gives the job no stime (it has not started)");
  const auto start = parse_local_time(*stime, "%a %b %d %H:%M:%S %Y");
  if (!start) throw Error(fmt::format("qstat -f: stime \"{}\" is not a time", *stime));
  return *start + *seconds;
}

std::int64_t seconds_until_warning(std::int64_t end, std::int64_t now, const WarnSpec& spec) {
  return std::max<std::int64_t>(0, end - spec.seconds - now);
}

std::optional<std::string> too_late_warning(const WarnSpec& spec, std::int64_t end,
                                            std::int64_t now) {
  if (end - spec.seconds > now) return std::nullopt;
  return fmt::format(
      "--signal {}: the job ends in {} s, within {} s already; no {} will be sent (ranks that "
      "have only started cannot have caught it yet)",
      describe(spec), std::max<std::int64_t>(0, end - now), spec.seconds, signal_name(spec.signal));
}

std::string unknown_end_warning(const WarnSpec& spec, std::string_view why) {
  return fmt::format("--signal {}: the job's end time is unknown ({}); no {} will be sent",
                     describe(spec), why, signal_name(spec.signal));
}

std::string sending_line(const WarnSpec& spec) {
  return fmt::format("{} s before the job's walltime ends: sending {} to every rank (--signal {})",
                     spec.seconds, signal_name(spec.signal), describe(spec));
}

std::string no_rank_warning(int signal, std::string_view run_id) {
  return fmt::format("--signal: the step on each node found no rank of run {} to send {} to",
                     run_id, signal_name(signal));
}

std::string step_failed_warning(int signal, std::string_view why) {
  return fmt::format("--signal: no {} sent: the step on each node failed: {}", signal_name(signal),
                     why);
}

std::string verdict_words(const WarnSpec& spec, Delivery delivery) {
  return fmt::format(
      "warned at T-{} s with {} {}", spec.seconds, signal_name(spec.signal),
      delivery == Delivery::launcher ? "through the launcher" : "through a step on each node");
}

Delivery delivery_for(std::string_view dialect, int signal) {
  const std::span<const int> passed = forwarded_by(dialect);
  const bool forwarded = std::find(passed.begin(), passed.end(), signal) != passed.end();
  return forwarded ? Delivery::launcher : Delivery::node_step;
}

std::string node_step_note(const WarnSpec& spec, std::string_view dialect) {
  return fmt::format(
      "--signal {}: the {} launcher is not known to pass {} on to the ranks; a step on each "
      "node will send it to them",
      describe(spec), dialect, signal_name(spec.signal));
}

}  // namespace ezpz::walltime
