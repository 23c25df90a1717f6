// `ezpz doctor`'s launcher check: the launcher the plan would run exists, and
// its --version names the implementation the profile's dialect speaks to.
#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/doctor.hpp"
#include "ezpz/doctor_checks.hpp"
#include "ezpz/launchers.hpp"
#include "ezpz/render.hpp"
#include "ezpz/text.hpp"

namespace ezpz::doctor {

// ---- launcher ---------------------------------------------------------------

namespace {

constexpr std::string_view k_launcher = "launcher";

// What `--version` prints, per launcher implementation; first match wins
// (Hydra's own output mentions "slurm", so Hydra comes first).
struct Flavour {
  std::string_view name;
  std::string_view marker;
  std::string_view dialect;  // the dialect whose flags it takes
};
const std::array<Flavour, 5> k_flavours = {{
    {"MPICH Hydra", "HYDRA build details", "hydra"},
    {"Intel MPI", "Intel(R) MPI Library", "hydra"},
    {"Open MPI", "Open MPI", "openmpi"},
    {"Slurm", "slurm", "srun"},  // "slurm 23.02.7"; Debian's "slurm-wlm 22.05.8"
    // Unverified: no Cray PALS was at hand; its mpiexec is assumed to name itself.
    {"Cray PALS", "PALS", "pals"},
}};

// The implementation each dialect needs, for messages.
const std::map<std::string_view, std::string_view> k_expected = {
    {"pals", "Cray PALS"}, {"hydra", "MPICH Hydra"}, {"openmpi", "Open MPI"}, {"srun", "Slurm"}};

// Where each dialect's launcher comes from, when it is missing.
const std::map<std::string_view, std::string_view> k_install = {
    {"pals", "load the Cray PALS module (module load cray-pals)"},
    {"hydra", "install MPICH (apt-get install mpich) or load its module"},
    {"openmpi", "install Open MPI or load its module"},
    {"srun", "run on a node of the Slurm cluster (srun comes with Slurm)"},
    {"torchrun", "activate the Python environment that has torch"},
};

const Flavour* find_flavour(std::string_view version_output) {
  for (const Flavour& flavour : k_flavours) {
    if (version_output.find(flavour.marker) != std::string_view::npos) return &flavour;
  }
  return nullptr;
}

// The first dotted number ("4.0.2", "22.05.8"), or "".
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

std::string launcher_origin(const Snapshot& s, const Derived& d) {
  if (s.launcher_flag) return fmt::format("the {} launcher (--launcher)", d.launcher);
  return fmt::format("the {} launcher of profile {}", d.launcher, d.profile->name);
}

CheckResult judge_flavour(const Snapshot& s, const Derived& d) {
  const std::string& path = *s.launcher_path;
  const ProgramRun& run = s.launcher_version;
  std::string failure = run_failure(run);
  if (!failure.empty()) {
    return result(k_launcher, Status::warn,
                  fmt::format("{}: {} --version {}", path, s.launcher_program, failure),
                  fmt::format("run {} --version by hand: a launcher that cannot print its "
                              "version may not start jobs either",
                              path));
  }
  const Flavour* flavour = find_flavour(run.out + run.err);
  std::string_view expected = k_expected.at(d.launcher);
  if (flavour == nullptr) {
    return result(k_launcher, Status::warn,
                  fmt::format("{}: --version names no launcher ezpz knows: \"{}\"", path,
                              first_line(run.out + run.err)),
                  fmt::format("make sure it is {}: {} passes it {}'s flags", expected,
                              launcher_origin(s, d), expected));
  }
  std::string found = fmt::format("{} {}", flavour->name, find_version(run.out + run.err));
  if (flavour->dialect != d.launcher) {
    return result(
        k_launcher, Status::error,
        fmt::format("{} is {}, but {} needs {}", path, found, launcher_origin(s, d), expected),
        fmt::format("put {}'s {} first on PATH (check module list), or pass "
                    "--launcher {}",
                    expected, s.launcher_program, flavour->dialect));
  }
  return result(k_launcher, Status::ok,
                fmt::format("{}: {}, {}", path, found, launcher_origin(s, d)));
}

// ---- torchrun: started, not asked its version --------------------------------

// A Python traceback's last line says what went wrong; its first only that one follows.
std::string last_line(std::string_view text) {
  std::vector<std::string_view> lines = split_lines(text);
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    if (!first_line(*line).empty()) return first_line(*line);
  }
  return "";
}

std::string torchrun_failure(const ProgramRun& run) {
  if (!run.exit_code || *run.exit_code == 0) return run_failure(run);
  std::string why = last_line(run.err);
  return why.empty() ? run_failure(run) : fmt::format("exit {}: {}", *run.exit_code, why);
}

CheckResult judge_torchrun(const Snapshot& s, const Derived& d) {
  const std::string& path = *s.launcher_path;
  std::string failure = torchrun_failure(s.torchrun_trial);
  if (failure.empty()) {
    return result(k_launcher, Status::ok,
                  fmt::format("{}: starts a rank, {}", path, launcher_origin(s, d)));
  }
  std::vector<std::string> trial = torchrun_trial_argv(path);
  std::transform(trial.begin(), trial.end(), trial.begin(), shell_quote);
  return result(k_launcher, Status::error, fmt::format("{} cannot start a rank: {}", path, failure),
                fmt::format("run {} to see why; torchrun must come from the Python "
                            "environment the ranks use, with its torch",
                            fmt::join(trial, " ")));
}

}  // namespace

std::string describe_launcher(const Snapshot& s) {
  if (s.launcher_program.empty()) return "-";
  if (!s.launcher_path) return fmt::format("{} not on PATH", s.launcher_program);
  const std::string output = s.launcher_version.out + s.launcher_version.err;
  const Flavour* flavour = run_failure(s.launcher_version).empty() ? find_flavour(output) : nullptr;
  if (flavour == nullptr) return *s.launcher_path;
  return fmt::format("{} {} ({})", flavour->name, find_version(output), *s.launcher_path);
}

CheckResult check_launcher(const Snapshot& s, const Derived& d) {
  if (!d.profile) {
    return result(k_launcher, Status::error, "not chosen: no machine profile applies",
                  "fix the profile check above");
  }
  if (!is_known_launcher(d.launcher)) {
    return result(
        k_launcher, Status::error,
        fmt::format("unknown launcher \"{}\"; expected one of {}", d.launcher, known_launchers()),
        "pass --launcher with one of those names");
  }
  if (!s.launcher_path) {
    return result(k_launcher, Status::error,
                  fmt::format("{} is not on PATH ({})", s.launcher_program, launcher_origin(s, d)),
                  fmt::format("{}, or pass --launcher", k_install.at(d.launcher)));
  }
  if (d.launcher == "torchrun") return judge_torchrun(s, d);
  return judge_flavour(s, d);
}

std::vector<std::string> torchrun_trial_argv(const std::string& path) {
  std::vector<std::string> argv = launcher_argv("torchrun", LauncherInput{});
  argv.front() = path;
  argv.push_back("true");
  return argv;
}

}  // namespace ezpz::doctor
