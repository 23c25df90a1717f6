#pragma once
// A launch planned from the world's values, with those values kept: a later attempt is
// planned again on other hosts (--spares) without gathering the world again.
#include <string>
#include <vector>

#include "ezpz/launch/plan.hpp"
#include "ezpz/launch/render.hpp"
#include "ezpz/launchers/launcher_identity.hpp"

namespace ezpz {

struct PreparedLaunch {
  PlannedLaunch planned;
  PlanContext context;  // scheduler, machine, job id: for --json
  // What the plan was made from, so that a later attempt can be planned on
  // other hosts without gathering the world again (--spares).
  LaunchRequest request;
  PlanInputs inputs;
  // The program that runs the launcher (already at the front of the plan's argv), and why
  // none may when none may.
  LauncherProgramChoice program;
};

// The launcher's program at the front of the plan: what resolved, or the name to report missing.
PlannedLaunch with_program(PlannedLaunch planned, const LauncherProgramChoice& program);

// The allocation's hosts the request may use (after --exclude, --exclude-file).
std::vector<std::string> available_hosts(const PreparedLaunch& prepared);

// The same launch planned on `hosts` only (the allocation's others excluded).
PlannedLaunch plan_on_hosts(const PreparedLaunch& prepared, const std::vector<std::string>& hosts);

}  // namespace ezpz
