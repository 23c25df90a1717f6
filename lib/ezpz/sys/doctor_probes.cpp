// The probes behind `ezpz doctor`: this node as it is. Each catches its own
// failures and records them in the snapshot: doctor reports, it never stops.
#include "ezpz/sys/doctor_probes.hpp"

#include <arpa/inet.h>
#include <fts.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/stage/yeet.hpp"
#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/launcher_program.hpp"
#include "ezpz/sys/stacks.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Long enough for a healthy launcher to print its version, short enough for a hung one.
constexpr milliseconds k_version_timeout{5000};
// torchrun's trial imports torch and starts a rank: ~1.5 s on an idle node.
constexpr milliseconds k_torchrun_timeout{15000};
// Name look-ups and the environment's size run beside ezpz-smoke's probe
// (~0.6 s of loading libtorch) and must not outlast it.
constexpr milliseconds k_lookup_timeout{500};
constexpr milliseconds k_walk_limit{300};
// `import torch` from a cold shared filesystem can take seconds; longer than
// this, and every rank's start is delayed as much (the check says so).
constexpr milliseconds k_import_timeout{20000};

std::string errno_text(std::string_view where) {
  return fmt::format("{}: {}", where, std::strerror(errno));
}

// ---- Host look-ups ------------------------------------------------------------

std::string first_address(const addrinfo* info) {
  char text[NI_MAXHOST] = {};
  if (info == nullptr || ::getnameinfo(info->ai_addr, info->ai_addrlen, text, sizeof text, nullptr,
                                       0, NI_NUMERICHOST) != 0) {
    return "";
  }
  return text;
}

// The requests glibc works on in its own threads. A request that cannot be
// cancelled at the deadline still writes into its gaicb, so they are then
// left allocated: doctor exits moments later.
struct Lookups {
  addrinfo hints{};
  std::vector<std::string> names;
  std::vector<gaicb> blocks;
  std::vector<gaicb*> pending;  // null once answered
};

void collect(Lookups& l, std::vector<doctor::HostLookup>& results, bool final) {
  for (std::size_t i = 0; i < l.blocks.size(); ++i) {
    if (l.pending[i] == nullptr) continue;
    int rc = ::gai_error(&l.blocks[i]);
    if (rc == EAI_INPROGRESS && !final) continue;
    if (rc == EAI_INPROGRESS) {
      results[i].result = doctor::HostLookup::Result::timed_out;
      if (::gai_cancel(&l.blocks[i]) == EAI_CANCELED) l.pending[i] = nullptr;
      continue;
    }
    results[i].result =
        rc == 0 ? doctor::HostLookup::Result::resolved : doctor::HostLookup::Result::failed;
    results[i].detail = rc == 0 ? first_address(l.blocks[i].ar_result) : ::gai_strerror(rc);
    if (rc == 0) ::freeaddrinfo(l.blocks[i].ar_result);
    l.pending[i] = nullptr;
  }
}

bool all_answered(const Lookups& l) {
  return std::all_of(l.pending.begin(), l.pending.end(), [](gaicb* p) { return p == nullptr; });
}

// ---- Storage for yeet -----------------------------------------------------------

// du of `root` (apparent sizes, symlinks not followed) until `limit`; then a lower bound.
void measure(doctor::StorageProbe& p, milliseconds limit) {
  p.walk_limit_s = std::chrono::duration<double>(limit).count();
  std::string root = p.source;
  char* roots[] = {root.data(), nullptr};
  std::unique_ptr<FTS, int (*)(FTS*)> walk(::fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR, nullptr),
                                           ::fts_close);
  if (!walk) {
    p.walk_error = errno_text(p.source);
    return;
  }
  const Clock::time_point stop = Clock::now() + limit;
  while (FTSENT* entry = ::fts_read(walk.get())) {
    if ((entry->fts_info == FTS_NS || entry->fts_info == FTS_DNR) && entry->fts_level == 0) {
      p.walk_error = fmt::format("{}: {}", p.source, std::strerror(entry->fts_errno));
      return;
    }
    if (entry->fts_info == FTS_F || entry->fts_info == FTS_SL) {
      p.source_bytes += static_cast<std::uint64_t>(entry->fts_statp->st_size);
      ++p.source_files;
    }
    if (p.source_files % 256 == 0 && Clock::now() >= stop) {
      p.walk_capped = true;
      return;
    }
  }
}

doctor::StorageProbe probe_storage(const Env& env) {
  doctor::StorageProbe p;
  doctor::YeetTarget target = doctor::yeet_target(env);
  p.source = target.source;
  p.destination = target.destination;
  p.directory = target.directory;
  struct statvfs info {};
  if (::statvfs(p.directory.c_str(), &info) != 0) {
    p.error = errno_text(p.directory);
    return p;
  }
  p.free_bytes = static_cast<std::uint64_t>(info.f_bavail) * info.f_frsize;
  p.writable = ::access(p.directory.c_str(), W_OK) == 0;
  if (!p.source.empty()) measure(p, k_walk_limit);
  return p;
}

