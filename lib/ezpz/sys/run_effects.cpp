#include "ezpz/sys/run_effects.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/launch/render.hpp"
#include "ezpz/supervise/kill.hpp"
#include "ezpz/sys/addresses.hpp"
#include "ezpz/sys/processes.hpp"

namespace ezpz::sys {

void NodeEffects::open_record(const std::optional<std::string>& runs_dir, const Env& env) {
  try {
    lock_later_ = deferring_;
    recorder_.emplace(runs_directory(runs_dir, env), id_,
                      lock_later_ ? RunRecorder::Lock::later : RunRecorder::Lock::now);
    id_ = recorder_->id();
  } catch (const Error& e) {
    log::warn("{}; the job runs without one", e.what());
  }
}

// A launcher that never started (it could not be spawned) still leaves its record.
NodeEffects::~NodeEffects() {
  write_deferred();
}

void NodeEffects::write_deferred() {
  if (recorder_ && std::exchange(lock_later_, false)) recorder_->lock();  // before run.json
  deferring_ = false;
  for (const auto& write : deferred_) write();
  deferred_.clear();
}

void NodeEffects::record(const std::string& relative, const std::string& text) {
  record_lazily(relative, [text] { return text; });
}

// Records are best effort once the job runs: a full disk must not lose its exit status.
// Deferred, the text too is made once the launcher has started: the plan's and the summary's
// JSON (about 230 K instructions) were the launcher's to wait for.
void NodeEffects::record_lazily(const std::string& relative, std::function<std::string()> make) {
  if (!recorder_) return;
  if (deferring_) {
    deferred_.push_back([this, relative, make = std::move(make)]() mutable {
      record_lazily(relative, std::move(make));
    });
    return;
  }
  try {
    recorder_->write(relative, make());
  } catch (const Error& e) {
    log::warn("run record: {}", e.what());
  }
}

// Deferred, the attempt's directory is made before the output is recorded into it: the
// executor opens the record only once the launcher has started.
std::string NodeEffects::output_path(int attempt) {
  if (deferring_) {
    deferred_.push_back([this, attempt] { output_path(attempt); });
    return recorder_->attempt_path(attempt) + "/output.log";
  }
  try {
    std::string path = recorder_->attempt_directory(attempt) + "/output.log";
    prepare_ending(attempt);
    return path;
  } catch (const Error& e) {
    log::warn("{}; this attempt's output is not recorded", e.what());
    return "";
  }
}

// The files an attempt's end writes get their inodes now, while the launcher starts, rather
// than once it has exited, when ezpz's exit waits for them (PendingFile). A failure here is
// the write's to report.
void NodeEffects::prepare_ending(int attempt) {
  try {
    recorder_->prepare(attempt_dir_name(attempt) + "/verdict.json");
    recorder_->prepare("run.json");
  } catch (const Error&) {
  }
}

void NodeEffects::running(const LaunchPlan& plan) {
  if (log::enabled(log::Level::info)) log::info("running: {}", render_command(plan));
}

NodeEffects::NodeEffects(std::string id) : id_(std::move(id)) {
  adopt_orphans();
}

namespace {

// Where this run's processes may be left. After a launcher that exited 0, among ezpz's own
// descendants only: what its children orphaned was adopted (adopt_orphans), and that walk
// costs a few reads where reading every process's environment cost milliseconds per launch.
// After a failure the whole node, as before: a launcher stopped mid-start-up may have left
// some of the run's processes under another parent (an sshd, a scheduler's daemon).
std::vector<kill::Process> run_processes(bool launcher_failed, std::vector<int>& adopted) {
  if (!launcher_failed) {
    if (auto descendants = descendants_of_self()) {
      adopted = *descendants;
      return list_processes(*descendants);
    }
  }
  return list_processes();
}

}  // namespace

// Processes of this run still alive on this node once the launcher has gone: an MPI proxy
// or an ssh client that a launcher stopped mid-start-up leaves orphaned (Hydra's do not
// exit when mpiexec dies before they connect). They would outlive the run, and hold
// sockets and GPUs the next attempt needs, so they get the launcher's own ending: SIGTERM,
// then SIGKILL after a short grace. Other nodes' are beyond reach here; `ezpz kill --all-nodes`
// sweeps them.
std::vector<std::string> NodeEffects::stop_leftovers(bool launcher_failed) {
  std::vector<int> adopted;
  const auto targets =
      kill::select_targets(run_processes(launcher_failed, adopted), id_, getpid(), {});
  std::vector<std::string> stopped;
  for (const SignalResult& r : signal_processes(targets, SIGTERM, std::chrono::milliseconds(500)))
    stopped.push_back(fmt::format("{} {}", r.process.pid, r.process.command));
  // Only a process just stopped can have left orphans the walk above has not seen.
  const bool walk_again = launcher_failed || !stopped.empty();
  reap_exited(walk_again ? descendants_of_self().value_or(adopted) : adopted);
  if (!stopped.empty())
    say(
        fmt::format("stopped {} process(es) of the run left on this node after "
                    "the launcher exited: {}",
                    stopped.size(), fmt::join(stopped, "; ")));
  return stopped;
}

AddressHosts NodeEffects::hosts_at(const std::vector<std::string>& addresses,
                                   const std::vector<std::string>& hosts) {
  return hosts_at_addresses(addresses, hosts);
}

int NodeEffects::wait(double seconds) {
  return sleep_unless_signalled(std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(seconds)));
}

void NodeEffects::say(const std::string& line) {
  log::write("ezpz: ", line);
}

}  // namespace ezpz::sys
