#include "ezpz/rank_env.hpp"

#include <array>

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
};

// What each launcher sets per rank. MPICH Hydra: PMI_RANK/PMI_SIZE and
// MPI_LOCALRANKID/MPI_LOCALNRANKS; Cray PALS: PALS_RANKID/PALS_LOCAL_RANKID
// (and PMI_SIZE); Open MPI: OMPI_COMM_WORLD_*; srun: SLURM_PROCID/SLURM_LOCALID.
constexpr std::array<LauncherSources, 5> k_sources = {{
    {"hydra", {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS"}},
    {"pals", {"PALS_RANKID", "PALS_LOCAL_RANKID", "PMI_SIZE", "PALS_LOCAL_SIZE"}},
    {"openmpi",
     {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
      "OMPI_COMM_WORLD_LOCAL_SIZE"}},
    {"srun", {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE"}},
    {"pmix", {"PMIX_RANK", "PMIX_LOCAL_RANK", "PMIX_SIZE", "PMIX_LOCAL_SIZE"}},
}};

const char* first_set(EnvLookup lookup, std::string_view launcher,
                      const char* ContractSources::*field) {
  for (const LauncherSources& row : k_sources) {
    if (row.launcher != launcher) continue;
    // A known launcher that does not set this one leaves ezpz's exported value.
    const char* value = lookup(row.vars.*field);
    return value && *value ? value : nullptr;
  }
  // Unknown launcher: take the first source present.
  for (const LauncherSources& row : k_sources) {
    if (const char* value = lookup(row.vars.*field); value && *value) return value;
  }
  return nullptr;
}

}  // namespace

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
  return assignments;
}

}  // namespace ezpz
