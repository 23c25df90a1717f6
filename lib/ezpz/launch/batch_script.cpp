// The batch script of `ezpz submit`. Directives are parsed by qsub/sbatch,
// not by a shell, so their values are checked rather than quoted; the body is
// read by bash, so every word in it that came from the user is single-quoted.
#include "ezpz/launch/batch_script.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/launch/layout.hpp"

namespace ezpz {
namespace {

// How each scheduler spells the script's parts, and what it takes.
struct Dialect {
  std::string_view prefix;   // "#PBS"
  std::string_view workdir;  // the variable holding the directory qsub/sbatch ran in
  std::string_view passes;   // comment lines: what the submitter passes the job
  std::string_view modules;  // what becomes of the modules loaded at submit time
  // After an activation: the comment and the line that pass the activated environment on
  // from the batch script to the launcher's ranks; empty when the launcher does by itself.
  std::string_view to_ranks_comment;
  std::string_view to_ranks_line;
  std::size_t name_max;      // the longest job name; 0: no limit
  bool name_letter_first;    // a job name must start with a letter
  bool walltime_days;        // the walltime may be written D-HH:MM:SS
};
// Job names: POSIX's qsub -N takes "up to 15 alphanumeric characters where the
// first character is alphabetic" (IEEE Std 1003.1, qsub); OpenPBS and PBS Pro
// take longer names and '.', '-', '_', which are kept. sbatch's --job-name
// documents no rule: only what a directive line cannot hold is replaced.
constexpr Dialect k_pbs{
    .prefix = "#PBS",
    .workdir = "PBS_O_WORKDIR",
    .passes =
        "# Environment: qsub passes the job none of the submitting shell's variables\n"
        "# (without -V). Activated here, as they were at submit time:\n",
    .modules =
        "Not carried: the modules loaded at submit time ({}); the job has the login "
        "defaults.",
    .to_ranks_comment = "",
    .to_ranks_line = "",
    .name_max = 15,
    .name_letter_first = true,
    .walltime_days = false,
};
constexpr Dialect k_slurm{
    .prefix = "#SBATCH",
    .workdir = "SLURM_SUBMIT_DIR",
    .passes =
        "# Environment: sbatch passes the job the submitting shell's variables, unless\n"
        "# --export=NONE (SBATCH_EXPORT) says not. Activated again, as at submit time:\n",
    .modules =
        "Not loaded again: the modules loaded at submit time ({}); their variables "
        "come with sbatch's default --export=ALL, not under --export=NONE.",
    // sbatch --export=NONE (SBATCH_EXPORT=NONE, a site's default) sets SLURM_EXPORT_ENV=NONE
    // in the job, and srun then gives the ranks none of the script's variables: the ranks'
    // python3 was the system's, not the venv's.
    .to_ranks_comment =
        "#   SLURM_EXPORT_ENV=ALL: srun gives the ranks all of it, under sbatch --export=NONE "
        "too\n",
    .to_ranks_line = "export SLURM_EXPORT_ENV=ALL\n",
    .name_max = 0,
    .name_letter_first = false,
    .walltime_days = true,
};

const Dialect& dialect_for(SchedulerKind kind) {
  if (kind == SchedulerKind::pbs) return k_pbs;
  if (kind == SchedulerKind::slurm) return k_slurm;
  throw Error(
      fmt::format("submit: cannot submit to scheduler {}; expected pbs or slurm", to_string(kind)));
}

// One option's directive: its value checked, then written as the scheduler's
// flag followed by the value ("-N " + "job", "--output=" + "f").
struct Directive {
  std::string_view option;  // the ezpz option it came from, for errors
  std::string_view flag;
  std::optional<std::string> value;
};

std::string checked_line(const Dialect& d, const Directive& directive) {
  if (auto problem = directive_problem(*directive.value)) {
    throw Error(
        fmt::format("{}: {} cannot go in a {} directive", directive.option, *problem, d.prefix));
  }
  return fmt::format("{} {}{}\n", d.prefix, directive.flag, *directive.value);
}

// PBS at ALCF takes "-l filesystems=home:flare"; the Python ezpz's users write home,flare.
std::optional<std::string> colon_list(std::optional<std::string> names) {
  if (names) std::replace(names->begin(), names->end(), ',', ':');
  return names;
}

std::vector<Directive> pbs_directives(const BatchRequest& r,
                                      const std::optional<std::string>& walltime) {
  std::vector<Directive> directives = {
      {"--nodes", "-l select=", std::to_string(r.nodes)},
      {"--time", "-l walltime=", walltime},
      {"--queue", "-q ", r.queue},
      {"--account", "-A ", r.account},
      {"--job-name", "-N ", r.job_name},
      {"--filesystems", "-l filesystems=", colon_list(r.filesystems)},
      {"--output", "-o ", r.output},
  };
  // With --output, stderr goes to the same file, as under Slurm.
  if (r.output) directives.push_back({"--output", "-j ", "oe"});
  return directives;
}

std::vector<Directive> slurm_directives(const BatchRequest& r,
                                        const std::optional<std::string>& walltime) {
  if (r.filesystems) {
    throw Error("--filesystems: a PBS resource (-l filesystems=); Slurm has none");
  }
  return {
      {"--nodes", "-N ", std::to_string(r.nodes)},
      {"--time", "-t ", walltime},
      {"--queue", "-p ", r.queue},
      {"--account", "-A ", r.account},
      {"--job-name", "-J ", r.job_name},
      {"--output", "--output=", r.output},
  };
}

std::string directive_lines(const BatchRequest& r, const Dialect& d) {
  std::optional<std::string> walltime;
  if (r.walltime) walltime = format_walltime(parse_walltime(*r.walltime), r.scheduler);
  std::string lines;
  auto directives = r.scheduler == SchedulerKind::pbs ? pbs_directives(r, walltime)
                                                      : slurm_directives(r, walltime);
  for (const Directive& directive : directives) {
    if (directive.value) lines += checked_line(d, directive);
  }
  for (const std::string& extra : r.extra_directives) {
    if (auto problem = directive_problem(extra, /*allow_spaces=*/true)) {
      throw Error(fmt::format("machine profile directive {:?}: {} cannot go in a {} directive",
                              extra, *problem, d.prefix));
    }
    lines += fmt::format("{} {}\n", d.prefix, extra);
  }
  return lines;
}

// Text for a comment line: as it is, or quoted with escapes when it holds a
// control character (a newline would end the comment).
std::string printable(std::string_view text) {
  bool plain = std::none_of(text.begin(), text.end(),
                            [](char c) { return std::iscntrl(static_cast<unsigned char>(c)); });
  return plain ? std::string(text) : fmt::format("{:?}", text);
}

// One environment the job activates: the comment saying what and how, and
// the line doing it (its values single-quoted; `|| exit`: a job that cannot
// activate it stops, rather than run with another Python).
struct Activation {
  std::string comment;
  std::string line;
};

std::string conda_label(const CarriedEnv& e) {
  if (!e.conda_name || *e.conda_name == *e.conda_prefix) return *e.conda_prefix;
  return fmt::format("{} ({})", *e.conda_name, *e.conda_prefix);
}

std::vector<Activation> activations(const CarriedEnv& e) {
  std::vector<Activation> rows;
  if (e.setup_file) {  // first: the envs activated after it stay first on PATH
    rows.push_back({fmt::format("EZPZ_SETUP_ENV: {} sourced first, as the Python ezpz's jobs do",
                                *e.setup_file),
                    fmt::format("source {} || exit\n", single_quote(*e.setup_file))});
  }
  if (e.conda_prefix && e.conda_exe) {
    rows.push_back({fmt::format("the conda env {}: conda's shell hook ({}), then conda activate",
                                conda_label(e), *e.conda_exe),
                    fmt::format("eval \"$({} shell.bash hook)\" && conda activate {} || exit\n",
                                single_quote(*e.conda_exe), single_quote(*e.conda_prefix))});
  } else if (e.conda_prefix) {  // no conda to run (CONDA_EXE unset): what activation sets
    rows.push_back({fmt::format("the conda env {}: CONDA_PREFIX set, its bin first on PATH "
                                "(CONDA_EXE was unset: no conda activate)",
                                conda_label(e)),
                    fmt::format("export CONDA_PREFIX={} && export PATH=\"$CONDA_PREFIX/bin:$PATH\" "
                                "|| exit\n",
                                single_quote(*e.conda_prefix))});
  }
  if (e.venv) {  // what its bin/activate does, without running a file that embeds the path
    rows.push_back({fmt::format("the venv {}: VIRTUAL_ENV set, its bin first on PATH, as its "
                                "bin/activate does",
                                *e.venv),
                    fmt::format("export VIRTUAL_ENV={} && export PATH=\"$VIRTUAL_ENV/bin:$PATH\" "
                                "&& unset PYTHONHOME || exit\n",
                                single_quote(*e.venv))});
  }
  return rows;
}

// The comment block saying what the job gets of the submitting environment,
// and the lines that activate it.
std::string environment_part(const BatchRequest& r, const Dialect& d) {
  std::vector<Activation> rows = activations(r.environment);
  std::string comment(d.passes);
  if (rows.empty()) comment += "#   nothing (no venv or conda env was active, no EZPZ_SETUP_ENV)\n";
  std::string lines;
  for (const Activation& row : rows) {
    comment += "#   " + row.comment + "\n";
    lines += row.line;
  }
  if (!rows.empty()) {
    comment += d.to_ranks_comment;
    lines += d.to_ranks_line;
  }
  if (r.environment.modules) {
    comment +=
        "# " +
        fmt::format(fmt::runtime(d.modules), "LOADEDMODULES=" + printable(*r.environment.modules)) +
        "\n";
  }
  return comment + fmt::format("cd \"${}\" || exit\n", d.workdir) + lines;
}

// `exec ezpz launch ARGS -- COMMAND`: exec, so that the scheduler's signals
// (qdel, scancel, the walltime) reach ezpz, which forwards them to the ranks.
std::string launch_line(const BatchRequest& r) {
  // Appended word by word: `" " + std::string` trips GCC 12's false -Wrestrict.
  auto add_word = [](std::string& line, std::string_view word) {
    line += ' ';
    line += single_quote(word);
  };
  std::string line = "exec";
  add_word(line, r.ezpz);
  line += " launch";
  for (const std::string& word : r.launch_args) add_word(line, word);
  line += " --";
  for (const std::string& word : r.command) add_word(line, word);
  line += '\n';
  return line;
}

bool is_batch(std::optional<SchedulerKind> kind) {
  return kind == SchedulerKind::pbs || kind == SchedulerKind::slurm;
}

}  // namespace

SubmitScheduler choose_submit_scheduler(const SubmitSchedulerInputs& in) {
  if (in.flag) {
    auto kind = scheduler_from_string(*in.flag);
    if (!is_batch(kind)) {
      throw Error(fmt::format("--scheduler: \"{}\" is not a batch scheduler; expected pbs or slurm",
                              *in.flag));
    }
    return {*kind, fmt::format("--scheduler {}", *in.flag)};
  }
  if (is_batch(in.job)) return {*in.job, in.job_rule};
  if (is_batch(in.profile)) {
    return {*in.profile,
            fmt::format("machine profile {} runs {}", in.profile_name, to_string(*in.profile))};
  }
  if (in.qsub_on_path) return {SchedulerKind::pbs, "qsub is on PATH", true};
  if (in.sbatch_on_path) return {SchedulerKind::slurm, "sbatch is on PATH", true};
  throw Error(fmt::format(
      "submit: no batch scheduler here (no PBS or Slurm job, machine profile {} names none, no "
      "qsub or sbatch on PATH); pass --scheduler pbs or --scheduler slurm",
      in.profile_name));
}

CarriedEnv carried_environment(const Env& env) {
  auto path = [&env](std::string_view name) {
    std::optional<std::string> value = get_nonempty(env, name);
    if (value) {
      if (auto problem = directive_problem(*value, /*allow_spaces=*/true)) {
        throw Error(
            fmt::format("{}: {} cannot go in the job script; deactivate that environment to submit "
                        "without it",
                        name, *problem));
      }
    }
    return value;
  };
  CarriedEnv carried{.conda_prefix = path("CONDA_PREFIX"),
                     .conda_name = path("CONDA_DEFAULT_ENV"),
                     .conda_exe = path("CONDA_EXE"),
                     .venv = path("VIRTUAL_ENV"),
                     .modules = get_nonempty(env, "LOADEDMODULES"),
                     .setup_file = path("EZPZ_SETUP_ENV")};
  if (!carried.conda_prefix) carried.conda_name = carried.conda_exe = std::nullopt;
  return carried;
}

std::optional<EnvAccount> account_from_env(const Env& env, SchedulerKind scheduler) {
  const std::string_view own = scheduler == SchedulerKind::pbs ? "PBS_ACCOUNT" : "SLURM_ACCOUNT";
  for (std::string_view variable : {own, std::string_view("PROJECT")}) {
    if (auto value = get_nonempty(env, variable)) {
      return EnvAccount{.account = *value, .variable = std::string(variable)};
    }
  }
  return std::nullopt;
}

std::string single_quote(std::string_view word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string_view("'\\''") : std::string_view(&c, 1);
  return quoted + "'";
}

std::optional<std::string> directive_problem(std::string_view value, bool allow_spaces) {
  if (value.empty()) return "an empty value";
  for (char c : value) {
    if (c == '\n') return "a newline";
    if (c == '\r') return "a carriage return";
    if (c == '\t') return "a tab";
    if (std::iscntrl(static_cast<unsigned char>(c))) return "a control character";
    // qsub and sbatch split directive lines at spaces and strip quotes.
    if (c == ' ' && !allow_spaces) return "a space";
    if ((c == '"' || c == '\'') && !allow_spaces) return "a quote";
  }
  return std::nullopt;
}

namespace {

// sbatch's --time forms, by whether a day count leads and how many
// colon-separated fields follow: the seconds each field counts.
struct WalltimeForm {
  bool days;
  std::size_t fields;
  std::array<long, 3> unit;
};
constexpr std::array<WalltimeForm, 6> k_walltime_forms = {{
    {false, 1, {60}},           // minutes
    {false, 2, {60, 1}},        // minutes:seconds
    {false, 3, {3600, 60, 1}},  // hours:minutes:seconds
    {true, 1, {3600}},          // days-hours
    {true, 2, {3600, 60}},      // days-hours:minutes
    {true, 3, {3600, 60, 1}},   // days-hours:minutes:seconds
}};
constexpr long k_day = 86400;

// 1 to 7 digits: past that a count means nothing as a walltime.
std::optional<long> walltime_field(std::string_view text) {
  if (text.empty() || text.size() > 7) return std::nullopt;
  if (text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return parse_count(text);
}

std::optional<long> walltime_seconds(std::string_view text) {
  std::optional<long> days;
  if (auto dash = text.find('-'); dash != std::string_view::npos) {
    days = walltime_field(text.substr(0, dash));
    if (!days) return std::nullopt;
    text.remove_prefix(dash + 1);
  }
  std::vector<std::string_view> fields = split(text, ':');
  for (const WalltimeForm& form : k_walltime_forms) {
    if (form.days != days.has_value() || form.fields != fields.size()) continue;
    long total = days.value_or(0) * k_day;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      std::optional<long> value = walltime_field(fields[i]);
      // A field holds less than one of the field before it (hours after days: 24).
      long most = i > 0 ? form.unit[i - 1] / form.unit[i] : days ? k_day / form.unit[0] : 0;
      if (!value || (most > 0 && *value >= most)) return std::nullopt;
      total += *value * form.unit[i];
    }
    return total;
  }
  return std::nullopt;
}

}  // namespace

long parse_walltime(std::string_view text) {
  std::optional<long> seconds = walltime_seconds(text);
  if (!seconds || *seconds == 0) {
    // {:?}: quoted with escapes, so that the error stays on one line.
    throw Error(
        fmt::format("--time: expected M, M:SS, H:MM:SS, D-H, D-H:MM or D-H:MM:SS (e.g. "
                    "30 for 30 minutes, 1:30:00, 2-12), more than 0, got {:?}",
                    text));
  }
  return *seconds;
}

std::string format_walltime(long seconds, SchedulerKind scheduler) {
  const Dialect& d = dialect_for(scheduler);
  long days = d.walltime_days ? seconds / k_day : 0;
  long rest = seconds - days * k_day;
  std::string hms = fmt::format("{:02}:{:02}:{:02}", rest / 3600, rest / 60 % 60, rest % 60);
  return days > 0 ? fmt::format("{}-{}", days, hms) : hms;
}

namespace {

std::string file_stem(std::string_view word) {
  std::filesystem::path path(word);
  std::string ext = path.extension().string();
  bool script = ext == ".py" || ext == ".sh";  // a.out keeps its name
  return script ? path.stem().string() : path.filename().string();
}

// python's own options that take a separate value (python3 -W error x.py).
bool python_option_with_value(std::string_view word) {
  return word == "-W" || word == "-X";
}

// python [options] (-m MODULE | -c CODE | SCRIPT): the module or the script.
std::string python_target(const std::vector<std::string>& command) {
  for (std::size_t i = 1; i < command.size(); ++i) {
    std::string_view word = command[i];
    if (word == "-m" && i + 1 < command.size()) return command[i + 1];
    if (word.starts_with("-m") && word.size() > 2) return std::string(word.substr(2));
    if (word == "-c" || word == "-") break;
    if (python_option_with_value(word))
      ++i;
    else if (!word.starts_with('-'))
      return file_stem(word);
  }
  return file_stem(command.front());
}

// torchrun's options take values: its script is the first .py word, or -m's module.
std::string torchrun_target(const std::vector<std::string>& command) {
  for (std::size_t i = 1; i < command.size(); ++i) {
    if (command[i] == "-m" && i + 1 < command.size()) return command[i + 1];
    if (command[i].ends_with(".py")) return file_stem(command[i]);
  }
  return "torchrun";
}

std::string shell_target(const std::vector<std::string>& command) {
  for (std::size_t i = 1; i < command.size(); ++i) {
    if (!command[i].starts_with('-')) return file_stem(command[i]);
  }
  return file_stem(command.front());
}

std::string ezpz_target(const std::vector<std::string>& command) {
  return command.size() > 1 ? "ezpz-" + command[1] : "ezpz";
}

// What names a job, by the program it starts (matched on its file name).
struct NamingRule {
  bool (*matches)(std::string_view program);
  std::string (*target)(const std::vector<std::string>& command);
};
const std::array<NamingRule, 4> k_naming_rules = {{
    {[](std::string_view p) { return p.starts_with("python"); }, python_target},
    {[](std::string_view p) { return p == "torchrun"; }, torchrun_target},
    {[](std::string_view p) { return p == "bash" || p == "sh" || p == "zsh"; }, shell_target},
    {[](std::string_view p) { return p == "ezpz"; }, ezpz_target},
}};

std::string name_target(const std::vector<std::string>& command) {
  std::string program = std::filesystem::path(command.front()).filename().string();
  for (const NamingRule& rule : k_naming_rules) {
    if (rule.matches(program)) return rule.target(command);
  }
  return file_stem(command.front());
}

bool fits_job_name(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

}  // namespace

std::string default_job_name(const std::vector<std::string>& command, SchedulerKind scheduler) {
  const Dialect& d = dialect_for(scheduler);
  std::string name = command.empty() || command.front().empty() ? "" : name_target(command);
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !fits_job_name(c); }, '_');
  if (name.empty()) name = "ezpz";
  if (d.name_letter_first && !std::isalpha(static_cast<unsigned char>(name.front()))) {
    name = "ezpz-" + name;
  }
  // A dotted module too long for the limit is named by its last part.
  if (d.name_max > 0 && name.size() > d.name_max && name.find('.') != std::string::npos &&
      std::isalpha(static_cast<unsigned char>(name[name.rfind('.') + 1]))) {
    name = name.substr(name.rfind('.') + 1);
  }
  return d.name_max > 0 ? name.substr(0, d.name_max) : name;
}

