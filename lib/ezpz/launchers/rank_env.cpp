#include "ezpz/launchers/rank_env.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <csignal>
#include <cstring>
#include <span>

#include "ezpz/core/text.hpp"
#include "ezpz/launchers/launcher_table.hpp"

namespace ezpz {
namespace {

// The launchers' own rows, then sources no launcher of ezpz's sets but an unknown one may:
// PMIx (prterun, srun --mpi=pmix).
struct Source {
  std::string_view launcher;
  const RankVariables* vars;
};
constexpr RankVariables k_pmix = {.rank = "PMIX_RANK",
                                  .local_rank = "PMIX_LOCAL_RANK",
                                  .size = "PMIX_SIZE",
                                  .local_size = "PMIX_LOCAL_SIZE"};

// Rows with variables, in the order an unknown launcher's are looked for: Hydra's first (MPICH
// and Cray PMI alike set PMI_RANK), then the table's, then PMIx's.
constexpr auto k_sources = [] {
  std::array<Source, k_launchers.size() + 1> sources{};
  std::size_t n = 0;
  for (std::string_view first : {std::string_view("hydra"), std::string_view()}) {
    for (const LauncherRow& row : k_launchers) {
      bool wanted = first.empty() ? row.name != "hydra" : row.name == first;
      if (wanted && row.rank_variables.rank != nullptr)
        sources[n++] = {row.name, &row.rank_variables};
    }
  }
  sources[n++] = {"pmix", &k_pmix};
  return std::pair{sources, n};
}();

std::span<const Source> sources() {
  return {k_sources.first.data(), k_sources.second};
}

const char* value_of(EnvLookup lookup, const char* name) {
  const char* value = name ? lookup(name) : nullptr;
  return value && *value ? value : nullptr;
}

const char* first_set(EnvLookup lookup, std::string_view launcher,
                      const char* RankVariables::*field) {
  for (const Source& source : sources()) {
    // A known launcher that does not set this one leaves ezpz's exported value.
    if (source.launcher == launcher) return value_of(lookup, source.vars->*field);
  }
  // Unknown launcher: take the first source present.
  for (const Source& source : sources()) {
    if (const char* value = value_of(lookup, source.vars->*field)) return value;
  }
  return nullptr;
}

bool known(std::string_view launcher) {
  return std::any_of(sources().begin(), sources().end(),
                     [&](const Source& source) { return source.launcher == launcher; });
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
  for (const Source& source : sources()) {
    const RankVariables& row = *source.vars;
    if (row.local_size_list == nullptr || (known(launcher) && source.launcher != launcher))
      continue;
    const char* list = lookup(row.local_size_list);
    const std::optional<int> node = number(row.node ? lookup(row.node) : nullptr);
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

std::vector<std::pair<std::string, std::string>> gpu_masks(std::string_view local_rank,
                                                           EnvLookup lookup) {
  const char* masks = value_of(lookup, k_gpu_masks_variable);
  const char* variables = value_of(lookup, k_gpu_variables_variable);
  const std::optional<int> index = number(std::string(local_rank).c_str());
  if (masks == nullptr || variables == nullptr || !index) return {};
  const std::string_view mine = gpu_mask_entry(masks, static_cast<std::size_t>(*index));
  std::vector<std::pair<std::string, std::string>> assignments;
  for (std::string_view name : split(variables, ',')) assignments.emplace_back(name, mine);
  return assignments;
}

std::string_view gpu_mask_entry(std::string_view masks, std::size_t local_rank) {
  const std::vector<std::string_view> entries = split(masks, ';');
  return entries[local_rank % entries.size()];
}

std::vector<std::pair<std::string, std::string>> map_rank_env(std::string_view launcher,
                                                              EnvLookup lookup) {
  struct Target {
    const char* name;
    const char* RankVariables::*field;
  };
  constexpr std::array<Target, 4> k_targets = {{
      {"RANK", &RankVariables::rank},
      {"LOCAL_RANK", &RankVariables::local_rank},
      {"WORLD_SIZE", &RankVariables::size},
      {"LOCAL_WORLD_SIZE", &RankVariables::local_size},
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
  const auto local_rank = std::find_if(assignments.begin(), assignments.end(),
                                       [](const auto& a) { return a.first == "LOCAL_RANK"; });
  if (local_rank != assignments.end()) {
    const std::vector<std::pair<std::string, std::string>> masks =
        gpu_masks(local_rank->second, lookup);
    assignments.insert(assignments.end(), masks.begin(), masks.end());
  }
  return assignments;
}

std::string rank_host(std::string_view launcher, EnvLookup lookup, std::string_view fallback) {
  for (const Source& source : sources()) {
    if (source.launcher != launcher) continue;
    if (const char* value = value_of(lookup, source.vars->host)) return value;
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

// "ezpz-rankenv: rank R (pid P) on HOST: WHAT": WHAT after the first ": " past the host.
std::optional<int> exit_report_status(std::string_view line) {
  if (!line.starts_with(k_exit_report_prefix)) return std::nullopt;
  const std::size_t host = line.find(") on ");
  const std::size_t colon = line.find(": ", host == std::string_view::npos ? line.size() : host);
  if (host == std::string_view::npos || colon == std::string_view::npos) return std::nullopt;
  const std::string_view what = line.substr(colon + 2);
  struct Form {
    std::string_view words;
    int base;
  };
  for (const Form form : {Form{"exited with code ", 0}, Form{"killed by signal ", 128}}) {
    if (!what.starts_with(form.words)) continue;
    const std::string_view digits = what.substr(form.words.size());
    int value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end == digits.data()) return std::nullopt;
    return form.base + value;
  }
  return std::nullopt;
}

}  // namespace ezpz
