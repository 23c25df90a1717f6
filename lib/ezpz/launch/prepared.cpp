#include "ezpz/launch/prepared.hpp"

#include <algorithm>

#include "ezpz/launch/layout.hpp"

namespace ezpz {

PlannedLaunch with_program(PlannedLaunch planned, const LauncherProgramChoice& program) {
  if (!program.program.empty()) planned.plan.argv.front() = program.program;
  return planned;
}

std::vector<std::string> available_hosts(const PreparedLaunch& prepared) {
  return select_hosts(prepared.inputs.allocation.hosts, prepared.request.excluded);
}

PlannedLaunch plan_on_hosts(const PreparedLaunch& prepared, const std::vector<std::string>& hosts) {
  LaunchRequest request = prepared.request;
  for (const std::string& host : prepared.inputs.allocation.hosts) {
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end())
      request.excluded.push_back(host);
  }
  return with_program(plan_launch(request, prepared.inputs), prepared.program);
}

}  // namespace ezpz
