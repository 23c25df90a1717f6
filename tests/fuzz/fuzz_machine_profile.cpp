// libFuzzer target: the machine-profile loader (lib/ezpz/profile/machine_profile.hpp).
// Profiles are user-written YAML (~/.config/ezpz/machines, EZPZ_MACHINES_PATH):
// text must become a profile or an ezpz::Error naming file, line and key.
// Any other exception (a yaml-cpp one leaking through included), a crash, a
// leak or undefined behaviour is a finding, and so is an accepted profile that
// breaks the rules the launchers rely on, or one that does not come back whole
// from the parsed-profile cache (profile_cache.hpp). The same bytes read as a
// cache (a file in the user's cache directory) must be a miss or profiles, never
// a crash or an exception.
#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <string_view>

#include "ezpz/core/error.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/profile/machine_profile.hpp"
#include "ezpz/profile/profile_cache.hpp"

namespace {

constexpr std::string_view k_source = "machines/fuzz.yaml";

[[noreturn]] void finding(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz_machine_profile: %s \"%.*s\"\n", what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();  // libFuzzer saves the input as a crash artifact
}

template <std::size_t N>
bool one_of(const std::string& value, const std::array<std::string_view, N>& allowed) {
  return std::find(allowed.begin(), allowed.end(), value) != allowed.end();
}

bool is_variable_name(const std::string& name) {
  auto word = [](char c) { return c == '_' || std::isalnum(static_cast<unsigned char>(c)); };
  return !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front())) &&
         std::all_of(name.begin(), name.end(), word);
}

// What an accepted profile promises (machine_profile.cpp's schema).
void check_profile(const ezpz::MachineProfile& p) {
  if (p.name != "fuzz" || p.source != k_source) finding("name/source not from the file", p.name);
  // A row of the launcher table, by its own name (an alias such as "mpich" is stored as "hydra").
  const ezpz::LauncherRow* row = ezpz::launcher_row(p.launcher);
  if (row == nullptr || row->name != p.launcher) finding("launcher", p.launcher);
  constexpr std::array<std::string_view, 5> devices = {"", "cuda", "xpu", "rocm", "cpu"};
  if (!one_of(p.device, devices)) finding("device", p.device);
  constexpr std::array<std::string_view, 7> backends = {"",     "nccl", "rccl", "xccl",
                                                        "ccl", "gloo", "mpi"};
  if (!one_of(p.backend, backends)) finding("backend", p.backend);
  if (p.gpus_per_node < 0) finding("negative gpus_per_node");
  if (!p.network_suffix.empty() && p.network_suffix.front() != '.') {
    finding("network_suffix", p.network_suffix);
  }
  for (const auto& [name, value] : p.env) {
    if (!is_variable_name(name)) finding("env name", name);
  }
  for (const auto& [name, value] : p.match.env) {
    if (!is_variable_name(name)) finding("match.env name", name);
  }
  // The loader promised these compile with a group for the host, within the length bound; a
  // match over a line of the launcher's output must then neither crash nor throw.
  for (const ezpz::BadNodePattern& pattern : p.bad_node_patterns) {
    if (pattern.regex.size() > 1000) finding("bad_node_patterns: longer than the bound", pattern.name);
    const std::regex regex(pattern.regex);
    if (regex.mark_count() < 1) finding("bad_node_patterns: no group", pattern.name);
    std::smatch match;
    const std::string line = "srun: error: Task launch for StepId=1.0 failed on node n03: x";
    std::regex_search(line, match, regex);
  }
  const ezpz::CpuBind& b = p.cpu_bind;
  if (b.depth < 0 || b.sockets < 0 || b.cores_per_socket < 0) finding("negative cpu_bind count");
  using Style = ezpz::CpuBind::Style;
  if (b.style == Style::depth && b.depth == 0) finding("style depth without depth");
  if (b.style == Style::list) {
    if (b.sockets == 0 || b.cores_per_socket == 0) finding("style list without a node shape");
    // The launchers number cores with ints (launchers.cpp usable_cores).
    const long long cores = static_cast<long long>(b.sockets) * b.cores_per_socket;
    if (cores > INT_MAX) finding("more cores than an int can number");
    for (int core : b.reserved_cores) {
      if (core < 0 || core >= cores) finding("reserved core not on the node");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ezpz::deserialize_profiles(text, "fuzz-key");
  ezpz::MachineProfile profile;
  try {
    profile = ezpz::parse_machine_profile(text, k_source);
  } catch (const ezpz::Error& error) {
    // Errors read "<source>:<line>: ...", so a user can find what to fix.
    if (std::string_view(error.what()).rfind(k_source, 0) != 0) {
      finding("error does not name the file", error.what());
    }
    return 0;
  }
  check_profile(profile);
  // Parsing is a function of the text: a second parse must agree (catches
  // reads of uninitialised or stale state).
  if (ezpz::parse_machine_profile(text, k_source) != profile) finding("second parse differs");
  const auto cached = ezpz::deserialize_profiles(ezpz::serialize_profiles("k", {profile}), "k");
  if (!cached || cached->size() != 1 || cached->front() != profile) finding("cache round trip");
  return 0;
}
