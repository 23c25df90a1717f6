#include "ezpz/launchers/runtime_env.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/launchers/launcher_table.hpp"
#include "ezpz/launchers/rank_env.hpp"

namespace ezpz::runtime {
namespace {

// One launcher's per-rank variables. `node`, `local_size_list` and `hosts` are empty
// where the launcher has none.
struct Family {
  std::string_view label;
  std::string_view rank;
  std::string_view size;
  std::string_view local_rank;
  std::string_view local_size;
  std::string_view local_size_list;  // Slurm's compressed per-node counts, "2(x3),1"
  std::string_view node;
  // The host count, from a launcher that gives no count per host (Flux's FLUX_JOB_NNODES):
  // each host holds size / hosts ranks, the share of its block placement, when that divides.
  std::string_view hosts = {};
};

std::string_view name_or_empty(const char* name) {
  return name ? name : "";
}

// A launcher row's variables, labelled by the implementation it asks for ("Cray PALS").
Family family_of(const LauncherRow& row) {
  const RankVariables& v = row.rank_variables;
  return {row.flavours.empty() ? row.name : row.flavours.front().name,
          name_or_empty(v.rank),
          name_or_empty(v.size),
          name_or_empty(v.local_rank),
          name_or_empty(v.local_size),
          name_or_empty(v.local_size_list),
          name_or_empty(v.node),
          name_or_empty(v.host_count)};
}

// Order matters: torch's own contract first; PALS and Flux before Hydra because
// Cray PMI and Flux's PMI also set PMI_RANK; Slurm before Open MPI because mpirun
// is the rarest here; then the other launchers that name both the rank and the size.
std::vector<Family> make_families() {
  std::vector<Family> families = {
      {"torch env://", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "", ""}};
  constexpr std::array<std::string_view, 4> k_first = {"pals", "flux", "hydra", "srun"};
  for (std::string_view name : k_first) {
    for (const LauncherRow& row : k_launchers) {
      if (row.name == name) families.push_back(family_of(row));
    }
  }
  for (const LauncherRow& row : k_launchers) {
    const RankVariables& v = row.rank_variables;
    bool first = std::find(k_first.begin(), k_first.end(), row.name) != k_first.end();
    if (!first && v.rank && v.size) families.push_back(family_of(row));
  }
  return families;
}

const std::vector<Family>& families() {
  static const std::vector<Family> all = make_families();
  return all;
}

// Problems are collected so one run reports all of them.
class Problems {
 public:
  void add(std::string problem) { list_.push_back(std::move(problem)); }
  void throw_if_any() const {
    if (list_.empty()) return;
    std::string joined = list_.front();
    for (size_t i = 1; i < list_.size(); ++i) joined += "; " + list_[i];
    throw Error(joined);
  }

