#include "ezpz/sys/run_records.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/signals.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void cannot_create(const std::string& path, const std::string& why) {
  throw Error(fmt::format("{}: cannot create the run record: {}", path, why), ExitCode::failure);
}

// The runs directory: one mkdir in the usual case, where it exists (its mode is the user's
// then); made with its parents, private, the first time.
void make_runs_directory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return;
  if (!make_directories(path)) cannot_create(path, std::strerror(errno));
}

std::string summary_path(const fs::path& run_dir) {
  return (run_dir / "run.json").string();
}
std::string lock_path(const std::string& run_dir) {
  return run_dir + "/lock";
}

// How many ids a launch tries before giving up: collisions need launches in the
// same second with the same pid (pid namespaces), so a handful at most.
constexpr int k_id_choices = 100;

// mkdir, not create_directories: EEXIST is how a launch learns that another took the id.
bool claim_directory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) == 0) return true;
  if (errno == EEXIST) return false;
  cannot_create(path, std::strerror(errno));
}

}  // namespace

std::string runs_directory(const std::optional<std::string>& flag, const Env& env) {
  if (flag) return *flag;
  if (auto dir = get_nonempty(env, "EZPZ_RUNS_DIR")) return *dir;
  return ".ezpz/runs";
}

RunRecorder::RunRecorder(const std::string& runs_dir, const std::string& base_id, Lock when) {
  make_runs_directory(runs_dir);
  for (int n = 1; n <= k_id_choices; ++n) {
    id_ = run_id_choice(base_id, n);
    directory_ = fmt::format("{}/{}", runs_dir, id_);
    if (claim_directory(directory_)) {
      if (when == Lock::now) lock();
      return;
    }
  }
  throw Error(fmt::format("{}/{}: cannot create the run record: it exists, and so do -2 to -{} "
                          "after it",
                          runs_dir, base_id, k_id_choices),
              ExitCode::failure);
}

RunRecorder::RunRecorder(RunRecorder&& other) noexcept
    : id_(std::move(other.id_)),
      directory_(std::move(other.directory_)),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      pending_(std::move(other.pending_)) {}

RunRecorder::~RunRecorder() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

// Best effort: where flock fails (Lustre mounted without it) the file goes, and `ezpz runs`
// says it cannot tell.
void RunRecorder::lock() {
  lock_fd_ = ::open(lock_path(directory_).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) == 0) return;
  ::unlink(lock_path(directory_).c_str());
  ::close(lock_fd_);
  lock_fd_ = -1;
}

std::string RunRecorder::attempt_path(int attempt) const {
  return attempt_dir(directory_, attempt);
}

std::string RunRecorder::attempt_directory(int attempt) const {
  std::string path = attempt_path(attempt);
  claim_directory(path);  // inside the run's own directory: there already after a relaunch
  return path;
}

void RunRecorder::write(const std::string& relative, const std::string& text) {
  if (auto pending = pending_.extract(relative)) return pending.mapped().commit(text);
  write_file({.path = fmt::format("{}/{}", directory_, relative), .contents = text});
}

void RunRecorder::prepare(const std::string& relative) {
  if (pending_.contains(relative)) return;
  pending_.emplace(relative, PendingFile(fmt::format("{}/{}", directory_, relative)));
}

std::optional<bool> lock_held(const std::string& run_dir) {
  const int fd = ::open(lock_path(run_dir).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<bool> held;
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    held = false;
  } else if (errno == EWOULDBLOCK) {
    held = true;
  }
  ::close(fd);  // and with it the shared lock, at once
  return held;
}

ListedRun read_run(const std::string& run_dir) {
  const std::string path = summary_path(run_dir);
  auto text = read_file_if_present(path);
  if (!text) throw Error(fmt::format("{}: no run record (run.json) there", run_dir));
  ListedRun run{parse_summary(*text, path), RunState::finished};
  run.state = run_state(run.summary, hostname(), [&] { return lock_held(run_dir); });
  return run;
}

std::vector<ListedRun> list_runs(const std::string& runs_dir) {
  std::vector<ListedRun> runs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(runs_dir, error)) {
    try {
      runs.push_back(read_run(entry.path().string()));
    } catch (const Error&) {
      continue;  // not a run, one still being created, or damaged: `runs show` names it
    }
  }
  std::sort(runs.begin(), runs.end(),
            [](const auto& a, const auto& b) { return started_after(a.summary, b.summary); });
  return runs;
}

