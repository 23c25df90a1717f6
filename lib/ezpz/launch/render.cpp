#include "ezpz/launch/render.hpp"

#include <array>

#include <nlohmann/json.hpp>

#include "ezpz/core/env.hpp"
#include "ezpz/core/json_text.hpp"

namespace ezpz {
namespace {

bool is_safe_shell_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
}

}  // namespace

std::string shell_quote(std::string_view word) {
  bool safe = !word.empty();
  for (char c : word) safe = safe && is_safe_shell_char(c);
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string render_command(const LaunchPlan& plan) {
  std::string line;
  auto append = [&line](std::string_view word) {
    if (!line.empty()) line += ' ';
    line += word;
  };
  for (const auto& [name, value] : plan.env) {
    append(name + "=" + shell_quote(shown_value(name, value)));
  }
  for (const std::string& word : plan.argv) append(shell_quote(word));
  return line;
}

namespace {

constexpr std::array<const char*, 3> k_placed_by = {"none", "masks", "launcher"};

// Each local rank's cores and GPUs: what the profile (or the user's verbatim --cpu-bind, whose
// cores ezpz does not know) and the GPU placement give it.
nlohmann::ordered_json local_ranks_json(const PlannedLaunch& planned) {
  const GpuPlacement& gpus = planned.gpus;
  const std::vector<std::vector<int>>& cores = planned.binding.cores;
  nlohmann::ordered_json local = nlohmann::ordered_json::array();
  for (int rank = 0; rank < planned.topology.ppn; ++rank) {
    const auto index = static_cast<std::size_t>(rank);
    local.push_back(
        {{"local_rank", rank},
         {"cores", index < cores.size() ? cores[index] : std::vector<int>{}},
         {"devices", index < gpus.local.size() ? gpus.local[index] : std::vector<std::string>{}}});
  }
  return local;
}

nlohmann::ordered_json gpus_json(const GpuPlacement& gpus) {
  return {{"by", k_placed_by[static_cast<std::size_t>(gpus.by)]},
          {"rule", gpus.rule},
          {"variables", gpus.variables}};
}

}  // namespace

std::string render_json(const PlannedLaunch& planned, const PlanContext& context) {
  nlohmann::ordered_json env = nlohmann::ordered_json::object();
  for (const auto& [name, value] : planned.plan.env) env[name] = shown_value(name, value);
  nlohmann::ordered_json json = {
      {"scheduler", context.scheduler},  {"machine", context.machine},
      {"launcher", planned.launcher},    {"job_id", context.job_id},
      {"hosts", planned.hosts},          {"nhosts", planned.topology.nhosts},
      {"ppn", planned.topology.ppn},     {"world_size", planned.topology.world_size},
      {"hostfile", planned.hostfile},    {"master_addr", planned.master_addr},
      {"argv", planned.plan.argv},       {"env", env},
      {"gpus", gpus_json(planned.gpus)}, {"local_ranks", local_ranks_json(planned)},
  };
  if (!context.spares.empty()) json["spares"] = context.spares;
  return json_text(json, 2);
}

}  // namespace ezpz