 private:
  std::vector<std::string> list_;
};

// A set variable's value parsed as a count; nullopt when unset or unnamed,
// and when it is not a count (a problem is noted).
std::optional<int> count_var(const Env& env, std::string_view name, Problems& problems) {
  if (name.empty()) return std::nullopt;
  auto text = get_nonempty(env, name);
  if (!text) return std::nullopt;
  auto value = parse_count(*text);
  if (!value || *value > 1'000'000'000) {
    problems.add(fmt::format("{}={}: expected a non-negative integer", name, *text));
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

struct LocalSize {
  std::optional<int> value;
  std::string_view name;  // the variable it came from, for messages
};

// The host count's even share of `size`. An uneven one is reported: the share of this
// host is unknown, and assuming one host would send other hosts' ranks to 127.0.0.1.
std::optional<int> even_share(const Env& env, const Family& family, std::optional<int> size,
                              Problems& problems) {
  auto hosts = count_var(env, family.hosts, problems);
  if (!hosts || !size || *hosts < 1) return std::nullopt;
  if (*size % *hosts == 0) return *size / *hosts;
  problems.add(
      fmt::format("{}={} ranks on {}={} hosts: ranks per host differ, and {} does not "
                  "say how many are on this one; start it with ezpz launch",
                  family.size, *size, family.hosts, *hosts, family.label));
  return std::nullopt;
}

// The per-node list (Slurm's step layout, exact even when ranks per node
// differ) when there is one, else the family's plain count, else the hosts' even share.
LocalSize local_size_of(const Env& env, const Family& family, std::optional<int> node,
                        std::optional<int> size, Problems& problems) {
  auto list =
      family.local_size_list.empty() ? std::nullopt : get_nonempty(env, family.local_size_list);
  if (list && node) {
    if (auto count = tasks_on_node(*list, *node)) return {*count, family.local_size_list};
  }
  if (!family.hosts.empty()) return {even_share(env, family, size, problems), family.hosts};
  return {count_var(env, family.local_size, problems), family.local_size};
}

const Family* first_present_family(const Env& env) {
  for (const Family& family : families()) {
    if (get_nonempty(env, family.rank)) return &family;
  }
  return nullptr;
}

void check_consistent(const RankInfo& info, const Family& family, std::string_view local_size,
                      Problems& problems) {
  if (info.world_size < 1) {
    problems.add(fmt::format("{}={}: expected at least 1", family.size, info.world_size));
    return;
  }
  if (info.rank >= info.world_size) {
    problems.add(fmt::format("{}={}: not below {}={}", family.rank, info.rank, family.size,
                             info.world_size));
  }
  if (info.local_world_size < 1 || info.local_world_size > info.world_size) {
    problems.add(fmt::format("{}={}: expected 1 to {}={}", local_size, info.local_world_size,
                             family.size, info.world_size));
  } else if (info.local_rank >= info.local_world_size) {
    problems.add(fmt::format("{}={}: not below {}={}", family.local_rank, info.local_rank,
                             local_size, info.local_world_size));
  }
}

// "RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (torch env://)": the
// variables actually read, so a wrong rank can be traced to its source.
std::string describe_source(const Family& family, bool local_rank_set, const LocalSize& local) {
  std::string names = fmt::format("{}, {}", family.rank, family.size);
  if (local_rank_set) names += fmt::format(", {}", family.local_rank);
  if (local.value) names += fmt::format(", {}", local.name);
  bool assumed = !local_rank_set || !local.value;
  return fmt::format("{} ({}{})", names, family.label, assumed ? "; one host assumed" : "");
}

RankInfo rank_info_from_family(const Env& env, const Family& family) {
  Problems problems;
  auto rank = count_var(env, family.rank, problems);
  auto size = count_var(env, family.size, problems);
  auto local_rank = count_var(env, family.local_rank, problems);
  auto node = count_var(env, family.node, problems);
  LocalSize local = local_size_of(env, family, node, size, problems);
  if (rank && !size && !get_nonempty(env, family.size)) {
    problems.add(fmt::format("{}={} is set but {} is not", family.rank, *rank, family.size));
  }
  problems.throw_if_any();
  RankInfo info;
  info.rank = *rank;
  info.world_size = *size;
  // A missing local size can only be read as one host; a missing local rank
  // as block placement, which is what every launcher here does by default.
  info.local_world_size = local.value.value_or(info.world_size);
  info.local_rank =
      local_rank.value_or(info.local_world_size > 0 ? info.rank % info.local_world_size : 0);
  check_consistent(info, family, local.name, problems);
  problems.throw_if_any();
  info.node_index = node ? *node : info.rank / info.local_world_size;
  info.source = describe_source(family, local_rank.has_value(), local);
  return info;
}

std::optional<long> parse_positive_seconds_ms(std::string_view text) {
  double seconds = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, seconds);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(seconds)) {
    return std::nullopt;
  }
  double ms = std::round(seconds * 1000.0);
  if (ms < 1 || ms > 1e12) return std::nullopt;
  return static_cast<long>(ms);
}

}  // namespace

RankInfo rank_info_from_env(const Env& env) {
  const Family* family = first_present_family(env);
  if (!family) {
    RankInfo single;
    single.source = "no rank variables set: a single process";
    return single;
  }
  return rank_info_from_family(env, *family);
}

Rendezvous rendezvous_from_env(const Env& env, const RankInfo& info) {
  Rendezvous r;
  if (auto port = get_nonempty(env, "MASTER_PORT")) {
    auto value = parse_count(*port);
    if (!value || *value < 1 || *value > 65535) {
      throw Error(fmt::format("MASTER_PORT={}: expected a port number from 1 to 65535", *port));
    }
    r.master_port = static_cast<int>(*value);
  }
  std::string port_source = get_nonempty(env, "MASTER_PORT") ? "MASTER_PORT" : "default port";
  if (auto addr = get_nonempty(env, "MASTER_ADDR")) {
    r.master_addr = *addr;
    r.source = "MASTER_ADDR, " + port_source;
    return r;
  }
  if (info.local_world_size < info.world_size) {
    throw Error(fmt::format(
        "MASTER_ADDR is not set: {} ranks on {} hosts need rank 0's host name (ezpz launch sets "
        "it)",
        info.world_size, (info.world_size + info.local_world_size - 1) / info.local_world_size));
  }
  r.master_addr = "127.0.0.1";
  r.source = fmt::format(
      "MASTER_ADDR unset: 127.0.0.1, {} on one host; {}",
      info.world_size == 1 ? "1 rank" : fmt::format("all {} ranks", info.world_size), port_source);
  return r;
}

long parse_seconds(std::string_view name, std::string_view text) {
  auto ms = parse_positive_seconds_ms(text);
  if (!ms) throw Error(fmt::format("{}={}: expected a positive number of seconds", name, text));
  return *ms;
}

Timeouts timeouts_from_env(const Env& env) {
  Timeouts t;
  if (auto text = get_nonempty(env, "EZPZ_RENDEZVOUS_TIMEOUT")) {
    t.rendezvous_ms = parse_seconds("EZPZ_RENDEZVOUS_TIMEOUT", *text);
  }
  if (auto text = get_nonempty(env, "EZPZ_COLLECTIVE_TIMEOUT")) {
    t.collective_ms = parse_seconds("EZPZ_COLLECTIVE_TIMEOUT", *text);
  }
  return t;
}

bool parse_switch(std::string_view name, std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view yes : {"1", "true", "yes", "on"}) {
    if (lower == yes) return true;
  }
  for (std::string_view no : {"", "0", "false", "no", "off"}) {
    if (lower == no) return false;
  }
  throw Error(fmt::format("{}={}: expected 1, true, yes, on or 0, false, no, off", name, text));
}

