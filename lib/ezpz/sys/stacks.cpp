#include "ezpz/sys/stacks.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ezpz/core/text.hpp"
#include "ezpz/launchers/rank_env.hpp"
#include "ezpz/stage/yeet.hpp"
#include "ezpz/supervise/kill.hpp"
#include "ezpz/supervise/stacks.hpp"
#include "ezpz/sys/processes.hpp"
#include "ezpz/sys/spawn.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {
namespace {

using Clock = std::chrono::steady_clock;

// Processes of a run that are never a rank, though the launcher's variables may be in their
// environment: the launchers, their proxies, and the relay above each rank. torchrun is a
// Python script (`python3 /usr/bin/torchrun`, `python3 -m torch.distributed.run`): started by
// Hydra on several hosts it holds Hydra's PMI_RANK, and dies of the SIGUSR1 --signal sends.
constexpr std::array<std::string_view, 15> k_not_ranks = {"ezpz",
                                                          "ezpz-rankenv",
                                                          "srun",
                                                          "mpiexec",
                                                          "mpiexec.hydra",
                                                          "mpirun",
                                                          "hydra_pmi_proxy",
                                                          "aprun",
                                                          "flux",
                                                          "prterun",
                                                          "prted",
                                                          "orted",
                                                          "torchrun",
                                                          "torch.distributed.run",
                                                          "torch.distributed.launch"};
// How many words of a command may name the launcher: "python3 -m torch.distributed.run".
constexpr std::size_t k_launcher_words = 3;

// How long faulthandler may take to write a rank's stacks, and eu-stack or gdb to attach and
// walk them (gdb reads libtorch's symbols in ~5 s).
constexpr auto k_python_wait = std::chrono::seconds(3);
constexpr auto k_native_wait = std::chrono::seconds(60);

// The programs that take a native rank's stacks, every thread's, the first on PATH used:
// eu-stack (elfutils) walks a process with libtorch loaded in ~0.2 s, gdb reads libtorch's
// symbols first, ~6 s (python3 with torch imported, two threads). Both attach with ptrace.
struct NativeTool {
  std::string_view program;
  std::initializer_list<std::string_view> args;  // "{pid}": the rank's
};
const std::array<NativeTool, 2> k_native_tools = {{
    {"eu-stack", {"-i", "-s", "-m", "-p", "{pid}"}},
    {"gdb", {"-batch", "-nx", "-p", "{pid}", "-ex", "thread apply all bt"}},
}};

struct Rank {
  int rank = -1;
  kill::Process process;
};

// Where a launcher placed a process: its RANK as ezpz-rankenv maps it, and its node, from
// `environ` (a /proc/PID/environ block).
struct Placement {
  std::optional<int> rank;
  std::string host;
};

// The node a process runs on, as the node's `ezpz stacks --on-node` names its own (yeet's
// node_name: SLURMD_NODENAME, Hydra's MPIR_CVAR_CH3_INTERFACE_HOSTNAME, else the host name).
std::string node_of(const std::string& environ) {
  Env env;
  for (std::string_view entry : split(environ, '\0')) {
    const std::size_t equals = entry.find('=');
    if (equals != std::string_view::npos) {
      env.insert_or_assign(std::string(entry.substr(0, equals)),
                           std::string(entry.substr(equals + 1)));
    }
  }
  return yeet::node_name(env, hostname());
}

Placement placement_of(const std::string& environ) {
  // map_rank_env looks up through a plain function pointer: the block and the
  // values it was given live here for the one call.
  thread_local const std::string* block = nullptr;
  thread_local std::deque<std::string> values;
  block = &environ;
  values.clear();
  EnvLookup lookup = [](const char* name) -> const char* {
    std::optional<std::string> value = kill::environ_value(*block, name);
    return value ? values.emplace_back(*value).c_str() : nullptr;
  };
  const std::string launcher = kill::environ_value(environ, "EZPZ_LAUNCHER").value_or("");
  Placement placement{.rank = std::nullopt, .host = node_of(environ)};
  // RANK as the rank itself reads it (ezpz-rankenv's, torchrun's), before the launcher's: a
  // torchrun rank started through Hydra also holds Hydra's PMI_RANK, its node's number.
  if (auto rank = parse_count(kill::environ_value(environ, "RANK").value_or(""))) {
    placement.rank = static_cast<int>(*rank);
    return placement;
  }
  for (const auto& [name, value] : map_rank_env(launcher, lookup)) {
    if (auto rank = parse_count(value); rank && name == "RANK")
      placement.rank = static_cast<int>(*rank);
  }
  return placement;
}

// Whether one of the first words of `command` names a launcher (k_not_ranks).
bool is_launcher(const std::string& command) {
  const auto words = split(command, ' ');
  for (std::size_t i = 0; i < std::min(words.size(), k_launcher_words); ++i) {
    const std::string_view name = words[i].substr(words[i].rfind('/') + 1);
    if (std::find(k_not_ranks.begin(), k_not_ranks.end(), name) != k_not_ranks.end()) return true;
  }
  return false;
}

// The run's ranks on node `here`: processes a launcher gave a rank there, not launchers,
// topmost per rank. Where several "nodes" share one machine (the tests' simulated PBS job and
// Slurm cluster), each node's copy sees every rank, and reports its own.
std::vector<Rank> ranks_of_run(const std::string& run_id, const std::string& here) {
  std::vector<Rank> candidates;
  for (const kill::Process& p : list_processes()) {
    if (p.run_id != run_id || p.pid == ::getpid()) continue;
    if (is_launcher(p.command)) continue;
    auto environ = read_file_if_present(fmt::format("/proc/{}/environ", p.pid));
    const Placement placed = placement_of(environ.value_or(""));
    if (placed.rank && placed.host == here) candidates.push_back({*placed.rank, p});
  }
  std::vector<Rank> ranks;
  std::copy_if(candidates.begin(), candidates.end(), std::back_inserter(ranks), [&](const Rank& r) {
    return std::none_of(candidates.begin(), candidates.end(), [&](const Rank& parent) {
      return parent.process.pid == r.process.parent && parent.rank == r.rank;
    });
  });
  std::sort(ranks.begin(), ranks.end(),
            [](const Rank& a, const Rank& b) { return a.rank < b.rank; });
  return ranks;
}

// The hook's file, kept open (and deleted) by a Python rank: /proc/PID/fd/N; nullopt when the
// rank has none or no longer catches SIGQUIT (its own code took the signal back).
std::optional<std::string> python_hook_file(int pid) {
  auto status = read_file_if_present(fmt::format("/proc/{}/status", pid));
  const std::size_t caught = status ? status->find("SigCgt:\t") : std::string::npos;
  if (caught == std::string::npos) return std::nullopt;
  const unsigned long long mask = std::stoull(status->substr(caught + 8, 16), nullptr, 16);
  if ((mask & (1ULL << (SIGQUIT - 1))) == 0) return std::nullopt;
  std::error_code error;
  for (const auto& fd :
       std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid), error)) {
    const std::string target = std::filesystem::read_symlink(fd.path(), error).filename().string();
    if (target.rfind("ezpz-stacks-", 0) == 0 && target.find(" (deleted)") != std::string::npos) {
      return fd.path().string();
    }
  }
  return std::nullopt;
}

