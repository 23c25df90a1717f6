#pragma once
// Signal names and numbers: the one table behind `ezpz kill --signal`, the executor's
// "forwarding SIGINT" lines and an attempt's "died of signal 13 (SIGPIPE)".
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ezpz {

struct SignalName {
  std::string_view abbrev;  // "TERM": the name without its "SIG", as glibc's sigabbrev_np gives it
  int number;
};

// Every signal Linux names (1-31; the real-time ones have numbers only), in number order.
std::span<const SignalName> signal_names();

// "TERM" for SIGTERM; nullopt for a signal without a name.
std::optional<std::string_view> signal_abbrev(int number);

// The number of "TERM" or "SIGTERM" (upper case, as kill(1) writes them); nullopt otherwise.
std::optional<int> signal_number(std::string_view name);

// "SIGTERM"; "signal 40" for one without a name.
std::string signal_name(int number);

// The signals ezpz passes on to the job while it runs, each received in its loop rather than
// by its default action: every one whose default ends a process (signal(7)), so that none kills
// ezpz and leaves the job running without it. All but the job's own (job_only_signal) also
// stop it: forwarded, then SIGKILL after the grace period, a final record, exit 128+N.
// SIGXFSZ is not here: ezpz ignores it, and a record write past `ulimit -f` fails (EFBIG) and
// stops the record, not the job.
std::span<const int> supervised_job_signals();

// SIGQUIT (a stack dump), SIGUSR1 and SIGUSR2 (a checkpoint, a warning): for the job, which
// goes on.
bool job_only_signal(int number);

}  // namespace ezpz