long nodes_to_request(const NodeRequest& r) {
  std::optional<long> per_node = r.ppn;
  if (!per_node && r.gpus_per_node > 0) per_node = r.gpus_per_node;
  if (!r.nprocs || !per_node) return r.nodes.value_or(1);
  // What the job's launch will do with these numbers on the nodes it gets.
  SlotsPerHost slots{.count = static_cast<int>(*per_node),
                     .source = fmt::format("machine profile {}", r.profile_name),
                     .known = true};
  long available = r.nodes.value_or(k_max_hosts);
  Topology topology =
      infer_topology({r.nprocs, r.ppn, std::nullopt}, static_cast<int>(available), slots);
  return r.nodes.value_or(topology.nhosts);
}

namespace {

// A value a profile may require (batch.required), and the option giving it.
struct Requirement {
  std::string_view name;
  std::string_view option;
  bool (*given)(const BatchRequest&);
};
constexpr std::array<Requirement, 3> k_requirements = {{
    {"account", "-A/--account", [](const BatchRequest& r) { return r.account.has_value(); }},
    {"walltime", "-t/--time", [](const BatchRequest& r) { return r.walltime.has_value(); }},
    {"queue", "-q/--queue", [](const BatchRequest& r) { return r.queue.has_value(); }},
}};

}  // namespace