namespace {

// One accelerator kind as this libtorch sees it.
struct DeviceRow {
  std::string_view type;
  std::string_view label;  // for messages: "CUDA"
  bool built;
  int count;  // usable devices; mps counts as one
};

std::vector<DeviceRow> device_rows(const Availability& a) {
  return {
      {"cuda", "CUDA", a.cuda_built, a.cuda_devices},
      {"xpu", "XPU", a.xpu_built, a.xpu_devices},
      {"mps", "MPS", a.mps_built, a.mps_available ? 1 : 0},
      {"cpu", "CPU", true, 1},
  };
}

struct DeviceRequest {
  std::string type;
  std::optional<int> index;
};

DeviceRequest parse_device_request(const std::string& text) {
  auto colon = text.find(':');
  DeviceRequest request{text.substr(0, colon), std::nullopt};
  if (colon == std::string::npos) return request;
  auto index = parse_count(std::string_view(text).substr(colon + 1));
  if (!index || *index > 1'000'000) {
    throw Error(fmt::format("TORCH_DEVICE={}: expected a device index after ':'", text));
  }
  request.index = static_cast<int>(*index);
  return request;
}

// The index an accelerator gets when TORCH_DEVICE names none. EZPZ_LOCAL_DEVICE is set by a
// plan that gave each rank its own devices: 0 once a rank sees only its own, where LOCAL_RANK
// would name a device it cannot see (deepspeedai/DeepSpeed#3165). Without it, LOCAL_RANK.
struct DefaultIndex {
  int index;
  std::string where;      // "EZPZ_LOCAL_DEVICE=0", "LOCAL_RANK=2"
  bool from_variable;     // EZPZ_LOCAL_DEVICE decided
  std::string_view hint;  // after "only N devices visible"
};

DefaultIndex default_index(const Env& env, int local_rank) {
  std::optional<std::string> text = get_nonempty(env, k_local_device_variable);
  if (!text) {
    return {.index = local_rank,
            .where = fmt::format("LOCAL_RANK={}", local_rank),
            .from_variable = false,
            .hint = "; run at most that many ranks per host"};
  }
  std::string where = fmt::format("{}={}", k_local_device_variable, *text);
  std::optional<long> index = parse_count(*text);
  if (!index || *index > 1'000'000) {
    throw Error(where + ": expected a device index (a non-negative integer)");
  }
  return {.index = static_cast<int>(*index), .where = where, .from_variable = true, .hint = ""};
}

DeviceChoice pick_index(const DeviceRow& row, std::optional<int> requested,
                        const DefaultIndex& fallback, const std::string& where) {
  if (row.type == "cpu" || row.type == "mps") return {std::string(row.type), -1, ""};
  int chosen = requested.value_or(fallback.index);
  if (chosen >= row.count) {
    throw Error(fmt::format("{}: only {} {} device{} visible{}", requested ? where : fallback.where,
                            row.count, row.label, row.count == 1 ? " is" : "s are",
                            requested ? "" : fallback.hint));
  }
  return {std::string(row.type), chosen, ""};
}

// What decided the index, after what decided the type: the report then reads
// "cuda:0 (first usable of cuda, xpu, mps, cpu; index from EZPZ_LOCAL_DEVICE=0)".
std::string index_source(const DeviceChoice& choice, std::optional<int> requested,
                         const DefaultIndex& fallback) {
  if (requested) return "";
  if (choice.index >= 0) return "; index from " + fallback.where;
  if (!fallback.from_variable) return "";
  return fmt::format("; {} not used: {} has no device index", fallback.where, choice.type);
}

DeviceChoice requested_device(const std::string& text, const Availability& available,
                              const DefaultIndex& fallback) {
  DeviceRequest request = parse_device_request(text);
  std::string where = "TORCH_DEVICE=" + text;
  for (const DeviceRow& row : device_rows(available)) {
    if (row.type != request.type) continue;
    if (!row.built) {
      throw Error(fmt::format("{}: this libtorch was built without {}", where, row.label));
    }
    if (row.count == 0) throw Error(fmt::format("{}: no {} device is visible", where, row.label));
    DeviceChoice choice = pick_index(row, request.index, fallback, where);
    choice.source = where + index_source(choice, request.index, fallback);
    return choice;
  }
  throw Error(fmt::format("{}: unknown device; expected cpu, cuda, xpu or mps", where));
}

}  // namespace

