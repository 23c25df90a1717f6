#pragma once
// Run records on disk: ./.ezpz/runs/<id>/ (or --runs-dir, EZPZ_RUNS_DIR) with
// run.json, plan.json, hostfile, lock and attempt-N/{output.log,verdict.json}.
// Only this user can read them (0700): a job's output may hold what it should not.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ezpz/core/env.hpp"
#include "ezpz/supervise/run_prune.hpp"
#include "ezpz/supervise/run_record.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {

// --runs-dir, else EZPZ_RUNS_DIR, else ./.ezpz/runs.
std::string runs_directory(const std::optional<std::string>& flag, const Env& env);

class RunRecorder {
 public:
  // When the run's lock is taken: at once, or by lock() (a launch takes it once the launcher has
  // started: the lock file is an inode, created off the launch's critical path).
  enum class Lock { now, later };
  // Creates RUNS_DIR/ID exclusively (mkdir): when another launch already took
  // the id, the next of run_id_choice, a bounded number of times. Then takes the
  // run's lock (RUNS_DIR/ID/lock, held until destruction or ezpz's death), unless `later`.
  // Throws Error naming the directory when it cannot create one.
  RunRecorder(const std::string& runs_dir, const std::string& base_id, Lock when = Lock::now);
  ~RunRecorder();
  RunRecorder(RunRecorder&& other) noexcept;  // the lock goes with it
  RunRecorder& operator=(RunRecorder&&) = delete;
  // Takes the lock, best effort; before run.json exists, which readers wait for, so no reader
  // sees a free lock on a live run. Once: a second open's flock would conflict with the first.
  void lock();
  // The run's id: `base_id`, or the choice that was free.
  const std::string& id() const { return id_; }
  const std::string& directory() const { return directory_; }
  // Creates attempt-N and returns its path.
  std::string attempt_directory(int attempt) const;
  // attempt-N's path, without creating it.
  std::string attempt_path(int attempt) const;
  // Writes DIRECTORY/relative atomically (a reader never sees half a file).
  void write(const std::string& relative, const std::string& text);
  // Creates the temporary of DIRECTORY/relative's next write now (PendingFile): that write
  // only fills and renames it. Throws Error as write().
  void prepare(const std::string& relative);

 private:
  std::string id_;
  std::string directory_;
  int lock_fd_ = -1;
  std::map<std::string, PendingFile> pending_;
};

// Whether a run's ezpz still holds its lock; nullopt when there is no lock file
// or this filesystem cannot flock.
std::optional<bool> lock_held(const std::string& run_dir);

// One run's summary and where it stands (run_state, judged from this host).
// Throws Error naming the file when run.json is missing or damaged.
ListedRun read_run(const std::string& run_dir);

// Every readable run under `runs_dir`, newest first; none when it does not exist.
std::vector<ListedRun> list_runs(const std::string& runs_dir);

// The directory of the run whose id is `id` or starts with it (match_run_id).
// Throws Error when none or several match.
std::string find_run(const std::string& runs_dir, const std::string& id);

// The newest run's directory; throws Error when `runs_dir` holds none.
std::string newest_run(const std::string& runs_dir);

// What prune_runs removed (or, dry, would remove): run ids, newest first, and how
// many records there were.
struct PruneResult {
  std::vector<std::string> removed;
  std::size_t total = 0;
};

// Removes the records of `runs_dir` that `rule` lets go (prunable). Best effort:
// what cannot be read or removed stays, and nothing throws.
PruneResult prune_runs(const std::string& runs_dir, const PruneRule& rule, bool dry_run);

// The verdict.json texts of a run's attempts, in attempt order.
std::vector<std::string> attempt_verdicts(const std::string& run_dir);

// Sleeps `duration` unless SIGINT, SIGTERM or SIGHUP arrives first (then
// returns it; 0 otherwise): a back-off between attempts stays interruptible
// and ezpz still records how the run ended.
int sleep_unless_signalled(std::chrono::milliseconds duration);

// `when` in local time, ISO 8601 with the offset: 2026-11-22T09:41:07+0000.
std::string local_time_iso(std::chrono::system_clock::time_point when);

}  // namespace ezpz::sys
