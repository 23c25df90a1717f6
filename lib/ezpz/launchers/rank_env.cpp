#include "ezpz/launchers/rank_env.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <csignal>
#include <cstring>

namespace ezpz {
namespace {

struct ContractSources {
  const char* rank;
  const char* local_rank;
  const char* world_size;
  const char* local_world_size;
};

struct LauncherSources {
  std::string_view launcher;
  ContractSources vars;
  // A per-host list of ranks and this host's index in it: exact when hosts hold
  // different numbers of ranks (srun -n 3 on 2 nodes: "2,1"), where the plain count is not.
  const char* local_size_list = nullptr;
  const char* node = nullptr;
};

// What each launcher sets per rank. MPICH Hydra: PMI_RANK/PMI_SIZE and
// MPI_LOCALRANKID/MPI_LOCALNRANKS; Cray PALS: PALS_RANKID/PALS_LOCAL_RANKID
// (and PMI_SIZE); Open MPI: OMPI_COMM_WORLD_*; srun: SLURM_PROCID/SLURM_LOCALID;
// Flux: FLUX_TASK_RANK/FLUX_TASK_LOCAL_ID/FLUX_JOB_SIZE (flux-environment(7)), and no
// count of this host's ranks: ezpz's exported LOCAL_WORLD_SIZE (--tasks-per-node) stays.
// nullptr: the launcher sets none.
constexpr std::array<LauncherSources, 6> k_sources = {{
    {"hydra", {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS"}},
    {"pals", {"PALS_RANKID", "PALS_LOCAL_RANKID", "PMI_SIZE", "PALS_LOCAL_SIZE"}},
    {"openmpi",
     {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
      "OMPI_COMM_WORLD_LOCAL_SIZE"}},
    {"srun",
     {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE"},
     "SLURM_STEP_TASKS_PER_NODE",
     "SLURM_NODEID"},
    {"pmix", {"PMIX_RANK", "PMIX_LOCAL_RANK", "PMIX_SIZE", "PMIX_LOCAL_SIZE"}},
    {"flux", {"FLUX_TASK_RANK", "FLUX_TASK_LOCAL_ID", "FLUX_JOB_SIZE", nullptr}},
}};

const char* set_value(EnvLookup lookup, const char* name) {
  const char* value = name ? lookup(name) : nullptr;
  return value && *value ? value : nullptr;
}

const char* first_set(EnvLookup lookup, std::string_view launcher,
                      const char* ContractSources::*field) {
  for (const LauncherSources& row : k_sources) {
    if (row.launcher != launcher) continue;
    // A known launcher that does not set this one leaves ezpz's exported value.
    return set_value(lookup, row.vars.*field);
  }
  // Unknown launcher: take the first source present.
  for (const LauncherSources& row : k_sources) {
    if (const char* value = set_value(lookup, row.vars.*field)) return value;
  }
  return nullptr;
}

bool known(std::string_view launcher) {
  return std::any_of(k_sources.begin(), k_sources.end(),
                     [&](const LauncherSources& row) { return row.launcher == launcher; });
}

std::optional<int> number(const char* text) {
  if (text == nullptr) return std::nullopt;
  const std::string_view view(text);
  int value = -1;
  auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (error != std::errc() || end != view.data() + view.size() || value < 0) return std::nullopt;
  return value;
}

// This host's count from the launcher's per-host list, when it sets one.
std::optional<int> listed_local_size(EnvLookup lookup, std::string_view launcher) {
  for (const LauncherSources& row : k_sources) {
    if (row.local_size_list == nullptr || (known(launcher) && row.launcher != launcher)) continue;
    const char* list = lookup(row.local_size_list);
    const std::optional<int> node = number(lookup(row.node));
    if (list != nullptr && node) return tasks_on_node(list, *node);
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> tasks_on_node(std::string_view list, int node) {
  while (!list.empty()) {
    std::string_view item = list.substr(0, list.find(','));
    list.remove_prefix(std::min(list.size(), item.size() + 1));
    std::string_view repeat = "1";
    if (auto paren = item.find("(x"); paren != std::string_view::npos && item.back() == ')') {
      repeat = item.substr(paren + 2, item.size() - paren - 3);
      item = item.substr(0, paren);
    }
    int count = -1, times = -1;
    auto [count_end, count_error] = std::from_chars(item.data(), item.data() + item.size(), count);
    auto [times_end, times_error] =
        std::from_chars(repeat.data(), repeat.data() + repeat.size(), times);
    if (count_error != std::errc() || times_error != std::errc() || count < 0 || times < 1 ||
        count_end != item.data() + item.size() || times_end != repeat.data() + repeat.size()) {
      return std::nullopt;
    }
    if (node < times) return count;
    node -= times;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> map_rank_env(std::string_view launcher,
                                                              EnvLookup lookup) {
  struct Target {
    const char* name;
    const char* ContractSources::*field;
  };
  constexpr std::array<Target, 4> k_targets = {{
      {"RANK", &ContractSources::rank},
      {"LOCAL_RANK", &ContractSources::local_rank},
      {"WORLD_SIZE", &ContractSources::world_size},
      {"LOCAL_WORLD_SIZE", &ContractSources::local_world_size},
  }};
  std::vector<std::pair<std::string, std::string>> assignments;
  for (const Target& target : k_targets) {
    if (const char* value = first_set(lookup, launcher, target.field)) {
      assignments.emplace_back(target.name, value);
    }
  }
  if (auto listed = listed_local_size(lookup, launcher)) {
    std::erase_if(assignments, [](const auto& a) { return a.first == "LOCAL_WORLD_SIZE"; });
    assignments.emplace_back("LOCAL_WORLD_SIZE", std::to_string(*listed));
  }
  return assignments;
}

std::string rank_host(std::string_view launcher, EnvLookup lookup, std::string_view fallback) {
  // Hydra names each proxy's host as its host list does (per proxy, so never stale);
  // slurmstepd sets the node's Slurm name for each task.
  constexpr std::array<std::pair<std::string_view, const char*>, 2> k_host_variables = {{
      {"hydra", "MPIR_CVAR_CH3_INTERFACE_HOSTNAME"},
      {"srun", "SLURMD_NODENAME"},
  }};
  for (const auto& [name, variable] : k_host_variables) {
    const char* value = name == launcher ? lookup(variable) : nullptr;
    if (value != nullptr && *value != '\0') return value;
  }
  return std::string(fallback);
}

std::string exit_report(std::string_view rank, long pid, std::string_view host, int status) {
  std::string what;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = ::sigabbrev_np(sig);
    what = "killed by signal " + std::to_string(sig) +
           (abbrev ? " (SIG" + std::string(abbrev) + ")" : std::string());
  } else {
    what = "exited with code " + std::to_string(WEXITSTATUS(status));
  }
  return std::string(k_exit_report_prefix) + "rank " + std::string(rank) + " (pid " +
         std::to_string(pid) + ") on " + std::string(host) + ": " + what;
}

}  // namespace ezpz
