#include "ezpz/profile/accelerators.hpp"

#include <optional>
#include <set>

#include "ezpz/core/env.hpp"

namespace ezpz {
namespace {

// Distinct ids that `id_of` finds at the start of lines: counting ids rather
// than lines keeps tools that print several lines per device honest.
template <typename IdOf>
int count_distinct_ids(std::string_view output, IdOf id_of) {
  std::set<long> ids;
  while (!output.empty()) {
    auto end = output.find('\n');
    std::string_view line = output.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (auto id = id_of(line)) ids.insert(*id);
    output.remove_prefix(end == std::string_view::npos ? output.size() : end + 1);
  }
  return static_cast<int>(ids.size());
}

// The number between `prefix` and `terminator`: ("GPU 3: ...", "GPU ", ':') -> 3.
std::optional<long> id_between(std::string_view line, std::string_view prefix, char terminator) {
  if (!line.starts_with(prefix)) return std::nullopt;
  line.remove_prefix(prefix.size());
  auto end = line.find(terminator);
  if (end == std::string_view::npos) return std::nullopt;
  return parse_count(line.substr(0, end));
}

// The first CSV field, unquoted: "0", " 0" and "\"0\"" all read 0.
std::optional<long> first_csv_field(std::string_view line) {
  line = line.substr(0, line.find(','));
  constexpr std::string_view k_blank = " \t\"";
  auto first = line.find_first_not_of(k_blank);
  if (first == std::string_view::npos) return std::nullopt;
  line = line.substr(first, line.find_last_not_of(k_blank) - first + 1);
  return parse_count(line);
}

}  // namespace

int count_nvidia_smi_devices(std::string_view output) {
  return count_distinct_ids(output,
                            [](std::string_view line) { return id_between(line, "GPU ", ':'); });
}

int count_rocm_smi_devices(std::string_view output) {
  return count_distinct_ids(output,
                            [](std::string_view line) { return id_between(line, "GPU[", ']'); });
}

int count_xpu_smi_devices(std::string_view output) {
  return count_distinct_ids(output, first_csv_field);
}

const std::vector<AcceleratorProbe>& accelerator_probes() {
  static const std::vector<AcceleratorProbe> k_probes = {
      {"nvidia-smi", {"-L"}, count_nvidia_smi_devices},
      {"rocm-smi", {"--showid"}, count_rocm_smi_devices},
      {"xpu-smi", {"discovery", "--dump", "1"}, count_xpu_smi_devices},
  };
  return k_probes;
}

}  // namespace ezpz
