#pragma once
// Which run records go: every launch leaves .ezpz/runs/ID behind (81 runs, 3 MB
// in a user's first hour), so a launch keeps the newest EZPZ_RUNS_KEEP of them
// and `ezpz runs prune` removes more on request. Pure: the directory is read and
// changed by sys/run_records.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/env.hpp"
#include "ezpz/supervise/run_record.hpp"

namespace ezpz {

// How many run records a launch keeps when EZPZ_RUNS_KEEP is not set.
inline constexpr std::size_t k_default_runs_kept = 50;

// What EZPZ_RUNS_KEEP asks for: the newest N records (nullopt: all of them), and
// a warning line when its value is not a count >= 1 or "all" (then all are kept:
// a typo never deletes anything).
struct RunsKept {
  std::optional<std::size_t> newest;
  std::string warning;
};
RunsKept runs_kept(const Env& env);

// "90s", "30m", "12h", "7d", "2w" -> seconds; nullopt for anything else.
std::optional<std::chrono::seconds> parse_age(std::string_view text);

// What goes: records beyond the newest `keep` (all when nullopt) that are also
// older than `older_than` (any age when nullopt).
// `batched`: a launch's pruning, which waits for prune_due.
struct PruneRule {
  std::optional<std::size_t> keep;
  std::optional<std::chrono::seconds> older_than;
  bool batched = false;
};

// Whether a launch prunes now: once the records exceed `keep` by a tenth of it (50
// kept: at 56), and then down to `keep`. A removal is a dozen file-system operations
// after the job (0.1-3 ms each on this VM's ext4, a metadata round trip each on
// Lustre), so one launch in six pays for six and the other five for none;
// `ezpz runs prune` is exact.
bool prune_due(std::size_t records, std::size_t keep);

// When a run started, in nanoseconds since the epoch (run.json's started_ns; 0 where it
// has none): asked only of the runs of the second the cut falls in.
using StartedNs = std::function<std::int64_t(const std::string& name)>;

// The names in `names` (run ids) past the newest `keep` (every name when it is
// nullopt), newest first, as `ezpz runs` lists them (started_after). Ids begin with
// their start time to the second, so that is reverse name order between seconds;
// within one second the pids that follow would decide, and they wrap, so where the
// cut falls inside a second, `started_ns` decides which of its runs are kept (then
// the id). A pruning launch reads no run.json for this unless the newest kept and the
// newest not kept began in one second.
std::vector<std::string> beyond_newest(std::vector<std::string> names,
                                       std::optional<std::size_t> keep,
                                       const StartedNs& started_ns);

// Whether a record past the newest may go: its run is over (finished, or lost:
// its ezpz died), its lock is not held, and it is old enough. Never a running
// run, nor one this host cannot judge (launched elsewhere, or no lock to probe).
bool prunable(RunState state, std::optional<bool> lock_held, std::chrono::seconds age,
              const PruneRule& rule);

}  // namespace ezpz
