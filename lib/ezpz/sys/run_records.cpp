#include "ezpz/sys/run_records.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "ezpz/error.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {
namespace fs = std::filesystem;

namespace {

void make_private_directory(const std::string& path) {
  std::error_code error;
  fs::create_directories(path, error);
  if (!error) fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace, error);
  if (error) {
    throw Error(fmt::format("{}: cannot create the run record: {}", path, error.message()),
                ExitCode::failure);
  }
}

std::string summary_path(const fs::path& run_dir) { return (run_dir / "run.json").string(); }

// How many ids a launch tries before giving up: collisions need launches in the
// same second with the same pid (pid namespaces), so a handful at most.
constexpr int k_id_choices = 100;

// mkdir, not create_directories: EEXIST is how a launch learns that another took the id.
bool claim_directory(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) == 0) return true;
  if (errno == EEXIST) return false;
  throw Error(fmt::format("{}: cannot create the run record: {}", path, std::strerror(errno)),
              ExitCode::failure);
}

}  // namespace

std::string runs_directory(const std::optional<std::string>& flag, const Env& env) {
  if (flag) return *flag;
  if (auto dir = get_nonempty(env, "EZPZ_RUNS_DIR")) return *dir;
  return ".ezpz/runs";
}

RunRecorder::RunRecorder(const std::string& runs_dir, const std::string& base_id) {
  make_private_directory(runs_dir);
  for (int n = 1; n <= k_id_choices; ++n) {
    id_ = run_id_choice(base_id, n);
    directory_ = fmt::format("{}/{}", runs_dir, id_);
    if (claim_directory(directory_)) return;
  }
  throw Error(fmt::format("{}/{}: cannot create the run record: it exists, and so do -2 to -{} "
                          "after it",
                          runs_dir, base_id, k_id_choices),
              ExitCode::failure);
}

std::string RunRecorder::attempt_directory(int attempt) const {
  std::string path = fmt::format("{}/attempt-{}", directory_, attempt);
  make_private_directory(path);
  return path;
}

void RunRecorder::write(const std::string& relative, const std::string& text) const {
  write_files({{fmt::format("{}/{}", directory_, relative), text}});
}

std::vector<RunSummary> list_runs(const std::string& runs_dir) {
  std::vector<RunSummary> runs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(runs_dir, error)) {
    auto text = read_file_if_present(summary_path(entry.path()));
    if (!text) continue;  // not a run, or one still being created
    try {
      runs.push_back(parse_summary(*text, summary_path(entry.path())));
    } catch (const Error&) {
      continue;  // a damaged record must not hide the others; `runs show` names it
    }
  }
  // Ids begin with the start time, so newest first is reverse id order.
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.id > b.id; });
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

std::vector<std::string> attempt_verdicts(const std::string& run_dir) {
  std::vector<std::string> verdicts;
  for (int attempt = 1;; ++attempt) {
    auto text = read_file_if_present(fmt::format("{}/attempt-{}/verdict.json", run_dir, attempt));
    if (!text) return verdicts;
    verdicts.push_back(std::move(*text));
  }
}

int sleep_unless_signalled(std::chrono::milliseconds duration) {
  sigset_t signals, saved;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, &saved);
  const timespec timeout{static_cast<time_t>(duration.count() / 1000),
                         static_cast<long>(duration.count() % 1000) * 1000000};
  int sig = 0;
  while ((sig = ::sigtimedwait(&signals, nullptr, &timeout)) < 0 && errno == EINTR) {
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  return sig > 0 ? sig : 0;
}

std::string local_time_iso() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &local);
  return text;
}

}  // namespace ezpz::sys
