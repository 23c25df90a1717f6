// Slurm: the job's contract is SLURM_JOB_ID and a compressed nodelist
// (SLURM_JOB_NODELIST; SLURM_NODELIST in older releases and inside steps).
#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/hostlist.hpp"
#include "schedulers/scheduler.hpp"

namespace ezpz {
namespace {

const std::vector<std::string_view> k_job_id_vars = {"SLURM_JOB_ID", "SLURM_JOBID"};
const std::vector<std::string_view> k_nodelist_vars = {"SLURM_JOB_NODELIST", "SLURM_NODELIST"};

std::optional<std::string> detect_slurm(const Env& env) {
  auto job_id = first_nonempty(env, k_job_id_vars);
  if (!job_id) return std::nullopt;
  return fmt::format("{} is set", job_id->first);
}

// SLURM_NTASKS_PER_NODE is only set when the job asked for it (--ntasks-per-node).
std::optional<int> tasks_per_node(const Env& env) {
  auto text = get_nonempty(env, "SLURM_NTASKS_PER_NODE");
  if (!text) return std::nullopt;
  auto count = parse_count(*text);
  if (!count || *count < 1) {
    throw Error(fmt::format("SLURM_NTASKS_PER_NODE={}: expected a positive integer", *text));
  }
  return static_cast<int>(*count);
}

Allocation read_slurm(const Env& env, const FileReader&, const CommandReader&, std::string_view) {
  auto job_id = first_nonempty(env, k_job_id_vars);
  auto nodelist = first_nonempty(env, k_nodelist_vars);
  if (!nodelist) {
    throw Error(fmt::format("{} is set ({}) but neither SLURM_JOB_NODELIST nor SLURM_NODELIST is",
                            job_id ? job_id->first : "SLURM_JOB_ID", job_id ? job_id->second : ""));
  }
  std::vector<std::string> hosts = expand_hostlist(nodelist->second);
  for (const std::string& host : hosts) check_host_name(host, nodelist->first);
  Allocation allocation;
  allocation.scheduler = SchedulerKind::slurm;
  allocation.job_id = job_id ? job_id->second : "";
  allocation.hosts = unique_hosts(hosts);
  if (auto slots = tasks_per_node(env)) {
    allocation.slots_per_host = *slots;
    allocation.slots_source = fmt::format("SLURM_NTASKS_PER_NODE={}", *slots);
  }
  return allocation;
}

}  // namespace

const SchedulerSpec k_slurm{SchedulerKind::slurm, detect_slurm, read_slurm};

}  // namespace ezpz
