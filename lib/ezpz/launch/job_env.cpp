#include "ezpz/launch/job_env.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/error.hpp"
#include "ezpz/core/json_text.hpp"

namespace ezpz {

namespace {

// The launcher's words, without the placeholder that stood for the command.
std::string launch_line(const LaunchPlan& plan) {
  if (plan.argv.empty() || plan.argv.back() != k_command_placeholder) {
    throw Error("ezpz env: the launch plan does not end in the command (a bug in ezpz)",
                ExitCode::failure);
  }
  std::string line;
  for (size_t i = 0; i + 1 < plan.argv.size(); ++i) {
    if (i > 0) line += ' ';
    line += shell_quote(plan.argv[i]);
  }
  return line;
}

}  // namespace

EnvList job_variables(const PlannedLaunch& planned, const PlanContext& context) {
  EnvList vars = {{"MACHINE", context.machine}, {"SCHEDULER", context.scheduler}};
  if (!context.job_id.empty()) vars.emplace_back("JOBID", context.job_id);
  vars.emplace_back("HOSTFILE", planned.hostfile);
  vars.emplace_back("NHOSTS", std::to_string(planned.topology.nhosts));
  vars.emplace_back("NGPU_PER_HOST", std::to_string(planned.topology.ppn));
  vars.emplace_back("NGPUS", std::to_string(planned.topology.world_size));
  for (const auto& [name, value] : planned.plan.env) {
    if (!is_secret(name, value)) vars.emplace_back(name, value);
  }
  vars.emplace_back("DIST_LAUNCH", launch_line(planned.plan));
  return vars;
}

PlannedLaunch with_hostfile(PlannedLaunch planned, const PlanInputs& inputs) {
  if (planned.hostfile.empty()) {
    planned.hostfile = written_hostfile(planned.hosts, inputs, planned.plan.files);
  }
  return planned;
}

// The names are checked again where they meet the shell (eval "$(ezpz env)"): a value is
// quoted, a name cannot be, and one that is no name is never printed.
std::string render_exports(const EnvList& variables) {
  std::string out;
  for (const auto& [name, value] : variables) {
    if (!is_variable_name(name)) {
      throw Error(
          fmt::format("refusing to export {}: it {}", shell_quote(name), k_not_a_variable_name));
    }
    out += fmt::format("export {}={}\n", name, shell_quote(value));
  }
  return out;
}

std::string render_variables_json(const EnvList& variables) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& [name, value] : variables) json[name] = value;
  return json_text(json, 2) + "\n";
}

}  // namespace ezpz
