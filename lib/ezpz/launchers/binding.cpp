#include "ezpz/launchers/binding.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/env.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"

namespace ezpz {

namespace {

std::vector<int> usable_cores(const CpuBind& bind, int socket) {
  std::vector<int> cores;
  int first = socket * bind.cores_per_socket;
  for (int core = first; core < first + bind.cores_per_socket; ++core) {
    const auto& reserved = bind.reserved_cores;
    if (std::find(reserved.begin(), reserved.end(), core) == reserved.end()) cores.push_back(core);
  }
  return cores;
}

// Each slot's cores under style list: `slots` slots spread evenly over the sockets (the first
// slots % sockets sockets take one extra), each socket's usable cores cut into equal blocks.
std::vector<std::vector<int>> list_blocks(const CpuBind& bind, int slots) {
  std::vector<std::vector<int>> blocks;
  int sockets = std::max(1, std::min(bind.sockets, slots));
  for (int socket = 0; socket < sockets; ++socket) {
    std::vector<int> cores = usable_cores(bind, socket);
    size_t ranks = slots / sockets + (socket < slots % sockets ? 1 : 0);
    size_t block = cores.size() / std::max<size_t>(ranks, 1);
    for (size_t rank = 0; rank < ranks && block > 0; ++rank) {
      auto first = cores.begin() + static_cast<std::ptrdiff_t>(rank * block);
      blocks.emplace_back(first, first + static_cast<std::ptrdiff_t>(block));
    }
  }
  return blocks;
}

std::vector<std::vector<int>> depth_blocks(int depth, int ranks) {
  std::vector<std::vector<int>> blocks(std::max(ranks, 0));
  for (int rank = 0; rank < ranks; ++rank) {
    for (int core = rank * depth; core < (rank + 1) * depth; ++core) blocks[rank].push_back(core);
  }
  return blocks;
}

// Rank r takes slots r*k .. r*k+k-1, those that exist.
std::vector<std::vector<int>> group_slots(const std::vector<std::vector<int>>& slots, int k) {
  std::vector<std::vector<int>> ranks;
  for (size_t slot = 0; slot < slots.size(); ++slot) {
    if (slot % k == 0) ranks.emplace_back();
    ranks.back().insert(ranks.back().end(), slots[slot].begin(), slots[slot].end());
  }
  return ranks;
}

}  // namespace

CoreBinding profile_core_binding(const CpuBind& bind, int ppn, int slots_per_rank) {
  const int k = std::max(1, slots_per_rank);
  switch (bind.style) {
    case CpuBind::Style::none:
      return {};
    case CpuBind::Style::depth:
      return {.kind = CoreBinding::Kind::depth,
              .depth = bind.depth * k,
              .cores = depth_blocks(bind.depth * k, ppn)};
    case CpuBind::Style::list:
      return {.kind = CoreBinding::Kind::cores,
              .cores = group_slots(list_blocks(bind, ppn * k), k)};
  }
  return {};
}

namespace {

// "1-8", or "1-3,5-8" when a reserved core splits the block (a lone core is "4-4", as PALS
// has always been given it).
std::string runs(const std::vector<int>& cores, std::string_view within) {
  std::vector<std::string> texts;
  size_t start = 0;
  for (size_t i = 0; i < cores.size(); ++i) {
    if (i + 1 != cores.size() && cores[i + 1] == cores[i] + 1) continue;
    texts.push_back(fmt::format("{}-{}", cores[start], cores[i]));
    start = i + 1;
  }
  return fmt::format("{}", fmt::join(texts, within));
}

// "0x1fe" for cores 1-8: bit i is core i.
std::string hex_mask(const std::vector<int>& cores) {
  int top = cores.empty() ? 0 : *std::max_element(cores.begin(), cores.end());
  std::string digits;
  for (int nibble = top / 4; nibble >= 0; --nibble) {
    int value = 0;
    for (int core : cores) value |= core / 4 == nibble ? 1 << (core % 4) : 0;
    digits += "0123456789abcdef"[value];
  }
  return "0x" + digits;
}

std::string rank_cores(const CoreListForm& form, const std::vector<int>& cores) {
  switch (form.spelling) {
    case CoreSpelling::runs:
      return runs(cores, form.within);
    case CoreSpelling::each:
      return fmt::format("{}", fmt::join(cores, form.within));
    case CoreSpelling::hex_mask:
      return hex_mask(cores);
  }
  return "";
}

std::string core_list(const CoreListForm& form, const std::vector<std::vector<int>>& cores) {
  std::vector<std::string> ranks;
  for (const std::vector<int>& rank : cores) ranks.push_back(rank_cores(form, rank));
  return fmt::format("{}", fmt::join(ranks, form.between));
}

// What a form's placeholders stand for.
struct Values {
  int depth = 0;
  int ppn = 0;
  std::string cores{};
  std::string value{};
};

template <std::size_t N>
std::vector<std::string> spell(const List<std::string_view, N>& forms, const Values& v) {
  std::vector<std::string> words;
  for (std::string_view form : forms) {
    words.push_back(fmt::format(fmt::runtime(form), fmt::arg("depth", v.depth),
                                fmt::arg("ppn", v.ppn), fmt::arg("cores", v.cores),
                                fmt::arg("value", v.value)));
  }
  return words;
}

// d when rank i holds exactly cores [i*d, (i+1)*d): a list a depth binding can say; else 0.
int uniform_depth(const std::vector<std::vector<int>>& cores) {
  int depth = cores.empty() ? 0 : static_cast<int>(cores.front().size());
  std::vector<int> block(depth);
  std::iota(block.begin(), block.end(), 0);
  for (const std::vector<int>& rank : cores) {
    if (rank != block) return 0;
    for (int& core : block) core += depth;
  }
  return depth;
}

// A depth binding in the launcher's depth words, else as each rank's cores; a list of cores in
// its cores words, else in depth words when the list is a depth's (Open MPI, aprun).
BindingWords profile_words(const LauncherRow& row, const CoreBinding& binding, int ppn) {
  const BindingForms& forms = row.binding;
  const bool depth = binding.kind == CoreBinding::Kind::depth;
  const int cores_each = depth ? binding.depth : uniform_depth(binding.cores);
  const bool by_depth = !forms.depth.empty() && cores_each > 0;
  if (by_depth && (depth || forms.cores.empty())) {
    return {.words = spell(forms.depth, {.depth = cores_each, .ppn = ppn}),
            .places_ranks = forms.depth_places_ranks};
  }
  if (!forms.cores.empty()) {
    return {.words = spell(forms.cores, {.cores = core_list(forms.list, binding.cores)})};
  }
  throw Error(fmt::format(
      "launcher {} cannot bind each rank to its own list of cores ({}), as the profile asks; "
      "give its own binding with --cpu-bind",
      row.name, core_list({.within = ",", .between = ":"}, binding.cores)));
}

// PALS's list:A:B, each local rank's cores as runs ("0-1,4"), colon-separated; nullopt for any
// other value. Under Hydra, -bind-to list:0-1 failed at start-up with hwloc's "unrecognized
// directive": the Python ezpz's CPU_BIND must bind there too.
std::optional<std::vector<std::vector<int>>> pals_list(std::string_view value) {
  constexpr std::string_view prefix = "list:";
  constexpr long k_most_cores = 1 << 16;  // a bound on a run, so that "0-99999999" is no list
  if (!value.starts_with(prefix) || value.size() == prefix.size()) return std::nullopt;
  std::vector<std::vector<int>> ranks;
  for (std::string_view rank : split(value.substr(prefix.size()), ':')) {
    std::vector<int> cores;
    for (std::string_view run : split(rank, ',')) {
      const std::size_t dash = run.find('-');
      const std::optional<long> first = parse_count(run.substr(0, dash));
      const std::optional<long> last =
          dash == std::string_view::npos ? first : parse_count(run.substr(dash + 1));
      if (!first || !last || *last < *first || *last >= k_most_cores) return std::nullopt;
      for (long core = *first; core <= *last; ++core) cores.push_back(static_cast<int>(core));
    }
    ranks.push_back(std::move(cores));
  }
  return ranks;
}

// The user's --cpu-bind as written, or PALS's list form in this launcher's cores words.
std::vector<std::string> verbatim_words(const BindingForms& forms, const std::string& value) {
  if (!forms.verbatim_reads_list && !forms.cores.empty()) {
    if (auto cores = pals_list(value)) {
      return spell(forms.cores, {.cores = core_list(forms.list, *cores)});
    }
  }
  return spell(forms.verbatim, {.value = value});
}

}  // namespace

BindingWords binding_words(const LauncherRow& row, const CoreBinding& binding, int ppn) {
  const BindingForms& forms = row.binding;
  if (binding.kind == CoreBinding::Kind::none) return {};
  if (binding.kind == CoreBinding::Kind::verbatim) {
    if (forms.verbatim.empty()) {
      throw Error(fmt::format("launcher {} takes no CPU binding; leave out --cpu-bind and CPU_BIND",
                              row.name));
    }
    return {.words = verbatim_words(forms, binding.verbatim)};
  }
  if (!forms.dropped_why.empty()) {
    return {.dropped_why =
                fmt::format("the profile's CPU binding is not applied: {}", forms.dropped_why)};
  }
  return profile_words(row, binding, ppn);
}

}  // namespace ezpz
