#pragma once
// What happened to one launch attempt and what to do next: classify how it
// ended (from its exit status, the watchdog and its output), back off between
// retries, and swap named bad nodes for spares. Pure: the executor and
// `ezpz launch --retries/--spares` do the side effects.
#include <array>
#include <cstddef>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/profile/machine_profile.hpp"
#include "ezpz/supervise/peer_lost.hpp"

namespace ezpz {

enum class Ending {
  success,
  application_error,  // the job's own failure: retrying will not help
  bad_node,           // evidence against a node: a bad-node line, a lost peer, SIGKILL/SIGBUS
  launcher_died,      // the launcher itself (mpiexec, srun) was killed: no rank is to blame
  hang,               // --idle-timeout: no output from any rank, after a progress line
  never_started,      // --idle-timeout before any progress line: stuck in start-up
  timeout,            // --time-limit: the wall-clock limit
  walltime,           // SIGTERM from the scheduler, or every rank stopped: never retried
  interrupted,        // a signal ezpz forwarded (Ctrl-C, SIGTERM outside a job, SIGUSR1)
};
std::string_view to_string(Ending ending);

// Why ezpz stopped the attempt, if it did: a limit, or a bad-node signature
// seen on the launcher's stderr (no point waiting for the hang that follows).
// stdout_closed: ezpz's own stdout lost its reader (`ezpz launch ... | head`). rank_failed: a
// rank failed and the job still ran --kill-on-bad-exit later (the other ranks would wait on it).
enum class Watchdog { none, timeout, idle, signature, stdout_closed, rank_failed };

// What a training loop prints as it goes (step=10, iter: 3, epoch 2 in = or : form).
inline constexpr std::string_view k_default_progress =
    R"(\b(step|iter|iteration|epoch)\s*[=:]\s*\d)";

// Throws Error naming --progress-pattern when `pattern` is not a regular expression.
void check_progress_pattern(const std::string& pattern);

// A rank's death by a signal: which rank, where, which signal (0: not a signal death).
struct SignalDeath {
  std::string ranks;  // empty: the launcher did not say
  std::string host;
  int signal = 0;
  bool operator==(const SignalDeath&) const = default;
};

// A signal ezpz sent the launcher's group during an attempt: one it received and forwarded (the
// user's, `ezpz kill`'s, a batch system's), or its own (a limit's stop, the grace's SIGKILL,
// --signal's warning). A rank that dies of one of these died of ezpz's doing, never its node's.
struct SentSignal {
  int signal = 0;
  double at_s = 0;  // seconds after the launcher started
  std::string why;  // one of k_sent_reasons
  bool operator==(const SentSignal&) const = default;
};
// "forwarded": received and passed on; "stop": a limit or ezpz's own stop; "kill": SIGKILL after
// the grace or a second Ctrl-C; "warning": --signal's before the walltime.
inline constexpr std::array<std::string_view, 4> k_sent_reasons = {"forwarded", "stop", "kill",
                                                                   "warning"};

struct AttemptFacts {
  int exit_status = 0;         // the launcher's: 128+N for signal N
  bool interrupted = false;    // ezpz forwarded a stop signal (INT, TERM, HUP) it received
  int forwarded_signal = 0;    // which one (SIGTERM at walltime is its own case)
  bool scheduler_job = false;  // inside a PBS/Slurm job: SIGTERM means walltime
  Watchdog watchdog = Watchdog::none;
  std::string output;  // the attempt's combined output (or its tail)
  // The attempt's hosts and ranks per host: names the rank of a failure report
  // that gives only the host (MPICH 4.0's Hydra). Empty: not filled in.
  std::vector<std::string> hosts = {};
  int ppn = 0;
  // The launcher process itself died of this signal (0: it exited). Its ranks'
  // statuses died with it: 128+N is then not a rank's.
  int launcher_signal = 0;
  // Or one of the launcher's own processes on this node did ("hydra_pmi_proxy (pid 7304)"), and
  // ezpz stopped the launcher: the same death. Empty: none did.
  std::string launcher_part = {};
  int world_size = 0;  // the last host may hold fewer than ppn; 0: hosts x ppn
  // With rank records: the lines no rank wrote (the launcher's own, ezpz-rankenv's reports).
  // Bad-node patterns and failure reports are matched against these alone, so a rank's own
  // "ssh: connect to host github.com ..." never names a node. nullopt: not known, `output`.
  std::optional<std::string> launcher_output = std::nullopt;
  // With rank records: how many ranks ezpz-rankenv started (their `exec` stamps). A launcher
  // that failed before it started any failed on its own (its proxy not found, say).
  // nullopt: not known.
  std::optional<std::size_t> ranks_started = std::nullopt;
  // How the previous attempt's first failed rank died of a signal, if it did: the same rank
  // dying the same way on a new host is the program's doing (signal_death's rule).
  SignalDeath previous_death = {};
  // A progress line of the job (`--progress-pattern`): an idle timeout before any such line is
  // a job that never started training, after one a job that hung mid-training.
  std::string progress_pattern = std::string(k_default_progress);
  // The job's hosts at the addresses lines of lost peers name (the caller's lookup of
  // lost_peer_addresses(output)): an address not in it names no host of the job.
  AddressHosts address_hosts = {};
  // Every signal ezpz sent or forwarded during the attempt, in order.
  std::vector<SentSignal> sent = {};
  // The status of the first rank that failed on its own, as ezpz-rankenv reported it to ezpz
  // (its code, or 128+N); nullopt: none did, or not known.
  std::optional<int> failed_rank_status = std::nullopt;
  // The working directory was gone when the attempt ended (deleted under the job): the launch
  // cannot start again there, and it is no node's fault.
  bool cwd_missing = false;
};

// A rank reported as failed: by the launcher (srun, Hydra, Open MPI, PALS) or by
// ezpz-rankenv, which says it for every launcher (rank_env.hpp's exit_report).
struct FailedRank {
  std::string host;
  std::string ranks;  // "1", "0-3", "0,2"; empty when the launcher did not say
  std::string pid;    // Hydra names the process
  std::string what;   // the launcher's words: "Killed", "Exited with exit code 3"
  bool died_of_signal = false;
  bool own_words = false;  // ezpz-rankenv's report: the rank's own status, kept over a launcher's
  bool operator==(const FailedRank&) const = default;
};

// Every failure report of a launcher in `output`, in order: the first is the
// cause, the rest are usually the job being torn down because of it.
std::vector<FailedRank> failed_ranks(std::string_view output);

// The last `count` non-blank lines of `output` before its first failure report:
// the failed rank's last words (a traceback) come just before ezpz-rankenv's
// line or the launcher's. Empty when no line reports a failure. (Lines of other
// ranks printed meanwhile are among them: the output is not labelled by rank.)
std::vector<std::string> lines_before_failure(std::string_view output, std::size_t count);

// A rank stopped with SIGTERM ("died from signal 15", "Terminated"): the teardown after
// another rank's death, innocent of it (so is a rank dead of a signal ezpz sent: the
// classifier's stopped ranks, Classification::innocent).
bool teardown_report(const FailedRank& rank);

// The status a shell would give the failed rank: its exit code ("Exited with exit code 3":
// 3), or 128+N for signal N ("Killed", "KILLED BY SIGNAL: 9", Hydra 4.0's "EXIT CODE: 9": 137);
// nullopt when the launcher's words give none.
std::optional<int> rank_status(const FailedRank& rank);

// "rank 1 on n02: Killed": how logs and error lines name a failed rank.
std::string describe(const FailedRank& rank);
// Its ranks alone: "rank 1", "ranks 4-7", "a rank".
std::string describe_ranks(const FailedRank& rank);

// The ranks a block placement (`ppn` per host, hosts in order, `world_size`
// ranks in all; 0: every host full) puts on `host`: "2" or "4-7"; empty when
// the host is not in the list. Fills in the rank for launchers that name only
// the host and pid (MPICH 4.0's Hydra).
std::string ranks_on_host(const std::vector<std::string>& hosts, int ppn, std::string_view host,
                          int world_size = 0);

// The host that placement puts rank `rank` ("5") on; empty when there is none
// (or `rank` is a range). Fills in the host Open MPI's exit-code report leaves out.
std::string host_of_rank(const std::vector<std::string>& hosts, int ppn, std::string_view rank);

struct Classification {
  Ending ending = Ending::success;
  std::vector<std::string> bad_hosts;  // first-seen order, deduplicated
  std::vector<FailedRank> failed;      // as the launcher reported them
  std::string reason;                  // one line, for logs and verdict.json
  // The rule that decided, when one did ("bad_node_patterns ssh-unreachable", "job_faults
  // no-space", "same_death_twice"), and the line of output it quotes.
  std::string rule = {};
  std::string line = {};
  SignalDeath death = {};  // the first failed rank's, when it died of a signal
  // The status ezpz gives the attempt: the first failed rank's (its code, or 128+N), never
  // hidden by a launcher's 0; 124 for a limit; 141 for a closed stdout; else the launcher's.
  int exit_code = 0;
  // Beside bad_hosts, one each: the line or fact that convicts that host.
  std::vector<std::string> evidence = {};
  // The ranks stopped in the teardown (SIGTERM, or ezpz's SIGKILL): innocent of the ending.
  std::vector<FailedRank> innocent = {};
};

// A host a bad-node pattern named, which pattern, and the line.
struct BadNodeHit {
  std::string host;
  std::string pattern;
  std::string line;
};

// The patterns, compiled once: what watches the launcher's stderr line by line.
class BadNodeMatcher {
 public:
  // Throws Error naming a pattern that does not compile.
  explicit BadNodeMatcher(const std::vector<BadNodePattern>& patterns);
  // The hosts the patterns name in `text` (first capture group), first seen first, once each.
  // Matched line by line, each line's first 4 KiB.
  std::vector<std::string> hosts_in(std::string_view text) const;
  // The same, with the pattern and line of each host's first sighting.
  std::vector<BadNodeHit> hits_in(std::string_view text) const;
  bool empty() const { return regexes_.empty(); }

