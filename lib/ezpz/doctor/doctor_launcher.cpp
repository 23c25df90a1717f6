// `ezpz doctor`'s launcher check: the launcher the plan would run exists, and
// its --version names the implementation the profile's dialect speaks to.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/text.hpp"
#include "ezpz/doctor/doctor.hpp"
#include "ezpz/doctor/doctor_checks.hpp"
#include "ezpz/launch/render.hpp"
#include "ezpz/launchers/launchers.hpp"

namespace ezpz::doctor {

// ---- launcher ---------------------------------------------------------------

namespace {

constexpr std::string_view k_launcher = "launcher";

std::string launcher_origin(const Snapshot& s, const Derived& d) {
  if (s.launcher_flag) return fmt::format("the {} launcher (--launcher)", d.launcher);
  return fmt::format("the {} launcher of profile {}", d.launcher, d.profile->name);
}

// The launcher starts its companion from the directory it was run from, so a link to
// mpiexec.hydra elsewhere fails before any rank starts. A program there that is not a link may
// be a site's wrapper running the launcher from its own directory: a warning.
CheckResult no_companion(const std::string& message, const std::string& path, const Companion& c) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const std::string resolved_dir = std::filesystem::path(c.resolved).parent_path().string();
  const std::string consequence =
      c.link ? "no rank can start"
             : fmt::format("unless {} is a wrapper that runs it from elsewhere, no rank can start",
                           std::filesystem::path(path).filename().string());
  return result(
      k_launcher, c.link ? Status::error : Status::warn,
      fmt::format("{}; but {} holds no {}, which it starts from the directory it was run from: {}",
                  message, dir, c.name, consequence),
      c.link && c.beside_resolved
          ? fmt::format("run it from its own directory: --launcher-program {}, or put {} first "
                        "on PATH",
                        c.resolved, resolved_dir)
          : fmt::format("put the bin directory of an installation with {} beside its {} first "
                        "on PATH",
                        c.name, std::filesystem::path(path).filename().string()));
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
  const std::optional<FoundFlavour> flavour = find_flavour(run.out + run.err);
  std::string_view expected = expected_flavour(d.launcher);
  if (!flavour) {
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
  std::string message = fmt::format("{}: {}, {}", path, found, launcher_origin(s, d));
  if (s.companion && !s.companion->beside) return no_companion(message, path, *s.companion);
  const std::string missing = missing_root_assignments(d.launcher, s.env);
  if (s.root && !missing.empty()) {
    return result(
        k_launcher, Status::warn,
        fmt::format("{}; as root, {} refuses to start without {}", message, expected, missing),
        fmt::format("export {} to run as root (ezpz never sets them)", missing));
  }
  return result(k_launcher, Status::ok, message);
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
  const std::optional<FoundFlavour> flavour =
      run_failure(s.launcher_version).empty() ? find_flavour(output) : std::nullopt;
  if (!flavour) return *s.launcher_path;
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
                  fmt::format("{}, or pass --launcher", launcher_install_hint(d.launcher)));
  }
  if (launcher_row(d.launcher)->argv_form == ArgvForm::torchrun) return judge_torchrun(s, d);
  return judge_flavour(s, d);
}

std::vector<std::string> torchrun_trial_argv(const std::string& path) {
  std::vector<std::string> argv = launcher_argv("torchrun", LauncherInput{});
  argv.front() = path;
  argv.push_back("true");
  return argv;
}

}  // namespace ezpz::doctor
