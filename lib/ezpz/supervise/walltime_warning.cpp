#include "ezpz/supervise/walltime_warning.hpp"

#include <algorithm>
#include <array>
#include <csignal>
#include <ctime>
#include <initializer_list>
#include <span>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/env.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/signals.hpp"
#include "ezpz/core/text.hpp"

namespace ezpz::walltime {
namespace {

// The signals each launcher passes on to every rank on every node. A signal it does not pass
// on is refused: most launchers die of one they do not handle, and the job with them.
struct Forwarding {
  std::string_view dialect;
  std::initializer_list<int> signals;
};
// hydra: MPICH 4.0.2's mpiexec sends INT, QUIT, TERM and USR1 on to every proxy (tried, two
// hosts: each reached both ranks; CONT reached none, USR2 killed mpiexec, exit 140).
// srun: "Signals sent to the srun command are automatically forwarded to the tasks" (srun(1)).
// openmpi: "SIGUSR1 and SIGUSR2 signals received by orterun are propagated" (mpirun(1); tried
// with 4.1: both reached both ranks, TERM ended the job).
// aprun: HPE's list (HUP INT QUIT TERM ABRT USR1 USR2 URG WINCH: "aprun Signal Processing",
// hpe.com/psnow/resources/ebooks/a00114008en_us_v2/Additional_aprun_Information.html).
// pals: assumed as aprun, its predecessor, and still unverified. No public document says which
// signals PALS's mpiexec passes on: its mpiexec(1) is on HPE's support portal only (Open MPI's
// "Launching with HPE PALS" says to search there); ALCF's user guides name only `qsig -s SIG
// JOBID` (docs/running-jobs), which signals the job script, not the ranks; HPE's own tools
// signal a PALS application's ranks with `palsig -n EXEC_HOST -s SIGNUM APID`
// (common-tools-interface/cti, PALS/Frontend.cpp, PALSApp::kill), and libpals with
// pals_signal(state, -1, signum) for every rank (pals.h), not through mpiexec. flux and
// torchrun: none (torchrun dies of USR1, pytorch/pytorch#154849; flux run has its own --signal).
const std::array<Forwarding, 5> k_forwarding = {{
    {"hydra", {SIGINT, SIGQUIT, SIGTERM, SIGUSR1}},
    {"srun", {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGALRM}},
    {"openmpi", {SIGUSR1, SIGUSR2}},
    {"aprun", {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT, SIGUSR1, SIGUSR2, SIGURG, SIGWINCH}},
    {"pals", {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT, SIGUSR1, SIGUSR2, SIGURG, SIGWINCH}},
}};

std::span<const int> forwarded_by(std::string_view dialect) {
  auto row = std::find_if(k_forwarding.begin(), k_forwarding.end(),
                          [dialect](const Forwarding& f) { return f.dialect == dialect; });
  if (row == k_forwarding.end()) return {};
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

std::string verdict_words(const WarnSpec& spec) {
  return fmt::format("warned at T-{} s with {}", spec.seconds, signal_name(spec.signal));
}

void check_forwarded(std::string_view dialect, int signal) {
  const std::span<const int> passed = forwarded_by(dialect);
  if (std::find(passed.begin(), passed.end(), signal) != passed.end()) return;
  if (passed.empty()) {
    throw Error(fmt::format("--signal {}: the {} launcher passes no signal on to the ranks",
                            signal_name(signal), dialect));
  }
  std::vector<std::string> names;
  for (int s : passed) names.push_back(signal_name(s));
  throw Error(
      fmt::format("--signal {}: the {} launcher does not pass it on to the ranks; it "
                  "passes {}",
                  signal_name(signal), dialect, fmt::join(names, ", ")));
}

}  // namespace ezpz::walltime