long file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

// SIGQUIT to the rank, and what faulthandler appended to the hook's file, once it stops growing.
std::string python_stacks(int pid, const std::string& file) {
  const long before = file_size(file);
  if (before < 0 || ::kill(pid, SIGQUIT) != 0) return "";
  const auto deadline = Clock::now() + k_python_wait;
  long seen = before;
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const long now = file_size(file);
    if (now > before && now == seen) break;
    seen = now;
  }
  std::ifstream in(file, std::ios::binary);
  in.seekg(before);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The first of k_native_tools on PATH, and where it is.
std::optional<std::pair<const NativeTool*, std::string>> find_native_tool(const Env& env) {
  for (const NativeTool& tool : k_native_tools) {
    if (auto path = find_program(std::string(tool.program), env)) return {{&tool, *path}};
  }
  return std::nullopt;
}

std::vector<std::string> native_argv(const std::pair<const NativeTool*, std::string>& tool,
                                     int pid) {
  std::vector<std::string> argv{tool.second};
  for (std::string_view arg : tool.first->args) {
    argv.push_back(arg == "{pid}" ? std::to_string(pid) : std::string(arg));
  }
  return argv;
}

}  // namespace

std::vector<kill::Process> node_ranks(const std::string& run_id, const std::string& node) {
  std::vector<kill::Process> processes;
  for (Rank& r : ranks_of_run(run_id, node)) {
    r.process.command = fmt::format("rank {}: {}", r.rank, r.process.command);
    processes.push_back(std::move(r.process));
  }
  return processes;
}

std::optional<std::string> native_stack_tool(const Env& env) {
  if (auto found = find_native_tool(env)) return found->second;
  return std::nullopt;
}

std::string node_stacks(const std::string& run_id, const std::string& node, const Env& env) {
  const auto tool = find_native_tool(env);
  std::vector<std::pair<Rank, CapturedChild>> native;
  std::string out;
  for (const Rank& r : ranks_of_run(run_id, node)) {
    const std::string header =
        fmt::format("# rank {} (pid {}) on {}: ", r.rank, r.process.pid, node);
    if (auto file = python_hook_file(r.process.pid)) {
      out += stacks::tag_lines(
          r.rank, header + "Python stacks (faulthandler)\n" + python_stacks(r.process.pid, *file));
    } else if (tool) {
      native.emplace_back(r, start_captured(native_argv(*tool, r.process.pid), env));
    } else {
      out += stacks::tag_lines(
          r.rank, header + "no stack: no Python hook in it and neither eu-stack nor gdb on PATH\n");
    }
  }
  // The tools run side by side. Their stderr is kept: why one could not attach ("ptrace:
  // Operation not permitted.") is the only stack such a rank gets.
  const auto deadline = Clock::now() + k_native_wait;
  for (const auto& [r, child] : native) {
    const CapturedRun run = finish_captured(child, deadline);
    out += stacks::tag_lines(
        r.rank, fmt::format("# rank {} (pid {}) on {}: native stacks ({}){}\n{}", r.rank,
                            r.process.pid, node, tool->first->program,
                            run.timed_out ? ", cut short" : "", run.out + run.err));
  }
  return out;
}

}  // namespace ezpz::sys
