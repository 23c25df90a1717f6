#include "ezpz/sys/processes.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "ezpz/core/env.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {
namespace {

std::string joined_command_line(std::string cmdline) {
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  return cmdline;
}

// Gone, or a zombie waiting for its parent: either way it no longer runs.
bool finished(int pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  auto stat = read_file_if_present(fmt::format("/proc/{}/stat", pid));
  if (!stat) return true;
  std::size_t paren = stat->rfind(')');
  return paren != std::string::npos && paren + 2 < stat->size() && (*stat)[paren + 2] == 'Z';
}

bool all_finished(const std::vector<SignalResult>& results) {
  return std::all_of(results.begin(), results.end(),
                     [](const SignalResult& r) { return r.gone || !r.error.empty(); });
}

void wait_for_exits(std::vector<SignalResult>& results, std::chrono::milliseconds grace) {
  auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    for (SignalResult& r : results) {
      if (!r.gone && r.error.empty()) r.gone = finished(r.process.pid);
    }
    if (all_finished(results) || std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int parent_of(int pid) {
  auto stat = read_file_if_present(fmt::format("/proc/{}/stat", pid));
  if (!stat) return 0;
  std::size_t paren = stat->rfind(')');  // the name may hold spaces and parentheses
  if (paren == std::string::npos) return 0;
  int parent = 0;
  char state = 0;
  std::sscanf(stat->c_str() + paren + 1, " %c %d", &state, &parent);
  return parent;
}

// A zombie's name and wait status, from /proc/PID/stat: "PID (COMM) STATE ..." where the wait
// status is field 52 (proc(5)); nullopt for a process still running, or gone.
std::optional<std::pair<std::string, int>> zombie_status(int pid) {
  auto stat = read_file_if_present(fmt::format("/proc/{}/stat", pid));
  if (!stat) return std::nullopt;
  const std::size_t open = stat->find('(');
  const std::size_t paren = stat->rfind(')');  // the name may hold spaces and parentheses
  if (open == std::string::npos || paren == std::string::npos || paren + 2 >= stat->size() ||
      (*stat)[paren + 2] != 'Z') {
    return std::nullopt;
  }
  std::istringstream fields(stat->substr(paren + 2));
  std::string field;
  for (int index = 3; index <= 52 && fields >> field; ++index) {
    if (index == 52) return std::pair{stat->substr(open + 1, paren - open - 1), std::stoi(field)};
  }
  return std::nullopt;
}

}  // namespace

std::string command_of(int pid) {
  return joined_command_line(read_file_if_present(fmt::format("/proc/{}/cmdline", pid)).value_or(""));
}

std::string make_run_id(const std::string& host) {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  return fmt::format("{}-{}-{}", stamp, host, ::getpid());
}

namespace {

// `pid` as a process of some run: nullopt when it carries no EZPZ_RUN_ID, is another user's or
// has gone.
std::optional<kill::Process> tagged_process(int pid) {
  auto environ = read_file_if_present(fmt::format("/proc/{}/environ", pid));
  if (!environ) return std::nullopt;
  kill::Process process{
      .pid = pid,
      .run_id = kill::environ_value(*environ, kill::k_run_id_variable).value_or(""),
      .command = "",
      .parent = 0,
      .job_id = ""};
  if (process.run_id.empty()) return std::nullopt;
  process.command = command_of(pid);
  process.parent = parent_of(pid);
  process.job_id =
      kill::job_id_of([&](std::string_view name) { return kill::environ_value(*environ, name); });
  return process;
}

// The children of every thread of `pid` (none once it has gone).
std::vector<int> children_of(int pid) {
  std::vector<int> children;
  std::error_code error;
  for (const auto& task :
       std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid), error)) {
    std::istringstream words(read_file_if_present(task.path().string() + "/children").value_or(""));
    for (int child = 0; words >> child;) children.push_back(child);
  }
  return children;
}

}  // namespace

std::vector<kill::Process> list_processes() {
  std::vector<int> pids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    if (auto pid = parse_count(entry.path().filename().string())) {
      pids.push_back(static_cast<int>(*pid));
    }
  }
  return list_processes(pids);
}

std::vector<kill::Process> list_processes(const std::vector<int>& pids) {
  std::vector<kill::Process> processes;
  for (int pid : pids) {
    if (auto process = tagged_process(pid)) processes.push_back(std::move(*process));
  }
  return processes;
}

void adopt_orphans() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);  // best effort: without it, the sweep reads all of /proc
}

std::optional<std::vector<int>> descendants_of_self() {
  int subreaper = 0;
  const bool adopting = ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper) == 0 && subreaper != 0;
  if (!adopting || !read_file_if_present(fmt::format("/proc/self/task/{}/children", ::gettid()))) {
    return std::nullopt;
  }
  std::vector<int> found = children_of(::getpid());
  for (std::size_t next = 0; next < found.size(); ++next) {
    std::vector<int> children = children_of(found[next]);
    found.insert(found.end(), children.begin(), children.end());
  }
  return found;
}

void reap_exited(const std::vector<int>& pids) {
  for (int pid : pids) ::waitpid(pid, nullptr, WNOHANG);
}

std::vector<SignalResult> signal_once(const std::vector<kill::Process>& targets, int signal) {
  std::vector<SignalResult> results;
  for (const kill::Process& target : targets) {
    SignalResult result{target, false, false, ""};
    if (::kill(target.pid, signal) != 0) {
      if (errno == ESRCH) {
        result.gone = true;
      } else {
        result.error = std::strerror(errno);
      }
    }
    results.push_back(std::move(result));
  }
  return results;
}

std::vector<SignalResult> signal_processes(const std::vector<kill::Process>& targets, int signal,
                                           std::chrono::milliseconds grace) {
  std::vector<SignalResult> results = signal_once(targets, signal);
  if (signal == SIGSTOP || signal == SIGCONT) {
    for (SignalResult& r : results) r.gone = r.error.empty();
    return results;
  }
  wait_for_exits(results, grace);
  if (signal == SIGKILL || all_finished(results)) return results;
  for (SignalResult& r : results) {
    if (r.gone || !r.error.empty()) continue;
    ::kill(r.process.pid, SIGKILL);
    r.escalated = true;
  }
  wait_for_exits(results, std::chrono::seconds(2));
  return results;
}

std::optional<KilledPart> killed_part(int launcher, const std::vector<std::string>& names) {
  for (int child : children_of(launcher)) {
    const auto zombie = zombie_status(child);
    if (!zombie || !WIFSIGNALED(zombie->second)) continue;
    if (std::find(names.begin(), names.end(), zombie->first) == names.end()) continue;
    return KilledPart{.pid = child, .name = zombie->first, .signal = WTERMSIG(zombie->second)};
  }
  return std::nullopt;
}

}  // namespace ezpz::sys