std::string find_run(const std::string& runs_dir, const std::string& id) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(runs_dir, error)) {
    names.push_back(entry.path().filename().string());
  }
  auto name = match_run_id(names, id, "runs", fmt::format("in {}", runs_dir));
  if (!name) throw Error(fmt::format("runs: no run {} in {}", id, runs_dir));
  return (fs::path(runs_dir) / *name).string();
}

std::string newest_run(const std::string& runs_dir) {
  std::vector<ListedRun> runs = list_runs(runs_dir);
  if (runs.empty()) throw Error(fmt::format("runs: no runs recorded in {}", runs_dir));
  return (fs::path(runs_dir) / runs.front().summary.id).string();
}

namespace {

// Every launch lists the runs directory (50-odd records) to decide whether to prune.
std::vector<std::string> record_names(const std::string& runs_dir) {
  return entry_names(runs_dir, [](const DirEntry& entry) { return entry.directory; });
}

// Since run.json was last written: when the run ended, for a run that is over.
std::chrono::seconds record_age(const std::string& run_dir) {
  std::error_code error;
  auto written = fs::last_write_time(summary_path(run_dir), error);
  if (error) return std::chrono::seconds(0);
  return std::chrono::duration_cast<std::chrono::seconds>(fs::file_time_type::clock::now() -
                                                          written);
}

bool prunable_record(const std::string& run_dir, const PruneRule& rule) {
  try {
    const ListedRun run = read_run(run_dir);
    return prunable(run.state, lock_held(run_dir), record_age(run_dir), rule);
  } catch (const Error&) {
    return false;  // not a run, one still being created, or damaged: `runs show` names it
  }
}

// run.json's started_ns; 0 where it cannot be read (then the id decides). Its text alone: no
// lock probed, as read_run() would.
std::int64_t started_ns_of(const std::string& runs_dir, const std::string& name) {
  const std::optional<std::string> text =
      read_file_if_present(summary_path(fs::path(runs_dir) / name));
  return text ? summary_started_ns(*text) : 0;  // neither throws: no Error to catch
}

}  // namespace

PruneResult prune_runs(const std::string& runs_dir, const PruneRule& rule, bool dry_run) {
  std::vector<std::string> names = record_names(runs_dir);
  PruneResult result{{}, names.size()};
  if (rule.batched && rule.keep && !prune_due(names.size(), *rule.keep)) return result;
  const auto started_ns = [&](const std::string& name) { return started_ns_of(runs_dir, name); };
  for (const std::string& name : beyond_newest(std::move(names), rule.keep, started_ns)) {
    const std::string run_dir = (fs::path(runs_dir) / name).string();
    if (!prunable_record(run_dir, rule)) continue;
    std::error_code error;
    if (!dry_run) fs::remove_all(run_dir, error);
    if (!error) result.removed.push_back(name);
  }
  return result;
}

std::vector<std::string> attempt_verdicts(const std::string& run_dir) {
  std::vector<std::string> verdicts;
  for (int attempt = 1;; ++attempt) {
    auto text = read_file_if_present(attempt_dir(run_dir, attempt) + "/verdict.json");
    if (!text) return verdicts;
    verdicts.push_back(std::move(*text));
  }
}

int sleep_unless_signalled(std::chrono::milliseconds duration) {
  sigset_t signals, saved;
  sigemptyset(&signals);
  for (int sig : supervised_job_signals()) {
    if (!job_only_signal(sig)) sigaddset(&signals, sig);
  }
  pthread_sigmask(SIG_BLOCK, &signals, &saved);
  const timespec timeout{static_cast<time_t>(duration.count() / 1000),
                         static_cast<long>(duration.count() % 1000) * 1000000};
  int sig = 0;
  while ((sig = ::sigtimedwait(&signals, nullptr, &timeout)) < 0 && errno == EINTR) {
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  return sig > 0 ? sig : 0;
}

std::string local_time_iso(std::chrono::system_clock::time_point when) {
  std::time_t now = std::chrono::system_clock::to_time_t(when);
  std::tm local{};
  ::localtime_r(&now, &local);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &local);
  return text;
}

}  // namespace ezpz::sys
