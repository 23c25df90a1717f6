#include "ezpz/launchers/launchers.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/hostlist.hpp"

namespace ezpz {

const LauncherRow* launcher_row(std::string_view name) {
  for (const LauncherRow& row : k_launchers) {
    bool alias = std::find(row.aliases.begin(), row.aliases.end(), name) != row.aliases.end();
    if (row.name == name || alias) return &row;
  }
  return nullptr;
}

namespace {

// A flag ending in '=' or ':' takes its value in the same word ("--np=8",
// "--requires=host:n[1-2]"); others take it as the next word ("-n 8").
void add_flag(std::vector<std::string>& argv, std::string_view flag, const std::string& value) {
  if (flag.empty()) return;
  if (flag.back() == '=' || flag.back() == ':') {
    argv.push_back(fmt::format("{}{}", flag, value));
  } else {
    argv.emplace_back(flag);
    argv.push_back(value);
  }
}

// Cray node ids as aprun -L takes them: nid00012 is node 12. A name of another form is passed
// as it is, for aprun to refuse.
std::string node_ids(const std::vector<std::string>& hosts) {
  std::vector<std::string> ids;
  for (const std::string& host : hosts) {
    std::string_view name = short_host_name(host);
    bool nid = name.starts_with("nid") && name.size() > 3 &&
               name.find_first_not_of("0123456789", 3) == std::string_view::npos;
    std::size_t digits = nid ? std::min(name.find_first_not_of('0', 3), name.size() - 1) : 0;
    ids.emplace_back(nid ? name.substr(digits) : std::string_view(host));
  }
  return fmt::format("{}", fmt::join(ids, ","));
}

void add_hosts(std::vector<std::string>& argv, const LauncherRow& d, const LauncherInput& in) {
  if (d.hosts_form == HostsForm::hostlist && !in.hosts.empty()) {
    add_flag(argv, d.hosts, compress_hostlist(in.hosts));
  } else if (d.hosts_form == HostsForm::node_ids && !in.hosts.empty()) {
    add_flag(argv, d.hosts, node_ids(in.hosts));
  } else if (d.hosts_form == HostsForm::hostfile && !in.hostfile.empty()) {
    add_flag(argv, d.hosts, in.hostfile);
  } else if (d.hosts_form == HostsForm::hostfile && in.hosts.size() == 1) {
    add_flag(argv, d.here, in.hosts.front());  // no flag: nothing added
  }
}

std::vector<std::string> mpi_argv(const LauncherRow& d, const LauncherInput& in) {
  std::vector<std::string> argv{std::string(d.programs.front())};
  if (in.node_step && !d.overlap.empty()) argv.emplace_back(d.overlap);
  for (std::string_view word : d.leading) {
    if (!(in.whole_lines && word == d.unbuffered)) argv.emplace_back(word);
  }
  add_flag(argv, d.nnodes, std::to_string(in.hosts.size()));
  BindingWords binding = binding_words(d, in.cpu_bind, in.ppn);
  add_flag(argv, d.np, std::to_string(in.world_size));
  if (!binding.places_ranks) add_flag(argv, d.ppn, std::to_string(in.ppn));
  add_hosts(argv, d, in);
  argv.insert(argv.end(), binding.words.begin(), binding.words.end());
  if (!d.export_var.empty()) {
    // Open MPI forwards nothing by default: the ranks need at least the paths, where set.
    for (const char* name : {"PATH", "LD_LIBRARY_PATH"}) {
      if (in.environment.count(name)) add_flag(argv, d.export_var, name);
    }
    for (const std::string& name : in.exported) add_flag(argv, d.export_var, name);
  }
  return argv;
}

// torchrun starts the ranks of one host. On one host it runs alone; on several it is
// started once per host by Hydra and meets the others at a static rendezvous on the first
// host, node ranks in host order: so RANK follows the hosts and MASTER_ADDR is the first
// host, as with every other launcher. (c10d would number the nodes as they arrive, and
// its store is hosted only where torchrun recognises the endpoint as its own name, which
// a network-suffixed name or a simulated host is not: nobody hosts it and all wait.)
std::vector<std::string> torchrun_argv(const LauncherRow& d, const LauncherInput& in) {
  binding_words(d, in.cpu_bind, in.ppn);  // refuses a user's binding; a profile's is dropped
  std::vector<std::string> torchrun{std::string(d.programs.front())};
  if (in.hosts.size() <= 1) {
    torchrun.insert(torchrun.end(), {"--standalone", "--nnodes=1"});
  } else {
    torchrun.insert(torchrun.end(), {fmt::format("--nnodes={}", in.hosts.size()),
                                     fmt::format("--master_addr={}", in.master_addr),
                                     fmt::format("--master_port={}", in.master_port)});
  }
  torchrun.insert(torchrun.end(),
                  {fmt::format("--nproc_per_node={}", in.ppn),
                   // Python 3.11's enum.Flag no longer lists Std.NONE (0), so torch 1.13
                   // (Debian 12's) parses its own defaults "0" to None and fails
                   // ('NoneType' object has no attribute 'get'). A map naming only local
                   // rank 9 means "no redirection" for ranks 0-8 everywhere.
                   "--redirects=9:0", "--tee=9:0",
                   // torch 1.13 looks at its ranks every 5 s (later versions 0.1 s): each
                   // job would end up to 5 s after its ranks, and a failure be seen late.
                   "--monitor_interval=0.1", "--no_python"});
  if (in.hosts.size() <= 1) return torchrun;
  LauncherInput per_host = in;
  per_host.ppn = 1;
  per_host.world_size = static_cast<int>(in.hosts.size());
  per_host.cpu_bind = {};
  std::vector<std::string> argv = mpi_argv(*launcher_row(d.multi_host_dialect), per_host);
  // Each host's torchrun takes its node rank from Hydra's PMI_RANK (one rank per host, in
  // hostfile order). The shell only reads that variable: torchrun and the user's command
  // are its positional parameters, passed on as "$@", never parsed.
  argv.insert(argv.end(), {"sh", "-c", R"(exec "$0" --node_rank="$PMI_RANK" "$@")"});
  argv.insert(argv.end(), torchrun.begin(), torchrun.end());
  return argv;
}

}  // namespace

std::string known_launchers() {
  std::vector<std::string_view> names;
  for (const LauncherRow& row : k_launchers) names.push_back(row.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

bool is_known_launcher(std::string_view name) {
  return launcher_row(name) != nullptr;
}

std::string canonical_launcher(std::string_view name) {
  const LauncherRow* row = launcher_row(name);
  return std::string(row ? row->name : name);
}

std::vector<std::string_view> launcher_programs(std::string_view dialect) {
  const LauncherRow* row = launcher_row(dialect);
  return row ? std::vector<std::string_view>(row->programs.begin(), row->programs.end())
             : std::vector<std::string_view>{};
}

std::string_view expected_flavour(std::string_view dialect) {
  const LauncherRow* row = launcher_row(dialect);
  return row && !row->flavours.empty() ? row->flavours.front().name : "";
}

std::string_view launcher_install_hint(std::string_view dialect) {
  const LauncherRow* row = launcher_row(dialect);
  return row ? row->install : "";
}

namespace {

std::optional<FoundFlavour> first_flavour(auto&& fits) {
  for (const LauncherRow& row : k_launchers) {
    for (const LauncherFlavour& flavour : row.flavours) {
      if (fits(flavour)) return FoundFlavour{flavour.name, row.name};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<FoundFlavour> find_flavour(std::string_view version_output) {
  return first_flavour([&](const LauncherFlavour& flavour) {
    return std::any_of(flavour.markers.begin(), flavour.markers.end(), [&](std::string_view m) {
      return version_output.find(m) != std::string_view::npos;
    });
  });
}

std::optional<FoundFlavour> flavour_named(std::string_view name) {
  return first_flavour([&](const LauncherFlavour& flavour) { return flavour.name == name; });
}

std::string find_version(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool starts = std::isdigit(static_cast<unsigned char>(text[i])) &&
                  (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])));
    if (!starts) continue;
    std::size_t end = text.find_first_not_of("0123456789.", i);
    std::string_view number = text.substr(i, end - i);
    while (number.ends_with('.')) number.remove_suffix(1);
    if (number.find('.') != std::string_view::npos) return std::string(number);
    i = end == std::string_view::npos ? text.size() : end;
  }
  return "";
}

std::string_view program_dialect(std::string_view dialect, std::size_t nhosts) {
  const LauncherRow* row = launcher_row(dialect);
  if (row && !row->multi_host_dialect.empty() && nhosts > 1) return row->multi_host_dialect;
  return dialect;
}

std::string missing_root_assignments(std::string_view dialect, const Env& env) {
  const LauncherRow* row = launcher_row(dialect);
  if (!row) return "";
  std::vector<std::string> all;
  bool missing = false;
  for (std::string_view name : row->root_variables) {
    auto value = env.find(std::string(name));
    missing = missing || value == env.end() || value->second != "1";
    all.push_back(fmt::format("{}=1", name));
  }
  return missing ? fmt::format("{}", fmt::join(all, " ")) : "";
}

std::vector<std::string> launcher_argv(std::string_view dialect, const LauncherInput& input) {
  const LauncherRow* row = launcher_row(dialect);
  if (!row) {
    throw Error(
        fmt::format("unknown launcher \"{}\"; expected one of {}", dialect, known_launchers()));
  }
  if (row->argv_form == ArgvForm::torchrun) return torchrun_argv(*row, input);
  return mpi_argv(*row, input);
}

bool launcher_sets_rank_env(std::string_view dialect) {
  const LauncherRow* row = launcher_row(dialect);
  return row && row->sets_rank_env;
}

bool launcher_keeps_records(std::string_view dialect) {
  const LauncherRow* row = launcher_row(dialect);
  return row && !row->sets_rank_env && !row->cuts_records;
}

bool launcher_fills_in_order(std::string_view dialect) {
  const LauncherRow* row = launcher_row(dialect);
  return !row || row->fills_in_order;
}

bool launcher_binds_gpus(std::string_view dialect) {
  const LauncherRow* row = launcher_row(dialect);
  return row && !row->gpus_per_rank.empty();
}

std::vector<std::string> launcher_gpu_flags(std::string_view dialect, int gpus_per_rank,
                                            const std::string& bind) {
  std::vector<std::string> argv;
  const LauncherRow* row = launcher_row(dialect);
  if (row == nullptr || row->gpus_per_rank.empty()) return argv;
  add_flag(argv, row->gpus_per_rank, std::to_string(gpus_per_rank));
  if (!bind.empty()) add_flag(argv, row->gpu_bind, bind);
  return argv;
}

bool launcher_takes_hostfile(std::string_view dialect) {
  // torchrun on several hosts is started through Hydra, which reads a hostfile.
  const LauncherRow* row = launcher_row(dialect);
  return row == nullptr || row->hosts_form == HostsForm::hostfile;
}

}  // namespace ezpz
