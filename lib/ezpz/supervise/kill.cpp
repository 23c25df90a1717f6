#include "ezpz/supervise/kill.hpp"

#include <algorithm>
#include <array>
#include <csignal>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "ezpz/core/env.hpp"
#include "ezpz/core/signals.hpp"

namespace ezpz::kill {
namespace {

// The signals `ezpz kill --signal` sends by name (its --help lists them); any other by number.
constexpr std::array<int, 10> k_named_signals = {SIGTERM, SIGINT,  SIGKILL, SIGHUP,  SIGQUIT,
                                                 SIGUSR1, SIGUSR2, SIGSTOP, SIGCONT, SIGABRT};
}  // namespace

std::optional<std::string> environ_value(std::string_view block, std::string_view name) {
  while (!block.empty()) {
    std::size_t end = block.find('\0');
    std::string_view entry = block.substr(0, end);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
        entry[name.size()] == '=') {
      return std::string(entry.substr(name.size() + 1));
    }
    if (end == std::string_view::npos) break;
    block.remove_prefix(end + 1);
  }
  return std::nullopt;
}

std::string job_id_of(const std::function<std::optional<std::string>(std::string_view)>& lookup) {
  for (std::string_view name : k_job_id_variables) {
    std::optional<std::string> value = lookup(name);
    if (value && !value->empty()) return *value;
  }
  return "";
}

std::vector<Process> select_targets(const std::vector<Process>& processes, std::string_view run_id,
                                    int self, std::string_view own_run_id) {
  std::vector<Process> targets;
  for (const Process& p : processes) {
    if (p.pid == self || p.run_id.empty()) continue;
    if (!own_run_id.empty() && p.run_id == own_run_id) continue;
    if (!run_id.empty() && p.run_id != run_id) continue;
    targets.push_back(p);
  }
  return targets;
}

std::vector<Process> of_job(const std::vector<Process>& processes, std::string_view job_id) {
  std::vector<Process> found;
  std::copy_if(processes.begin(), processes.end(), std::back_inserter(found),
               [&](const Process& p) { return p.job_id == job_id; });
  return found;
}

std::vector<std::string> describe_runs(const std::vector<Process>& processes) {
  std::vector<std::string> runs;  // in order of first appearance
  for (const Process& p : processes) {
    if (std::find(runs.begin(), runs.end(), p.run_id) == runs.end()) runs.push_back(p.run_id);
  }
  std::vector<std::string> lines;
  for (const std::string& run : runs) {
    auto first = std::find_if(processes.begin(), processes.end(),
                              [&](const Process& p) { return p.run_id == run; });
    auto count = std::count_if(processes.begin(), processes.end(),
                               [&](const Process& p) { return p.run_id == run; });
    std::string job = first->job_id.empty() ? "" : fmt::format(" (job {})", first->job_id);
    lines.push_back(fmt::format("{}{}: {} process{}: {}", run, job, count, count == 1 ? "" : "es",
                                first->command));
  }
  return lines;
}

std::vector<Process> controllers(const std::vector<Process>& targets,
                                 const std::function<std::string(int)>& parent_command, int self) {
  std::vector<Process> found;
  for (const Process& p : targets) {
    bool parent_tagged = std::any_of(targets.begin(), targets.end(),
                                     [&](const Process& t) { return t.pid == p.parent; });
    bool seen = std::any_of(found.begin(), found.end(),
                            [&](const Process& f) { return f.pid == p.parent; });
    if (parent_tagged || seen || p.parent <= 1 || p.parent == self) continue;
    std::string command = parent_command(p.parent);
    std::string program = command.substr(0, command.find(' '));
    std::string name =
        program.substr(program.rfind('/') == std::string::npos ? 0 : program.rfind('/') + 1);
    if (name == "ezpz") {
      found.push_back({.pid = p.parent,
                       .run_id = p.run_id,
                       .command = command,
                       .parent = 0,
                       .job_id = p.job_id});
    }
  }
  return found;
}

std::optional<int> parse_signal(std::string_view text) {
  if (auto number = parse_count(text)) {
    if (*number >= 1 && *number <= 64) return static_cast<int>(*number);
    return std::nullopt;
  }
  std::optional<int> named = signal_number(text);
  if (!named ||
      std::find(k_named_signals.begin(), k_named_signals.end(), *named) == k_named_signals.end()) {
    return std::nullopt;
  }
  return named;
}

std::string describe(const Process& p, std::string_view action) {
  constexpr std::size_t k_width = 120;
  std::string command =
      p.command.size() > k_width ? p.command.substr(0, k_width - 3) + "..." : p.command;
  return fmt::format("{} {} (run {}): {}", action, p.pid, p.run_id, command);
}

}  // namespace ezpz::kill
