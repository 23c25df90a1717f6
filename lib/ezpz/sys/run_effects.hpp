#pragma once
// The attempt loop's side effects on this node, for real (supervise/attempt_loop.hpp's
// RunEffects): the run record, the run's leftover processes, the back-off's sleep and
// ezpz's lines on stderr.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ezpz/core/env.hpp"
#include "ezpz/supervise/attempt_loop.hpp"
#include "ezpz/sys/run_records.hpp"

namespace ezpz::sys {

class NodeEffects final : public RunEffects {
 public:
  // `id`: the run's id, until open_record finds it taken. Makes ezpz the subreaper of what
  // it starts (adopt_orphans), so that stop_leftovers finds the run's orphans among its own
  // descendants.
  explicit NodeEffects(std::string id);

  // Starts the run record under --runs-dir (or EZPZ_RUNS_DIR, .ezpz/runs). The record's
  // directory decides the id: another launch may have taken this one. A read-only or full
  // directory costs the record, never the job: a warning, and recording() stays false.
  void open_record(const std::optional<std::string>& runs_dir, const Env& env);
  const std::string& id() const { return id_; }
  // The record's directory; only while recording().
  const std::string& directory() const { return recorder_->directory(); }

  // From here until write_deferred(), the record's files are kept in memory, in order: the
  // launcher's start does not wait for the disk (a file creation costs ~0.1-0.5 ms on a
  // local disk, a metadata server's round trip on Lustre). Each file is still written
  // whole or not at all; only a SIGKILL in between loses them.
  void defer_records() { deferring_ = true; }
  // Writes what was deferred (the executor calls it once the launcher has started).
  void write_deferred();
  ~NodeEffects() override;

  bool recording() const override { return recorder_.has_value(); }
  void record(const std::string& relative, const std::string& text) override;
  void record_lazily(const std::string& relative, std::function<std::string()> make) override;
  std::string output_path(int attempt) override;
  void running(const LaunchPlan& plan) override;
  std::vector<std::string> stop_leftovers(bool launcher_failed) override;
  AddressHosts hosts_at(const std::vector<std::string>& addresses,
                        const std::vector<std::string>& hosts) override;
  int wait(double seconds) override;
  void say(const std::string& line) override;

 private:
  void prepare_ending(int attempt);
  std::string id_;
  std::optional<RunRecorder> recorder_;
  bool deferring_ = false;
  bool lock_later_ = false;  // the record was opened deferring: write_deferred takes the lock
  std::vector<std::function<void()>> deferred_;
};

}  // namespace ezpz::sys
