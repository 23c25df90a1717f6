#include "ezpz/sys/job_end.hpp"

#include <ctime>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/supervise/walltime_warning.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {
namespace {

std::int64_t slurm_end(const std::string& job_id, const Env& env) {
  if (auto value = get_nonempty(env, "SLURM_JOB_END_TIME")) {
    return walltime::end_from_epoch_variable(*value);
  }
  try {
    return walltime::end_from_squeue(
        RealCommandReader(env).output({"squeue", "-h", "-j", job_id, "-o", "%e"}));
  } catch (const Error& e) {
    throw Error(fmt::format("squeue -h -j {} -o %e: {}", job_id, e.what()));
  }
}

std::int64_t pbs_end(const std::string& job_id, const Env& env) {
  std::string output;
  try {
    output = RealCommandReader(env).output({"qstat", "-f", job_id});
  } catch (const Error& e) {
    throw Error(fmt::format("qstat -f {}: {}", job_id, e.what()));
  }
  return walltime::end_from_qstat(output);
}

}  // namespace

JobEnd read_job_end(std::string_view scheduler, const std::string& job_id, const Env& env) {
  if (job_id.empty() || (scheduler != "slurm" && scheduler != "pbs")) {
    return {.end = std::nullopt, .why = "not inside a Slurm or PBS job"};
  }
  try {
    return {.end = scheduler == "slurm" ? slurm_end(job_id, env) : pbs_end(job_id, env), .why = {}};
  } catch (const Error& e) {
    return {.end = std::nullopt, .why = e.what()};
  }
}

std::int64_t epoch_now() {
  return static_cast<std::int64_t>(std::time(nullptr));
}

}  // namespace ezpz::sys
