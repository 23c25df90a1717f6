#include "ezpz/core/signals.hpp"

#include <algorithm>
#include <array>
#include <csignal>

#include <fmt/format.h>

namespace ezpz {
namespace {

// glibc's names (sigabbrev_np): SIGIOT, SIGCLD and SIGIO share a number with ABRT, CHLD and
// POLL, which name it.
constexpr std::array<SignalName, 31> k_signals = {{
    {"HUP", SIGHUP},   {"INT", SIGINT},       {"QUIT", SIGQUIT}, {"ILL", SIGILL},
    {"TRAP", SIGTRAP}, {"ABRT", SIGABRT},     {"BUS", SIGBUS},   {"FPE", SIGFPE},
    {"KILL", SIGKILL}, {"USR1", SIGUSR1},     {"SEGV", SIGSEGV}, {"USR2", SIGUSR2},
    {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},     {"TERM", SIGTERM}, {"STKFLT", SIGSTKFLT},
    {"CHLD", SIGCHLD}, {"CONT", SIGCONT},     {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},   {"XCPU", SIGXCPU},
    {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH},
    {"POLL", SIGPOLL}, {"PWR", SIGPWR},       {"SYS", SIGSYS},
}};

}  // namespace

std::span<const SignalName> signal_names() {
  return k_signals;
}

std::optional<std::string_view> signal_abbrev(int number) {
  auto row = std::find_if(k_signals.begin(), k_signals.end(),
                          [number](const SignalName& s) { return s.number == number; });
  if (row == k_signals.end()) return std::nullopt;
  return row->abbrev;
}

std::optional<int> signal_number(std::string_view name) {
  if (name.starts_with("SIG")) name.remove_prefix(3);
  auto row = std::find_if(k_signals.begin(), k_signals.end(),
                          [name](const SignalName& s) { return s.abbrev == name; });
  if (row == k_signals.end()) return std::nullopt;
  return row->number;
}

std::string signal_name(int number) {
  if (auto abbrev = signal_abbrev(number)) return fmt::format("SIG{}", *abbrev);
  return fmt::format("signal {}", number);
}

namespace {

// signal(7): every signal whose default action is Term or Core, but SIGKILL (cannot be caught),
// SIGPIPE (ezpz ignores it, a closed stdout is an error it handles), SIGXFSZ (ignored: a write
// fails instead), SIGSEGV, SIGBUS, SIGFPE and SIGILL (ezpz's own faults, never sent to it on
// purpose) and SIGABRT (abort()'s).
constexpr std::array<int, 15> k_supervised = {SIGINT,  SIGTERM,   SIGHUP,    SIGQUIT, SIGUSR1,
                                              SIGUSR2, SIGALRM,   SIGVTALRM, SIGPROF, SIGXCPU,
                                              SIGPWR,  SIGSTKFLT, SIGIO,     SIGSYS,  SIGTRAP};

}  // namespace

std::span<const int> supervised_job_signals() {
  return k_supervised;
}

bool job_only_signal(int number) {
  return number == SIGQUIT || number == SIGUSR1 || number == SIGUSR2;
}

}  // namespace ezpz
