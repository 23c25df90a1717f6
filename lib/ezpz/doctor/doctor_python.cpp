// `ezpz doctor`'s checks about what the ranks' Python can do (torch, its
// distributed backends, mpi4py) and about the module system that often
// chooses that Python. The probe runs the first python3 on PATH, as
// `ezpz launch -- python3 train.py` would; doctor_probes.cpp starts it.
#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/text.hpp"
#include "ezpz/doctor/doctor.hpp"
#include "ezpz/doctor/doctor_checks.hpp"
#include "ezpz/launchers/launchers.hpp"

namespace ezpz::doctor {

// ---- The probe ----------------------------------------------------------------

namespace {

// Python 3.6 and later. Every failure is caught and reported in the JSON, so
// that a Python without torch still says which Python it is. mpi4py is asked
// for its MPI library without MPI_Init (rc.initialize), which may hang or
// abort outside a launcher.
constexpr std::string_view k_probe_code = R"(import json, sys
r = {"python": "%d.%d.%d" % tuple(sys.version_info[:3])}
try:
    import torch
    r["torch"] = str(torch.__version__)
    import torch.distributed as d
    r["distributed"] = bool(d.is_available())
    # Older torch lacks some is_*_available: `bool` stands in, bool() is False.
    r["backends"] = [n for n in ("gloo", "nccl", "mpi", "ucc", "xccl")
                     if r["distributed"] and getattr(d, "is_%s_available" % n, bool)()]
    import importlib.util
    if importlib.util.find_spec("oneccl_bindings_for_pytorch"):
        r["backends"].append("ccl")
except BaseException as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
try:
    import mpi4py
except BaseException:
    mpi4py = None
if mpi4py is not None:
    r["mpi4py"] = str(getattr(mpi4py, "__version__", "?"))
    try:
        mpi4py.rc.initialize = mpi4py.rc.finalize = False
        from mpi4py import MPI
        r["mpi"] = MPI.Get_library_version()
    except BaseException as e:
        r["mpi_error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(r))
)";

}  // namespace

std::vector<std::string> python_probe_argv(const std::string& python3) {
  return {python3, "-c", std::string(k_probe_code)};
}

// ---- torch ----------------------------------------------------------------------

namespace {

constexpr std::string_view k_torch = "torch";

// What the probe's JSON line said.
struct Imports {
  std::string python;  // "3.11.2"
  std::string torch;   // version; empty when `import torch` failed
  std::string error;   // why it failed: "ModuleNotFoundError: No module named 'torch'"
  bool distributed = false;
  std::vector<std::string> backends;
  std::string mpi4py;     // version; empty when mpi4py is absent
  std::string mpi;        // MPI.Get_library_version(), first line, tidied
  std::string mpi_error;  // mpi4py could not load its MPI
};

// "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4"; "MPICH Version:\t4.0.2" -> "MPICH
// Version: 4.0.2": the first line, runs of blanks made one space, cut at its first comma.
std::string tidy_library(std::string_view text) {
  std::string line = first_line(text.substr(0, text.find(',')));
  std::string tidy;
  for (char c : line) {
    bool blank = c == ' ' || c == '\t';
    if (!blank || (!tidy.empty() && tidy.back() != ' ')) tidy += blank ? ' ' : c;
  }
  return tidy;
}

// The probe's last JSON line; nullopt when there is none, or when a field has
// the wrong type (a python3 that is not Python: the context block reads this
// too, outside run_checks' net).
std::optional<Imports> parse_imports(std::string_view out) try {
  nlohmann::json j = nlohmann::json::value_t::discarded;
  for (std::string_view line : split_lines(out)) {
    if (line.starts_with("{\"python\"")) j = nlohmann::json::parse(line, nullptr, false);
  }
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return Imports{.python = j.value("python", "?"),
                 .torch = j.value("torch", ""),
                 .error = first_line(j.value("error", "")),
                 .distributed = j.value("distributed", false),
                 .backends = j.value("backends", std::vector<std::string>{}),
                 .mpi4py = j.value("mpi4py", ""),
                 .mpi = tidy_library(j.value("mpi", "")),
                 .mpi_error = first_line(j.value("mpi_error", ""))};
} catch (const nlohmann::json::exception&) {
  return std::nullopt;
}

// "/usr/bin/python3: Python 3.11.2, torch 1.13.0; backends gloo, mpi; mpi4py 3.1.4 (Open MPI
// v4.1.4)"
std::string describe_imports(const std::string& python3, const Imports& i) {
  std::string text = fmt::format("{}: Python {}", python3, i.python);
  if (!i.torch.empty()) text += fmt::format(", torch {}", i.torch);
  if (i.distributed) {
    text += i.backends.empty() ? "; backends none"
                               : fmt::format("; backends {}", fmt::join(i.backends, ", "));
  }
  if (!i.mpi4py.empty()) {
    text += fmt::format("; mpi4py {}", i.mpi4py);
    if (!i.mpi.empty()) text += fmt::format(" ({})", i.mpi);
  }
  return text;
}

// A problem found, and what to do about it.
struct Finding {
  std::string problem;
  std::string remedy;
};
using Rule = std::optional<Finding> (*)(const Snapshot&, const Derived&, const Imports&);

template <typename List, typename Item>
bool contains(const List& list, const Item& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::optional<Finding> torch_import(const Snapshot& s, const Derived&, const Imports& i) {
  if (!i.torch.empty()) return std::nullopt;
  const std::string missing = "ModuleNotFoundError: No module named 'torch'";
  return Finding{
      fmt::format("cannot import torch: {}", i.error),
      i.error == missing
          ? "pip install torch into this Python, or activate the environment that has torch "
            "before ezpz launch"
          : fmt::format("run {} -c 'import torch' to see the whole error", s.python.python3)};
}

std::optional<Finding> distributed(const Snapshot&, const Derived&, const Imports& i) {
  if (i.torch.empty() || i.distributed) return std::nullopt;
  return Finding{"torch.distributed is not available in this build",
                 "install a torch built with distributed support (pytorch.org's Linux builds "
                 "are)"};
}

// Backends that stand in for a profile's: Intel's oneCCL bindings provide "ccl" to a torch
// that has no "xccl" of its own.
bool has_backend(const Imports& i, const std::string& wanted) {
  return contains(i.backends, wanted) || (wanted == "xccl" && contains(i.backends, "ccl"));
}

std::optional<Finding> profile_backend(const Snapshot&, const Derived& d, const Imports& i) {
  if (!i.distributed || !d.profile || d.profile->backend.empty() ||
      has_backend(i, d.profile->backend)) {
    return std::nullopt;
  }
  return Finding{fmt::format("profile {} uses backend {}, which this torch lacks", d.profile->name,
                             d.profile->backend),
                 fmt::format("activate the environment with this machine's torch build (with "
                             "{}), or load its module",
                             d.profile->backend)};
}

std::optional<Finding> mpi4py_library(const Snapshot&, const Derived&, const Imports& i) {
  if (i.mpi4py.empty() || i.mpi_error.empty()) return std::nullopt;
  return Finding{fmt::format("mpi4py cannot load its MPI: {}", i.mpi_error),
                 "load the MPI module mpi4py was built against, or reinstall it: pip install "
                 "--no-binary mpi4py mpi4py"};
}

// The MPI families mpi4py's library string names; first match wins (Cray's "CRAY MPICH" is
// MPICH). Which launchers start each family's programs is their rows' mpi_families; a launcher
// with none (srun, torchrun) is not judged.
struct MpiFamily {
  std::string_view marker;
  std::string_view name;
  std::string_view suggested;  // the launcher to pass instead
};
const std::array<MpiFamily, 3> k_mpi_families = {{
    {"Open MPI", "Open MPI", "openmpi"},
    {"MPICH", "MPICH", "hydra"},
    {"Intel(R) MPI", "Intel MPI", "hydra"},
}};

const MpiFamily* find_family(const std::string& library) {
  for (const MpiFamily& family : k_mpi_families) {
    if (library.find(family.marker) != std::string::npos) return &family;
  }
  return nullptr;
}

// mpi4py built against one MPI, launched by another's mpiexec: every rank is a
// world of its own (size 1), and nothing says so.
std::optional<Finding> mpi4py_launcher(const Snapshot&, const Derived& d, const Imports& i) {
  const MpiFamily* family = find_family(i.mpi);
  const LauncherRow* row = launcher_row(d.launcher);
  if (!family || !row || row->mpi_families.empty() || contains(row->mpi_families, family->name)) {
    return std::nullopt;
  }
  return Finding{fmt::format("mpi4py uses {}, but the {} launcher does not start {} programs "
                             "(each rank would be alone)",
                             family->name, d.launcher, family->name),
                 fmt::format("pass --launcher {}, or rebuild mpi4py against the launcher's MPI "
                             "(pip install --no-binary mpi4py mpi4py)",
                             family->suggested)};
}

// VIRTUAL_ENV or CONDA_PREFIX names one environment, PATH's python3 is another's.
std::optional<Finding> environment(const Snapshot& s, const Derived&, const Imports&) {
  auto active = first_nonempty(s.env, {"VIRTUAL_ENV", "CONDA_PREFIX"});
  if (!active) return std::nullopt;
  namespace fs = std::filesystem;
  fs::path bin = (fs::path(active->second) / "bin").lexically_normal();
  if (fs::path(s.python.python3).parent_path().lexically_normal() == bin) return std::nullopt;
  return Finding{
      fmt::format("{} is {}, but the ranks run this python3, first on PATH", active->first,
                  active->second),
      fmt::format("put {} first on PATH (source {}/activate)", bin.string(), bin.string())};
}

// ezpz's stack hook (share/python/sitecustomize.py) failing on this Python: Python prints
// "Error in sitecustomize; set PYTHONVERBOSE for traceback:" and the error on every rank.
std::optional<Finding> python_hook(const Snapshot& s, const Derived&, const Imports&) {
  const std::string& err = s.python.imports.err;
  const std::size_t at = err.find("Error in sitecustomize");
  if (s.python_hook.empty() || at == std::string::npos) return std::nullopt;
  const std::size_t error = err.find('\n', at);  // the error itself, on the next line
  return Finding{
      fmt::format("ezpz's Python stack hook ({}/sitecustomize.py) fails on every rank: {}",
                  s.python_hook,
                  error == std::string::npos ? "" : first_line(err.substr(error + 1))),
      "launch with --no-python-hook (and tell ezpz's maintainers which Python this is)"};
}

// In message order.
const std::array<Rule, 7> k_torch_rules = {python_hook,     torch_import,   distributed,
                                           profile_backend, mpi4py_library, mpi4py_launcher,
                                           environment};

CheckResult probe_failed(const Snapshot& s, std::string failure) {
  const ProgramRun& run = s.python.imports;
  std::string remedy = run.timed_out
                           ? "a slow import delays every rank: stage the environment to node-local "
                             "storage (ezpz yeet)"
                           : fmt::format("run {} -c 'import torch' by hand", s.python.python3);
  return result(k_torch, Status::warn,
                fmt::format("{} importing torch: {}", s.python.python3, failure), remedy);
}

}  // namespace

// Warnings, never errors: doctor cannot know whether the job runs Python.
CheckResult check_torch(const Snapshot& s, const Derived& d) {
  if (s.python.python3.empty()) {
    return result(k_torch, Status::warn,
                  "no python3 on PATH: ranks that run python3 will not start",
                  "activate the environment that has torch (or load its module) before ezpz "
                  "launch");
  }
  const ProgramRun& run = s.python.imports;
  if (std::string failure = run_failure(run); !failure.empty()) return probe_failed(s, failure);
  std::optional<Imports> imports = parse_imports(run.out);
  if (!imports) {
    return probe_failed(s, fmt::format("printed no probe JSON: \"{}\"", first_line(run.out)));
  }
  std::string message = describe_imports(s.python.python3, *imports);
  std::vector<std::string> remedies;
  for (Rule rule : k_torch_rules) {
    if (std::optional<Finding> found = rule(s, d, *imports)) {
      message += "; " + found->problem;
      remedies.push_back(found->remedy);
    }
  }
  if (remedies.empty()) return result(k_torch, Status::ok, message);
  return result(k_torch, Status::warn, message, fmt::format("{}", fmt::join(remedies, "; ")));
}

std::string torch_version(const Snapshot& s) {
  if (!run_failure(s.python.imports).empty()) return "";
  std::optional<Imports> imports = parse_imports(s.python.imports.out);
  return imports ? imports->torch : "";
}

// ---- modules --------------------------------------------------------------------

namespace {

constexpr std::string_view k_modules = "modules";

// What reveals a module system; first match names it (Lmod sets MODULESHOME too).
// Bash exports a function `module` as BASH_FUNC_module%% (before 4.4 patches:
// BASH_FUNC_module()).
struct ModuleSign {
  std::string_view variable;
  std::string_view system;
};
const std::array<ModuleSign, 5> k_module_signs = {{
    {"LMOD_CMD", "Lmod"},
    {"LMOD_DIR", "Lmod"},
    {"MODULESHOME", "Environment Modules"},
    {"BASH_FUNC_module%%", "a module shell function"},
    {"BASH_FUNC_module()", "a module shell function"},
}};

std::vector<std::string> colon_list(const Env& env, std::string_view name) {
  std::vector<std::string> items;
  const std::string text = get_nonempty(env, name).value_or("");
  for (std::string_view item : split(text, ':')) {
    if (!item.empty()) items.emplace_back(item);
  }
  return items;
}

}  // namespace

CheckResult check_modules(const Snapshot& s, const Derived&) {
  const ModuleSign* sign = nullptr;
  for (const ModuleSign& candidate : k_module_signs) {
    if (!sign && s.env.contains(candidate.variable)) sign = &candidate;
  }
  if (sign == nullptr) {
    return result(k_modules, Status::ok,
                  "no module system (no module function, LMOD_CMD or MODULESHOME)");
  }
  std::string found = fmt::format("{} ({} is set)", sign->system, sign->variable);
  std::vector<std::string> paths = colon_list(s.env, "MODULEPATH");
  if (paths.empty()) {
    return result(
        k_modules, Status::warn,
        fmt::format("{}, but MODULEPATH is empty: module load finds nothing, and the job "
                    "runs whatever python3 is left on PATH",
                    found),
        "start the job script with #!/bin/bash -l, or source the module system's init script "
        "($MODULESHOME/init/bash), before module load");
  }
  std::vector<std::string> loaded = colon_list(s.env, "LOADEDMODULES");
  return result(
      k_modules, Status::ok,
      fmt::format("{}; MODULEPATH has {} director{}; loaded: {}", found, paths.size(),
                  paths.size() == 1 ? "y" : "ies", loaded.empty() ? "none" : list_some(loaded)));
}

}  // namespace ezpz::doctor
