#pragma once
// What a launch leaves behind for later (`ezpz runs`): a summary of the run
// and a verdict per attempt, as JSON, and how they read back. Pure: the files
// are written by the launch and read by `ezpz runs` (sys/run_records).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/output/startup.hpp"
#include "ezpz/supervise/attempts.hpp"
#include "ezpz/supervise/explain.hpp"

namespace ezpz {

// The layout of a run's record, relative to its directory: attempt N's files are in
// attempt-N/; its plan is the run's plan.json for the first attempt (with --spares, the
// spares held back) and attempt-N/plan.json for a later one, on new hosts.
std::string attempt_dir_name(int attempt);
// run_dir/attempt-N: the one place a path to an attempt's directory is put together.
std::string attempt_dir(const std::string& run_dir, int attempt);
std::string attempt_plan_file(int attempt);

// How one attempt ended: verdict.json in its attempt directory.
struct AttemptVerdict {
  int attempt = 1;
  std::vector<std::string> hosts;
  int exit_code = 0;         // what ezpz reports for it (124 when a limit stopped it)
  int launcher_exit = 0;     // the launcher's own status, 128+N for signal N
  int forwarded_signal = 0;  // a stop signal ezpz received and passed on
  Watchdog watchdog = Watchdog::none;
  Classification classification;
  std::vector<std::string> swaps;  // "bad -> spare", made after this attempt
  std::string failover = {};       // how the swapped host was chosen: scraped or reported
  // The failure was worth another attempt and --spares had none left (exit 75).
  bool exhausted = false;
  std::string next;                // what ezpz did next, in words
  // "PID COMMAND" of this run's processes still alive after the launcher, stopped by ezpz.
  std::vector<std::string> leftovers;
  double to_spawn_s = 0;
  std::optional<double> to_first_output_s;
  double total_s = 0;
  // Printed under the verdict, not written to verdict.json (output.log has them):
  // the output's last lines before the first failed rank was reported.
  std::vector<std::string> last_lines = {};
  std::string output_path = {};  // the attempt's output.log; empty when not recorded
  std::vector<std::string> hints = {};  // known_error_hints() of a failed attempt's output
  std::string warning = {};             // --signal's, when sent: "warned at T-600 s with SIGUSR1"
  std::vector<output::Stamp> startup = {};  // the ranks' start-up stamps: verdict.json's "startup"
  // With rank records: how many ranks ezpz-rankenv started (AttemptFacts::ranks_started), for
  // `ezpz runs explain`; null: not known.
  std::optional<std::size_t> ranks_started = std::nullopt;
};
std::string verdict_json(const AttemptVerdict& verdict);

// `ezpz runs explain --json`: the explanation, with `source` (the run or the file it read).
std::string explanation_json(const Explanation& explanation, const std::string& source);

// The run as a whole: run.json in the run directory, rewritten as it goes.
struct RunSummary {
  std::string id;
  std::string started;  // local time, ISO 8601
  // The same instant in nanoseconds since the epoch: it orders runs launched within the
  // id's second, whose pids (the rest of the id) wrap (0 in records older than it).
  std::int64_t started_ns = 0;
  std::string cwd;
  std::vector<std::string> command;
  std::string machine;
  std::string scheduler;
  std::string job_id;
  std::vector<std::string> hosts;  // the first attempt's
  std::vector<std::string> spares;
  int attempts = 0;
  std::optional<int> exit_code;  // empty while the run goes on
  std::string ending;            // the last attempt's classification
  std::string reason;
  // The host ezpz itself ran on: the record's lock only tells a live run from a
  // lost one there (empty in records older than the lock).
  std::string launched_on;
  bool operator==(const RunSummary&) const = default;
};
std::string summary_json(const RunSummary& summary);

// What `ezpz runs explain` needs of an attempt's verdict.json: the launcher's exit status and
// the attempt's hosts. Throws Error naming `source` when the text is not a verdict.
ExplainInput recorded_attempt(std::string_view verdict, std::string_view source);

// What it needs of the attempt's plan.json: its ranks in all and per host, into `in` (a rule
// needing a share of the ranks, "a Python traceback in most ranks", then speaks). Throws Error
// naming `source` when the text is not a plan.
void read_recorded_plan(std::string_view plan, std::string_view source, ExplainInput& in);

// Throws Error naming `source` when the text is not a run summary.
RunSummary parse_summary(std::string_view json, std::string_view source);

// The summary's started_ns alone, read without parsing the rest (pruning orders a burst's runs
// by it: whole parses were most of a pruning launch's work); 0 where it is absent, not an
// integer, or the text is not JSON.
std::int64_t summary_started_ns(std::string_view json);

// Where a run stands. The launching ezpz holds an exclusive lock on the record's
// `lock` file for the whole run; the kernel drops it when ezpz dies, even of
// SIGKILL, so a run with no exit code whose lock is free was lost (not a pid
// check: pids are recycled, and differ between pid namespaces).
enum class RunState {
  finished,   // it recorded its exit code
  running,    // its ezpz still holds the lock
  lost,       // its ezpz is gone without recording an end (killed, crashed, node down)
  elsewhere,  // launched on another host: its lock cannot be judged from here
  unknown,    // no lock to judge by (an older ezpz's record, or a filesystem without flock)
};
std::string_view to_string(RunState state);

// `lock_held()` probes the lock: nullopt when there is none to probe. Called only
// for a run without an exit code launched on `this_host`.
RunState run_state(const RunSummary& summary, std::string_view this_host,
                   const std::function<std::optional<bool>()>& lock_held);

struct ListedRun {
  RunSummary summary;
  RunState state = RunState::finished;
};

// Whether `a` started after `b`: by the id's second (local time, in every record), then by
// started_ns, then by the id (a taken id's next choice, ID-2, was claimed later).
bool started_after(const RunSummary& a, const RunSummary& b);
// A run id's start, to the second: its "YYYYmmdd-HHMMSS".
std::string_view run_second(std::string_view id);

// `ezpz runs`: newest first, one line each.
std::string runs_table(const std::vector<ListedRun>& runs);

// `ezpz runs show`: the summary, then one line per attempt from its verdict.json text, and its
// start-up table (output::startup_table) when the ranks were stamped.
std::string run_details(const ListedRun& run, const std::vector<std::string>& verdicts,
                        std::string_view directory);

// A run is named by its whole id or any unique start of it (`ezpz runs show`,
// `ezpz kill`): the id among `ids` equal to `prefix`, else the only one starting
// with it; nullopt when none does. Several: throws Error
// "<command>: <prefix> matches N runs <place>; give more of the id".
std::optional<std::string> match_run_id(const std::vector<std::string>& ids,
                                        std::string_view prefix, std::string_view command,
                                        std::string_view place);

// The n-th choice of id for a run whose first choice, `base`, was taken (its
// record directory already exists: two launches in the same second, with the
// same pid in different pid namespaces): base, base-2, base-3 ... Sorts after
// `base`, so still newest first.
std::string run_id_choice(std::string_view base, int n);

std::string_view to_string(Watchdog watchdog);

}  // namespace ezpz
