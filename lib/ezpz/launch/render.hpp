#pragma once
// Rendering a plan for people (--dry-run) and programs (--dry-run --json).
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/launch/plan.hpp"

namespace ezpz {

// A word as a POSIX shell reads it back unchanged: bare when it is made of
// safe characters, else in single quotes ('\'' for a quote).
std::string shell_quote(std::string_view word);

// "NAME=value ... launcher args ... command", every word shell-quoted, so the
// line can be pasted into a shell. Secret-looking variables show <redacted>.
std::string render_command(const LaunchPlan& plan);

// What the plan is about, beside the plan itself.
struct PlanContext {
  std::string scheduler;
  std::string machine;
  std::string job_id;
  std::vector<std::string> spares;  // --spares: the hosts held back; "spares" in --json when any
};

// One JSON object: scheduler, machine, launcher, job_id, hosts, nhosts, ppn,
// world_size, hostfile, master_addr, argv, env (what ezpz sets, secrets redacted).
std::string render_json(const PlannedLaunch& planned, const PlanContext& context);

}  // namespace ezpz
