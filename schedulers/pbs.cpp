// PBS Pro / OpenPBS: the job's contract is PBS_JOBID plus PBS_NODEFILE, a file
// that lists each host once, or once per slot (mpiprocs) on some systems.
#include <unordered_map>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "schedulers/scheduler.hpp"

namespace ezpz {
namespace {

std::optional<std::string> detect_pbs(const Env& env) {
  if (!get_nonempty(env, "PBS_JOBID")) return std::nullopt;
  return std::string("PBS_JOBID is set");
}

// When every host appears the same number of times, that count is the number
// of slots (mpiprocs) the job asked for per host.
std::optional<int> uniform_repeat_count(const std::vector<std::string>& lines,
                                        const std::vector<std::string>& hosts) {
  if (hosts.empty() || lines.size() % hosts.size() != 0) return std::nullopt;
  int per_host = static_cast<int>(lines.size() / hosts.size());
  if (per_host < 2) return std::nullopt;
  std::unordered_map<std::string_view, int> counts;
  counts.reserve(hosts.size());
  for (const std::string& line : lines) counts[short_host_name(line)]++;
  for (const auto& [host, count] : counts) {
    if (count != per_host) return std::nullopt;
  }
  return per_host;
}

Allocation read_pbs(const Env& env, const FileReader& files, const CommandReader&,
                    std::string_view) {
  std::string job_id = get_nonempty(env, "PBS_JOBID").value_or("");
  auto nodefile = get_nonempty(env, "PBS_NODEFILE");
  if (!nodefile) {
    throw Error(fmt::format("PBS_JOBID is set ({}) but PBS_NODEFILE is not: "
                            "run inside the PBS job, or set --scheduler local",
                            job_id));
  }
  std::vector<std::string> lines =
      parse_hostfile(read_naming(files, *nodefile, "PBS_NODEFILE"), "PBS_NODEFILE " + *nodefile);
  if (lines.empty()) throw Error(fmt::format("PBS_NODEFILE {}: no hosts in file", *nodefile));
  Allocation allocation;
  allocation.scheduler = SchedulerKind::pbs;
  allocation.job_id = job_id;
  allocation.hosts = unique_hosts(lines);
  if (auto slots = uniform_repeat_count(lines, allocation.hosts)) {
    allocation.slots_per_host = *slots;
    allocation.slots_source = fmt::format("PBS_NODEFILE lists each host {} times", *slots);
  }
  if (lines == allocation.hosts) allocation.nodefile = *nodefile;
  return allocation;
}

}  // namespace

const SchedulerSpec k_pbs{SchedulerKind::pbs, detect_pbs, read_pbs};

}  // namespace ezpz