// ---- Limits, port, Python, .netrc -------------------------------------------------

std::vector<doctor::Limit> probe_limits() {
  const std::array<std::pair<const char*, int>, 3> k_resources = {{
      {"open files", RLIMIT_NOFILE},
      {"processes", RLIMIT_NPROC},
      {"locked memory", RLIMIT_MEMLOCK},
  }};
  auto value = [](rlim_t v) {
    return v == RLIM_INFINITY ? std::nullopt : std::optional<std::uint64_t>(v);
  };
  std::vector<doctor::Limit> limits;
  for (const auto& [name, resource] : k_resources) {
    rlimit limit{};
    if (::getrlimit(resource, &limit) != 0) continue;
    limits.push_back({name, value(limit.rlim_cur), value(limit.rlim_max)});
  }
  return limits;
}

// MASTER_PORT as rank 0's TCPStore binds it (SO_REUSEADDR, any address).
doctor::PortProbe bind_port(int port) {
  doctor::PortProbe probe;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {0, std::strerror(errno)};
  int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    probe.error = std::strerror(errno);
  } else {
    probe.port = port;
  }
  ::close(fd);
  return probe;
}

doctor::PortProbe probe_port(const Env& env) {
  if (auto text = get_nonempty(env, "MASTER_PORT")) {
    auto port = parse_count(*text);
    if (!port || *port < 1 || *port > 65535) return {};  // the check names the bad value
    return bind_port(static_cast<int>(*port));
  }
  try {
    return {find_free_port(), ""};
  } catch (const Error& error) {
    return {0, error.what()};
  }
}

// What the ranks' python3 imports, started first: with torch it is the slowest
// probe (over a second here), and every other one runs meanwhile.
std::optional<std::future<doctor::ProgramRun>> start_imports(const std::string& python3,
                                                             const Env& env) {
  if (python3.empty()) return std::nullopt;
  return start_program(doctor::python_probe_argv(python3), env, k_import_timeout);
}

doctor::PythonProbe probe_python(const Env& env, std::string python3) {
  doctor::PythonProbe p;
  p.python3 = std::move(python3);
  p.prefix = yeet::default_source(env).value_or("");
  if (p.prefix.empty()) return p;
  struct statfs info {};
  if (::statfs(p.prefix.c_str(), &info) != 0) {
    p.error = errno_text(p.prefix);
  } else {
    p.filesystem_magic = static_cast<std::int64_t>(info.f_type);
  }
  return p;
}

// Only whether W&B has a login there: the file's secrets are never kept.
bool netrc_has_wandb(const Env& env) {
  std::optional<std::string> path = get_nonempty(env, "NETRC");
  if (!path) {
    auto home = get_nonempty(env, "HOME");
    if (!home) return false;
    path = *home + "/.netrc";
  }
  auto text = read_file_if_present(*path);
  return text && doctor::netrc_has_machine(*text, "api.wandb.ai");
}

void probe_profiles(doctor::Snapshot& s) {
  try {
    s.profile_files = read_profile_files(s.env);
  } catch (const std::exception& error) {
    s.profiles_error = error.what();
  }
}

// With a slash always, so that find_program takes it as a path, not a name to search PATH for.
bool is_beside(const std::filesystem::path& launcher, std::string_view name) {
  const std::filesystem::path dir = launcher.has_parent_path() ? launcher.parent_path() : ".";
  return find_program((dir / name).string(), {}).has_value();
}

doctor::Companion look_beside(const std::string& launcher, std::string_view name) {
  std::error_code error;
  const std::filesystem::path resolved = std::filesystem::canonical(launcher, error);
  std::error_code unused;  // is_symlink: false when it cannot tell
  return {.name = std::string(name),
          .beside = is_beside(launcher, name),
          .link = std::filesystem::is_symlink(launcher, unused),
          .resolved = error ? launcher : resolved.string(),
          .beside_resolved = !error && is_beside(resolved, name)};
}

// Finds the launcher the plan would use, as a launch finds it, and starts its --version.
std::optional<std::future<doctor::ProgramRun>> start_launcher_probe(doctor::Snapshot& s) {
  doctor::Derived d = doctor::derive(s);
  if (!d.profile || !is_known_launcher(d.launcher)) return std::nullopt;
  LauncherProgramChoice choice = resolve_launcher_program(
      d.launcher, named_launcher_program(s.launcher_program_flag, *d.profile, d.launcher), s.env);
  s.launcher_program = choice.program;
  if (!choice.path.empty()) s.launcher_path = choice.path;
  const std::string_view companion = launcher_row(d.launcher)->started_beside;
  if (s.launcher_path && !companion.empty()) s.companion = look_beside(*s.launcher_path, companion);
  // A launcher whose identity is not checked (torchrun) has no --version worth starting.
  if (!s.launcher_path || expected_flavour(d.launcher).empty()) return std::nullopt;
  return start_program({*s.launcher_path, "--version"}, s.env, k_version_timeout);
}