std::vector<std::string> missing_requirements(const BatchRequest& r,
                                              const std::vector<std::string>& required,
                                              std::string_view profile_name) {
  std::vector<std::string> warnings;
  std::string_view submitter = r.scheduler == SchedulerKind::pbs ? "qsub" : "sbatch";
  for (const Requirement& requirement : k_requirements) {
    bool needed = std::find(required.begin(), required.end(), requirement.name) != required.end();
    if (needed && !requirement.given(r)) {
      warnings.push_back(fmt::format(
          "submit: machine profile {} requires {} ({}); {} may refuse the job without it",
          profile_name, requirement.name, requirement.option, submitter));
    }
  }
  return warnings;
}

std::string render_batch_script(const BatchRequest& r) {
  const Dialect& d = dialect_for(r.scheduler);
  if (r.nodes < 1) throw Error(fmt::format("--nodes: expected at least 1, got {}", r.nodes));
  std::string script = "#!/bin/bash\n" + directive_lines(r, d);
  script += fmt::format(
      "\n# Written by ezpz submit: the job runs ezpz launch from the directory it was\n"
      "# submitted in, with the command exactly as it was given.\n"
      "# Scheduler: {} ({}).\n",
      to_string(r.scheduler), printable(r.scheduler_rule));
  if (!r.account_source.empty()) {
    script += fmt::format("# Account: {} (from {}; no -A/--account given).\n", *r.account,
                          r.account_source);
  }
  return script + environment_part(r, d) + launch_line(r);
}

std::string job_id_from_output(std::string_view output) {
  static const std::regex k_sbatch("Submitted batch job ([0-9]+)");
  std::string text(output);
  std::smatch match;
  if (std::regex_search(text, match, k_sbatch)) return match[1];
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

}  // namespace ezpz