DeviceChoice choose_device(const Env& env, const Availability& available, int local_rank) {
  DefaultIndex fallback = default_index(env, local_rank);
  if (std::optional<std::string> torch_device = get_nonempty(env, "TORCH_DEVICE")) {
    return requested_device(*torch_device, available, fallback);
  }
  for (const DeviceRow& row : device_rows(available)) {
    if (!row.built || row.count == 0) continue;
    DeviceChoice choice = pick_index(row, std::nullopt, fallback, "");
    choice.source =
        "first usable of cuda, xpu, mps, cpu" + index_source(choice, std::nullopt, fallback);
    return choice;
  }
  return {"cpu", -1, "cpu"};  // unreachable: the cpu row is always usable
}

namespace {

struct BackendRow {
  std::string_view name;
  std::string_view label;
  bool built;
  std::vector<std::string_view> devices;  // device types it can communicate from
  bool own_gpu = false;  // refuses two ranks on one GPU (NCCL: "Duplicate GPU detected")
};

std::vector<BackendRow> backend_rows(const Availability& a) {
  return {
      {"gloo", "Gloo", true, {"cpu", "cuda", "mps"}},
      {"nccl", "NCCL", a.nccl, {"cuda"}, true},
      {"xccl", "XCCL", a.xccl, {"xpu"}},
      {"ccl", "oneCCL", a.ccl, {"xpu", "cpu"}},
      {"mpi", "MPI", a.mpi, {"cpu"}},
  };
}

// The table's default for each device, best first; gloo ends every list.
std::vector<std::string_view> preferred_backends(std::string_view device) {
  if (device == "cuda") return {"nccl", "gloo"};
  if (device == "xpu") return {"xccl", "ccl", "gloo"};
  return {"gloo"};
}

// "cpu, cuda or mps".
std::string either(const std::vector<std::string_view>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

bool drives(const BackendRow& row, std::string_view device) {
  return std::find(row.devices.begin(), row.devices.end(), device) != row.devices.end();
}

// Why `row` cannot serve ranks that share a GPU; nullopt where it can, or none share.
std::optional<std::string> refuses_shared(const BackendRow& row,
                                          const std::optional<std::string>& shared_gpu) {
  if (!row.own_gpu || !shared_gpu) return std::nullopt;
  return fmt::format("{} needs a GPU of its own per rank, but {}", row.label, *shared_gpu);
}

BackendChoice requested_backend(const std::string& name, const DeviceChoice& device,
                                const Availability& available,
                                const std::optional<std::string>& shared_gpu) {
  std::string where = "TORCH_BACKEND=" + name;
  for (const BackendRow& row : backend_rows(available)) {
    if (row.name != name) continue;
    if (!row.built) {
      throw Error(fmt::format("{}: this libtorch was built without {}", where, row.label));
    }
    if (!drives(row, device.type)) {
      throw Error(fmt::format("{}: needs a {} device, but the device is {}", where,
                              either(row.devices), device.name()));
    }
    if (auto why = refuses_shared(row, shared_gpu)) {
      throw Error(
          fmt::format("{}: {}; pass TORCH_BACKEND=gloo, or fewer ranks per host", where, *why));
    }
    return {name, where};
  }
  throw Error(fmt::format("{}: unknown backend; expected gloo, nccl, xccl, ccl or mpi", where));
}

}  // namespace

BackendChoice choose_backend(const std::optional<std::string>& torch_backend,
                             const DeviceChoice& device, const Availability& available,
                             const std::optional<std::string>& shared_gpu) {
  if (torch_backend && !torch_backend->empty()) {
    return requested_backend(*torch_backend, device, available, shared_gpu);
  }
  std::vector<BackendRow> rows = backend_rows(available);
  std::string why_not_best = "; no better backend in this libtorch";
  for (std::string_view name : preferred_backends(device.type)) {
    auto row = std::find_if(rows.begin(), rows.end(), [&](auto& r) { return r.name == name; });
    auto why = refuses_shared(*row, shared_gpu);
    if (row->built && why) {
      why_not_best = "; " + *why;
      continue;
    }
    if (!row->built) continue;
    bool fell_back = name != preferred_backends(device.type).front();
    return {std::string(name),
            fmt::format("default for {}{}", device.type, fell_back ? why_not_best : "")};
  }
  return {"gloo", "gloo"};  // unreachable: gloo is always built
}

std::optional<std::string> shared_gpu(const Env& env, int local_rank, int local_world_size) {
  std::optional<std::string> masks = get_nonempty(env, k_gpu_masks_variable);
  if (!masks || local_rank < 0) return std::nullopt;
  auto devices_of = [&](int r) {
    return split(gpu_mask_entry(*masks, static_cast<std::size_t>(r)), ',');
  };
  const std::vector<std::string_view> mine = devices_of(local_rank);
  for (int other = 0; other < local_world_size; ++other) {
    if (other == local_rank) continue;
    for (std::string_view gpu : devices_of(other)) {
      if (std::find(mine.begin(), mine.end(), gpu) == mine.end()) continue;
      return fmt::format("local ranks {} and {} share GPU {} ({}={})", std::min(local_rank, other),
                         std::max(local_rank, other), gpu, k_gpu_masks_variable, *masks);
    }
  }
  return std::nullopt;
}

std::vector<std::string> available_backends(const Availability& available) {
  std::vector<std::string> names;
  for (const BackendRow& row : backend_rows(available)) {
    if (row.built) names.emplace_back(row.name);
  }
  return names;
}

unsigned long long rank_seed(unsigned long long seed, int rank) {
  return seed * static_cast<unsigned long long>(rank + 1);
}

LogPolicy log_policy(const Env& env, int rank) {
  bool all = false;
  if (auto text = get_nonempty(env, "EZPZ_LOG_FROM_ALL_RANKS")) {
    all = parse_switch("EZPZ_LOG_FROM_ALL_RANKS", *text);
  }
  if (!all) return {rank == 0, ""};
  return {true, fmt::format("[rank {}] ", rank)};
}

}  // namespace ezpz::runtime
