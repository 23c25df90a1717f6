// `ezpz doctor`'s checks about this node: the trainer and its devices,
// storage for yeet, resource limits, MASTER_PORT, the Python environment and
// tracking credentials.
#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/text.hpp"
#include "ezpz/doctor/doctor.hpp"
#include "ezpz/doctor/doctor_checks.hpp"
#include "ezpz/stage/yeet.hpp"

namespace ezpz::doctor {
namespace {

std::string bytes(std::uint64_t count) {
  return yeet::format_bytes(static_cast<double>(count));
}

std::size_t host_count(const Snapshot& s) {
  return s.allocation ? s.allocation->hosts.size() : 1;
}

}  // namespace

// ---- trainer ----------------------------------------------------------------

namespace {

constexpr std::string_view k_trainer = "trainer";

// The JSON line `ezpz-smoke --probe` prints; discarded (is_discarded()) when there is none.
nlohmann::ordered_json probe_json(std::string_view out) {
  for (std::string_view line : split_lines(out)) {
    if (line.starts_with('{')) return nlohmann::ordered_json::parse(line, nullptr, false);
  }
  return nlohmann::ordered_json::value_t::discarded;
}

// "cpu, cuda x4"
std::string describe_devices(const nlohmann::ordered_json& devices) {
  std::vector<std::string> names;
  for (const auto& [name, count] : devices.items()) {
    int n = count.get<int>();
    if (n == 1 && (name == "cpu" || name == "mps")) names.push_back(name);
    if (n > 0 && name != "cpu" && name != "mps") names.push_back(fmt::format("{} x{}", name, n));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// A profile's device, as the probe counts it: ROCm builds of libtorch count
// their GPUs as cuda devices.
int devices_for(const nlohmann::ordered_json& devices, const std::string& device) {
  std::string key = device == "rocm" ? "cuda" : device;
  if (!key.empty()) return devices.value(key, 0);
  return devices.value("cuda", 0) + devices.value("xpu", 0);
}

// Problems between what libtorch sees here and what the profile promises.
CheckResult against_profile(const nlohmann::ordered_json& j, const MachineProfile& p,
                            std::string message) {
  int found = devices_for(j["devices"], p.device);
  std::string device = p.device.empty() ? "accelerator" : p.device;
  if (p.gpus_per_node > 0 && found != p.gpus_per_node) {
    return result(k_trainer, Status::warn,
                  fmt::format("{}; profile {} expects {} {} devices per node, libtorch sees {} "
                              "here",
                              message, p.name, p.gpus_per_node, device, found),
                  "run ezpz doctor on a compute node of the job; check the driver (nvidia-smi, "
                  "rocm-smi, xpu-smi)");
  }
  const auto& backends = j["backends"];
  if (!p.backend.empty() &&
      std::find(backends.begin(), backends.end(), p.backend) == backends.end()) {
    return result(k_trainer, Status::warn,
                  fmt::format("{}; profile {} uses backend {}, which this libtorch lacks", message,
                              p.name, p.backend),
                  fmt::format("build ezpz-smoke against a libtorch with {}", p.backend));
  }
  return result(k_trainer, Status::ok, std::move(message));
}

}  // namespace

std::string libtorch_version(const ProgramRun& probe) {
  if (!run_failure(probe).empty()) return "";
  nlohmann::ordered_json j = probe_json(probe.out);
  if (j.is_discarded() || !j.is_object()) return "";
  return j.value("libtorch", "");
}

CheckResult check_trainer(const Snapshot& s, const Derived& d) {
  if (!s.trainer_path) {
    return result(k_trainer, Status::warn, s.trainer_error,
                  "ezpz test needs it; ezpz launch does not");
  }
  const std::string& path = *s.trainer_path;
  std::string remedy =
      fmt::format("run {} --probe by hand; ldd {} shows missing libraries", path, path);
  if (std::string failure = run_failure(s.trainer_probe); !failure.empty()) {
    return result(k_trainer, Status::error, fmt::format("{} --probe {}", path, failure), remedy);
  }
  nlohmann::ordered_json j = probe_json(s.trainer_probe.out);
  if (j.is_discarded() || !j.contains("devices") || !j.contains("backends")) {
    return result(k_trainer, Status::error,
                  fmt::format("{} --probe printed no probe JSON: \"{}\"", path,
                              first_line(s.trainer_probe.out)),
                  remedy);
  }
  std::string message =
      fmt::format("libtorch {}: {}; backends {}; default {} with {}", j.value("libtorch", "?"),
                  describe_devices(j["devices"]),
                  fmt::join(j["backends"].get<std::vector<std::string>>(), ", "),
                  j.value("default_device", "?"), j.value("default_backend", "?"));
  if (!d.profile) return result(k_trainer, Status::ok, message);
  return against_profile(j, *d.profile, message);
}

// ---- storage ----------------------------------------------------------------

namespace {

constexpr std::string_view k_storage = "storage";

std::string describe_source(const StorageProbe& p) {
  std::string size = bytes(p.source_bytes);
  if (p.walk_capped) {
    return fmt::format("{} is at least {} ({} counted in {:g} s)", p.source, size,
                       plural(p.source_files, "file"), p.walk_limit_s);
  }
  return fmt::format("{} is {} ({})", p.source, size, plural(p.source_files, "file"));
}

}  // namespace

CheckResult check_storage(const Snapshot& s, const Derived&) {
  const StorageProbe& p = s.storage;
  const std::string remedy =
      "give ezpz yeet a destination on node-local storage: ezpz yeet SRC DST";
  if (!p.error.empty()) return result(k_storage, Status::error, p.error, remedy);
  if (!p.writable) {
    return result(k_storage, Status::error, fmt::format("{} is not writable", p.directory), remedy);
  }
  std::string message = fmt::format("{} writable, {} free", p.directory, bytes(p.free_bytes));
  if (p.source.empty()) {
    return result(k_storage, Status::ok,
                  message + "; no venv or conda environment is active to stage");
  }
  if (!p.walk_error.empty()) {
    return result(k_storage, Status::warn,
                  fmt::format("{}; the size of {} is unknown: {}", message, p.source, p.walk_error),
                  fmt::format("make {} readable", p.source));
  }
  if (p.source_bytes > p.free_bytes) {
    return result(k_storage, Status::error,
                  fmt::format("{}; {}, more than fits", message, describe_source(p)),
                  fmt::format("free space in {}, or {}", p.directory, remedy));
  }
  return result(k_storage, Status::ok,
                fmt::format("{}; {}, staged to {}", message, describe_source(p), p.destination));
}

// ---- limits -------------------------------------------------------------------

namespace {

constexpr std::string_view k_limits = "limits";

struct LimitRule {
  std::string_view name;
  std::optional<std::uint64_t> minimum;  // nullopt: must be unlimited
  std::string_view ulimit_flag;
  bool in_bytes;
  bool accelerators_only;  // judged only on machines with accelerators
  std::string_view why;
};
const std::array<LimitRule, 3> k_limit_rules = {{
    {"open files", 4096, "-n", false, false, "each rank opens many files and sockets"},
    {"processes", 4096, "-u", false, false, "data loader workers and threads count"},
    {"locked memory", std::nullopt, "-l", true, true,
     "RDMA networks (InfiniBand, Slingshot) pin memory"},
}};

std::string show(const std::optional<std::uint64_t>& value, bool in_bytes) {
  if (!value) return "unlimited";
  return in_bytes ? bytes(*value) : std::to_string(*value);
}

bool accelerated(const Derived& d) {
  return d.profile && (d.profile->gpus_per_node > 0 ||
                       (!d.profile->device.empty() && d.profile->device != "cpu"));
}

// `limit`'s problem and remedy under `rule`, or nothing.
std::optional<std::pair<std::string, std::string>> judge_limit(const LimitRule& rule,
                                                               const Limit& limit) {
  if (!limit.soft) return std::nullopt;
  if (rule.minimum && *limit.soft >= *rule.minimum) return std::nullopt;
  std::string wanted = rule.minimum ? std::to_string(*rule.minimum) : "unlimited";
  std::string problem = fmt::format("{} {} is below {} ({})", rule.name,
                                    show(limit.soft, rule.in_bytes), wanted, rule.why);
  bool hard_allows = !limit.hard || (rule.minimum && *limit.hard >= *rule.minimum);
  std::string remedy = hard_allows
                           ? fmt::format("ulimit {} {} in the job script", rule.ulimit_flag, wanted)
                           : fmt::format("ask the admins to raise the hard {} limit ({})",
                                         rule.name, show(limit.hard, rule.in_bytes));
  return std::pair{problem, remedy};
}

}  // namespace

CheckResult check_limits(const Snapshot& s, const Derived& d) {
  std::vector<std::string> shown, problems, remedies;
  for (const LimitRule& rule : k_limit_rules) {
    auto limit = std::find_if(s.limits.begin(), s.limits.end(),
                              [&](const Limit& l) { return l.name == rule.name; });
    if (limit == s.limits.end()) continue;
    shown.push_back(fmt::format("{} {}", rule.name, show(limit->soft, rule.in_bytes)));
    if (rule.accelerators_only && !accelerated(d)) continue;
    if (auto problem = judge_limit(rule, *limit)) {
      problems.push_back(problem->first);
      remedies.push_back(problem->second);
    }
  }
  std::string message = fmt::format("{}", fmt::join(shown, ", "));
  if (problems.empty()) return result(k_limits, Status::ok, message);
  return result(k_limits, Status::warn, fmt::format("{}; {}", message, fmt::join(problems, "; ")),
                fmt::format("{}", fmt::join(remedies, "; ")));
}

// ---- port -------------------------------------------------------------------

CheckResult check_port(const Snapshot& s, const Derived&) {
  constexpr std::string_view k_port = "port";
  std::optional<std::string> fixed = get_nonempty(s.env, "MASTER_PORT");
  if (fixed) {
    auto port = parse_count(*fixed);
    if (!port || *port < 1 || *port > 65535) {
      return result(k_port, Status::error,
                    fmt::format("MASTER_PORT={}: expected a port number 1-65535", *fixed),
                    "unset MASTER_PORT: ezpz then picks a free port");
    }
    if (!s.port.error.empty()) {
      return result(
          k_port, Status::warn,
          fmt::format("MASTER_PORT={} cannot be bound on this host: {}", *fixed, s.port.error),
          "unset MASTER_PORT (ezpz then picks a free port), or choose a free one");
    }
    return result(k_port, Status::ok, fmt::format("MASTER_PORT={} is free on this host", *fixed));
  }
  if (!s.port.error.empty()) {
    return result(k_port, Status::error,
                  fmt::format("no TCP port can be bound on this host: {}", s.port.error),
                  "ranks meet on a TCP port of the first host: check its network set-up");
  }
  return result(k_port, Status::ok,
                fmt::format("MASTER_PORT is unset: ezpz picks a free port (like {})", s.port.port));
}

// ---- python -------------------------------------------------------------------

namespace {

constexpr std::string_view k_python = "python";

struct Filesystem {
  std::int64_t magic;  // statfs f_type (linux/magic.h and the vendors' headers)
  std::string_view name;
  bool shared;
};
const std::array<Filesystem, 16> k_filesystems = {{
    {0xEF53, "ext4", false},
    {0x58465342, "xfs", false},
    {0x9123683E, "btrfs", false},
    {0x01021994, "tmpfs", false},
    {0x794C7630, "overlayfs", false},
    {0x73717368, "squashfs", false},
    {0x2FC12FC1, "zfs", false},
    {0x6969, "NFS", true},
    {0x0BD00BD0, "Lustre", true},
    {0x47504653, "GPFS", true},
    {0x19830326, "BeeGFS", true},
    {0xFF534D42, "CIFS", true},
    {0xFE534D42, "SMB", true},
    {0x00C36400, "CephFS", true},
    {0x65735546, "FUSE", false},
    {0x01021997, "9p", true},
}};

const Filesystem* find_filesystem(std::int64_t magic) {
  for (const Filesystem& fs : k_filesystems) {
    if (fs.magic == magic) return &fs;
  }
  return nullptr;
}

}  // namespace

CheckResult check_python(const Snapshot& s, const Derived&) {
  const PythonProbe& p = s.python;
  auto active = first_nonempty(s.env, {"VIRTUAL_ENV", "CONDA_PREFIX"});
  if (!active) {
    if (p.python3.empty()) {
      return result(k_python, Status::warn,
                    "no venv or conda environment is active, and no python3 is on PATH",
                    "activate the environment your job uses before ezpz launch");
    }
    return result(k_python, Status::ok,
                  fmt::format("no venv or conda environment is active; python3 is {}", p.python3));
  }
  std::string where = fmt::format("{} {}", active->first, active->second);
  if (!p.error.empty()) {
    return result(k_python, Status::error, fmt::format("{} is set, but {}", active->first, p.error),
                  "activate an environment that exists (source ENV/bin/activate)");
  }
  const Filesystem* fs = find_filesystem(p.filesystem_magic);
  if (fs == nullptr) {
    return result(k_python, Status::ok,
                  fmt::format("{} is on a filesystem ezpz does not know (type {:#x})", where,
                              p.filesystem_magic));
  }
  if (!fs->shared) {
    return result(k_python, Status::ok, fmt::format("{} is on {} (node-local)", where, fs->name));
  }
  std::size_t hosts = host_count(s);
  if (hosts == 1) {
    return result(k_python, Status::ok,
                  fmt::format("{} is on {} (shared; fine for one host)", where, fs->name));
  }
  return result(k_python, Status::warn,
                fmt::format("{} is on {} (shared): {} hosts will import from it at once", where,
                            fs->name, hosts),
                "stage it to node-local storage first: ezpz yeet");
}

// ---- tracking -----------------------------------------------------------------

namespace {

constexpr std::string_view k_tracking = "tracking";

// Credentials and endpoints of other trackers: named when set, never shown.
const std::array<std::string_view, 7> k_other_trackers = {"MLFLOW_TRACKING_URI",
                                                          "MLFLOW_TRACKING_TOKEN",
                                                          "COMET_API_KEY",
                                                          "NEPTUNE_API_TOKEN",
                                                          "HF_TOKEN",
                                                          "HUGGING_FACE_HUB_TOKEN",
                                                          "CLEARML_API_SECRET_KEY"};

// The W&B modes that log nothing remotely; the value is shown only when it is one of these.
const std::array<std::string_view, 3> k_wandb_off = {"offline", "disabled", "dryrun"};

CheckResult judge_wandb(const Snapshot& s) {
  std::string mode = get_nonempty(s.env, "WANDB_MODE").value_or("");
  if (std::find(k_wandb_off.begin(), k_wandb_off.end(), mode) != k_wandb_off.end()) {
    return result(k_tracking, Status::ok, fmt::format("W&B is off (WANDB_MODE={})", mode));
  }
  if (get_nonempty(s.env, "WANDB_API_KEY")) {
    return result(k_tracking, Status::ok, "W&B: WANDB_API_KEY is set (value not shown)");
  }
  if (s.netrc_has_wandb) {
    return result(k_tracking, Status::ok, "W&B: ~/.netrc has an api.wandb.ai login");
  }
  if (auto wanted = first_nonempty(s.env, {"WANDB_PROJECT", "WANDB_ENTITY"})) {
    return result(k_tracking, Status::warn,
                  fmt::format("W&B: {} is set, but there are no credentials (WANDB_API_KEY, "
                              "~/.netrc)",
                              wanted->first),
                  "run wandb login, export WANDB_API_KEY, or set WANDB_MODE=offline");
  }
  return result(k_tracking, Status::ok,
                "W&B: no credentials (WANDB_API_KEY, ~/.netrc); runs that log to W&B need "
                "wandb login");
}

}  // namespace

CheckResult check_tracking(const Snapshot& s, const Derived&) {
  CheckResult wandb = judge_wandb(s);
  std::vector<std::string> others;
  for (std::string_view name : k_other_trackers) {
    if (get_nonempty(s.env, name)) others.emplace_back(name);
  }
  if (!others.empty()) wandb.message += fmt::format("; also set: {}", fmt::join(others, ", "));
  return wandb;
}

// ---- stacks -------------------------------------------------------------------

// Python ranks print their own stacks (ezpz's faulthandler hook); native ones need eu-stack or
// gdb.
CheckResult check_stacks(const Snapshot& s, const Derived&) {
  constexpr std::string_view k_stacks = "stacks";
  if (s.native_stack_tool) {
    return result(k_stacks, Status::ok,
                  fmt::format("hung ranks' stacks: Python's by faulthandler, native ones by {}",
                              *s.native_stack_tool));
  }
  return result(k_stacks, Status::warn,
                "neither eu-stack nor gdb on PATH: hung native ranks get no stacks (Python ranks "
                "still do)",
                "install elfutils (eu-stack, the faster) or gdb (Debian: apt-get install "
                "elfutils)");
}

}  // namespace ezpz::doctor
