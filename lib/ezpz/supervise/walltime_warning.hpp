#pragma once
// `ezpz launch --signal SIG@SECONDS`: a signal to every rank SECONDS before the job's walltime
// ends, so the trainer can checkpoint. Pure: the option's parsing, the job's end time from what
// the scheduler says (SLURM_JOB_END_TIME, `squeue -o %e`, `qstat -f`), when to send, and which
// signals each launcher passes on to its ranks. sys/job_end.cpp asks the scheduler; the
// executor sends the signal to the launcher, or runs a step on each node that signals the ranks
// there (sys/walltime_warner.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ezpz::walltime {

// srun's default for --signal without @TIME.
inline constexpr int k_default_seconds = 60;

struct WarnSpec {
  int signal = 0;
  int seconds = k_default_seconds;  // before the walltime ends
  bool operator==(const WarnSpec&) const = default;
};

// How the signal reaches the ranks: the launcher passes it on (where it verifiably does), or a
// step on each node (`ezpz kill --on-node --ranks-only`, as `ezpz kill --all-nodes` reaches
// the nodes) signals that node's ranks, whatever the launcher does with signals.
enum class Delivery { launcher, node_step };

// When to send it: the spec, the job's end (seconds since the epoch), and how.
struct Schedule {
  WarnSpec spec;
  std::int64_t end = 0;
  Delivery delivery = Delivery::launcher;
};

// "USR1@600", "SIGUSR1@600", "10@600", "USR1" (60 s, as srun): srun's --signal=[B:]SIG[@TIME]
// and flux's --signal=SIG@TIME, without srun's "B:" (ezpz signals the ranks, not a batch
// shell). Throws Error (exit 2) "--signal TEXT: ..." saying what is wrong.
WarnSpec parse_spec(std::string_view text);

// "USR1@600" back, as the verdict and messages write it.
std::string describe(const WarnSpec& spec);

// The job's end, in seconds since the epoch, from each source's text. Each throws Error saying
// why the text gives no end (a job without a limit: "UNLIMITED", "N/A").
std::int64_t end_from_epoch_variable(std::string_view value);  // SLURM_JOB_END_TIME
// `squeue -h -j ID -o %e`: "2026-11-25T05:42:10", in local time.
std::int64_t end_from_squeue(std::string_view output);
// `qstat -f ID`: its stime (local time, ctime's form) plus its Resource_List.walltime.
std::int64_t end_from_qstat(std::string_view output);

// PBS's walltime "[[HH:]MM:]SS[.fraction]" in whole seconds; nullopt when it is not one.
std::optional<std::int64_t> walltime_seconds(std::string_view text);

// Seconds from `now` until the signal is due (0: due now; the end is that close or past).
std::int64_t seconds_until_warning(std::int64_t end, std::int64_t now, const WarnSpec& spec);

// The line said when an attempt starts with less than the spec's seconds left (nullopt
// otherwise): it gets no signal, since its ranks cannot have caught it yet and would die of it.
std::optional<std::string> too_late_warning(const WarnSpec& spec, std::int64_t end,
                                            std::int64_t now);

// The one line said when the end cannot be known: the run goes on without the signal.
std::string unknown_end_warning(const WarnSpec& spec, std::string_view why);

// What ezpz says as it sends the signal, and what the verdict records.
std::string sending_line(const WarnSpec& spec);
// Said when the node step found no rank of the run on any node to signal.
std::string no_rank_warning(int signal, std::string_view run_id);
// Said when the node step could not be planned or started (`why`); the job runs on.
std::string step_failed_warning(int signal, std::string_view why);

// "warned at T-600 s with SIGUSR1 through the launcher" (or "through a step on each node").
std::string verdict_words(const WarnSpec& spec, Delivery delivery);

// The launcher when launcher dialect `dialect` verifiably passes `signal` on to every rank,
// else the node step (Hydra 4.0 dies of SIGUSR2; torchrun of SIGUSR1, pytorch/pytorch#154849;
// what PALS passes on is unverified).
Delivery delivery_for(std::string_view dialect, int signal);

// The line said when the node step will deliver (the launcher is not known to pass it on).
std::string node_step_note(const WarnSpec& spec, std::string_view dialect);

}  // namespace ezpz::walltime