// torchrun has no --version that says whether it can start ranks: it is made to start one.
std::optional<std::future<doctor::ProgramRun>> start_torchrun_trial(const doctor::Snapshot& s) {
  if (!s.launcher_path || s.launcher_program != "torchrun") return std::nullopt;
  return start_program(doctor::torchrun_trial_argv(*s.launcher_path), s.env, k_torchrun_timeout);
}

}  // namespace

std::vector<doctor::HostLookup> resolve_hosts(const std::vector<std::string>& hosts,
                                              milliseconds timeout) {
  std::vector<doctor::HostLookup> results(hosts.size());
  for (std::size_t i = 0; i < hosts.size(); ++i) results[i].host = hosts[i];
  if (hosts.empty()) return results;
  auto l = std::make_unique<Lookups>();
  l->hints.ai_family = AF_UNSPEC;
  l->hints.ai_socktype = SOCK_STREAM;
  l->blocks.resize(hosts.size());
  l->names = hosts;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    l->blocks[i].ar_name = l->names[i].c_str();
    l->blocks[i].ar_request = &l->hints;
    l->pending.push_back(&l->blocks[i]);
  }
  if (::getaddrinfo_a(GAI_NOWAIT, l->pending.data(), static_cast<int>(hosts.size()), nullptr) !=
      0) {
    for (auto& r : results)
      r = {r.host, doctor::HostLookup::Result::failed, "getaddrinfo_a failed"};
    return results;
  }
  const Clock::time_point deadline = Clock::now() + timeout;
  // Polled, not gai_suspend(): glibc 2.36's gai_suspend can return while a
  // helper thread is about to signal the waiter it left on its stack (seen
  // here as a crash in __gai_notify, about 1 run in 40).
  for (collect(*l, results, false); !all_answered(*l) && Clock::now() < deadline;
       collect(*l, results, false)) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  collect(*l, results, true);
  if (!all_answered(*l)) l.release();  // glibc still writes into them (see Lookups)
  return results;
}

namespace {

// Where each library the applying profile names lies on LD_LIBRARY_PATH ("" where it does not).
EnvList find_libraries(const doctor::Snapshot& s) {
  doctor::Derived d = doctor::derive(s);
  EnvList found;
  if (!d.profile) return found;
  const std::string path = get_nonempty(s.env, "LD_LIBRARY_PATH").value_or("");
  for (const auto& [library, documented] : d.profile->libraries) {
    std::string where;
    for (std::string_view dir : split(path, ':')) {
      std::error_code ignored;
      if (dir.empty() || !std::filesystem::exists(fmt::format("{}/{}", dir, library), ignored))
        continue;
      where = dir;
      break;
    }
    found.emplace_back(library, where);
  }
  return found;
}

}  // namespace

void probe_node(doctor::Snapshot& s) {
  std::string python3 = find_program("python3", s.env).value_or("");
  auto imports = start_imports(
      python3, s.python_hook.empty() ? s.env : with_python_path(s.env, s.python_hook));
  auto storage = std::async(std::launch::async, probe_storage, std::cref(s.env));
  std::vector<std::string> hosts = s.allocation ? s.allocation->hosts : std::vector<std::string>{};
  s.lookup_timeout_s = std::chrono::duration<double>(k_lookup_timeout).count();
  auto lookups = std::async(std::launch::async, resolve_hosts, hosts, k_lookup_timeout);
  auto accelerators = std::async(std::launch::async, probe_local_accelerators, std::cref(s.env));
  probe_profiles(s);
  s.libraries_found = find_libraries(s);
  auto version = start_launcher_probe(s);
  auto torchrun = start_torchrun_trial(s);
  s.limits = probe_limits();
  s.native_stack_tool = native_stack_tool(s.env);
  s.port = probe_port(s.env);
  s.python = probe_python(s.env, python3);
  s.netrc_has_wandb = netrc_has_wandb(s.env);
  if (version) s.launcher_version = version->get();
  if (torchrun) s.torchrun_trial = torchrun->get();
  s.lookups = lookups.get();
  s.accelerators = accelerators.get();
  s.storage = storage.get();
  if (imports) s.python.imports = imports->get();
}

ProbeLaunch run_probe_launch(const LaunchPlan& plan, const Env& env, milliseconds timeout,
                             const std::string& output_path) {
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(output_path).parent_path(), ignored);
  ProcessOptions options;
  options.grace = std::chrono::seconds(5);
  options.timeout = timeout;
  options.stdout_path = output_path;
  const Clock::time_point started = Clock::now();
  ProbeLaunch launch;
  launch.status = ProcessExecutor(env, options).run(plan);
  launch.timed_out = Clock::now() - started >= timeout;
  launch.output = read_file_if_present(output_path).value_or("");
  std::filesystem::remove(output_path, ignored);
  return launch;
}

std::string current_user(const Env& env) {
  if (auto user = first_nonempty(env, {"USER", "LOGNAME"})) return user->second;
  std::array<char, 4096> buffer{};
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return "";
  }
  return found->pw_name;
}

}  // namespace ezpz::sys
