#pragma once
// `ezpz env`: the allocation and its launch line as shell variables, the native
// successor of the reference's ezpz_setup_env (HOSTFILE, NHOSTS, NGPU_PER_HOST,
// NGPUS, DIST_LAUNCH). Pure: a plan in, text out.
#include <string>
#include <string_view>

#include "ezpz/core/env.hpp"
#include "ezpz/launch/plan.hpp"
#include "ezpz/launch/render.hpp"

namespace ezpz {

// The word a plan is made for in place of the user's command; the launch line is
// everything before it.
inline constexpr std::string_view k_command_placeholder = "__EZPZ_COMMAND__";

// In order: MACHINE, SCHEDULER, JOBID (when in a job), HOSTFILE, NHOSTS,
// NGPU_PER_HOST, NGPUS, then what the plan sets for the launcher (MASTER_ADDR,
// MASTER_PORT, WORLD_SIZE, the profile's variables...; secret-looking names left
// out), then DIST_LAUNCH: the launch line, shell-quoted, to put a command after.
// Throws Error when the plan does not end in the placeholder command.
EnvList job_variables(const PlannedLaunch& planned, const PlanContext& context);

// The plan with a hostfile for HOSTFILE: its own, else (srun takes --nodelist, a local run
// none) one written for the batch scripts that read it, as the Python ezpz's
// ezpz_setup_env writes one under every scheduler.
PlannedLaunch with_hostfile(PlannedLaunch planned, const PlanInputs& inputs);

// `export NAME='value'` lines that `eval "$(ezpz env)"` reads back exactly.
std::string render_exports(const EnvList& variables);

// The same as one JSON object, in the same order.
std::string render_variables_json(const EnvList& variables);

}  // namespace ezpz