 private:
  std::vector<std::string> names_;
  std::vector<std::regex> regexes_;
};

// Whether `host` is one of `hosts` (by short name); an empty list holds every host (not known).
bool among_hosts(const std::vector<std::string>& hosts, std::string_view host);

// Throws Error naming the pattern when a regex does not compile.
Classification classify_attempt(const AttemptFacts& facts,
                                const std::vector<BadNodePattern>& patterns);

// Whether another attempt can help.
bool worth_retrying(Ending ending);

// Seconds to wait before attempt `attempt` (2, 3, ...): 5, 10, 20, ... capped.
double backoff_seconds(int attempt, double first = 5, double cap = 60);

// The allocation split into the nodes a job runs on and its spares.
struct NodePool {
  std::vector<std::string> active;
  std::vector<std::string> spares;
  std::vector<std::string> retired;  // swapped out as bad
};

// The first `active` hosts run the job; the next `spares` wait. Throws Error
// when the allocation is too small.
NodePool split_pool(const std::vector<std::string>& hosts, int spares);

// The pool for --spares: the plan's hosts stay active, and the spares are the
// allocation's hosts the plan leaves unused, then (when those are too few)
// the plan's last hosts. Throws Error when no host would stay active.
NodePool plan_pool(const std::vector<std::string>& planned,
                   const std::vector<std::string>& available, int spares);

// Swaps each named bad host that is active for the next spare. A host is retired only on
// evidence against it: with none named (or none of them active) nothing is swapped. Returns the
// swaps made ("bad -> spare").
std::vector<std::string> replace_bad_nodes(NodePool& pool, const std::vector<std::string>& bad);

}  // namespace ezpz
