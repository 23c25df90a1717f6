// The batch script of `ezpz submit`. Directives are parsed by qsub/sbatch,
// not by a shell, so their values are checked rather than quoted; the body is
// read by bash, so every word in it that came from the user is single-quoted.
#include "ezpz/batch_script.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "ezpz/error.hpp"

namespace ezpz {
namespace {

// How each scheduler spells the script's parts.
struct Dialect {
  std::string_view prefix;   // "#PBS"
  std::string_view workdir;  // the variable holding the directory qsub/sbatch ran in
};
constexpr Dialect k_pbs{"#PBS", "PBS_O_WORKDIR"};
constexpr Dialect k_slurm{"#SBATCH", "SLURM_SUBMIT_DIR"};

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

std::vector<Directive> pbs_directives(const BatchRequest& r) {
  std::vector<Directive> directives = {
      {"--nodes", "-l select=", std::to_string(r.nodes)},
      {"--time", "-l walltime=", r.walltime},
      {"--queue", "-q ", r.queue},
      {"--account", "-A ", r.account},
      {"--job-name", "-N ", r.job_name},
      {"--filesystems", "-l filesystems=", r.filesystems},
      {"--output", "-o ", r.output},
  };
  // With --output, stderr goes to the same file, as under Slurm.
  if (r.output) directives.push_back({"--output", "-j ", "oe"});
  return directives;
}

std::vector<Directive> slurm_directives(const BatchRequest& r) {
  if (r.filesystems) {
    throw Error("--filesystems: a PBS resource (-l filesystems=); Slurm has none");
  }
  return {
      {"--nodes", "-N ", std::to_string(r.nodes)},
      {"--time", "-t ", r.walltime},
      {"--queue", "-p ", r.queue},
      {"--account", "-A ", r.account},
      {"--job-name", "-J ", r.job_name},
      {"--output", "--output=", r.output},
  };
}

std::string directive_lines(const BatchRequest& r, const Dialect& d) {
  std::string lines;
  auto directives = r.scheduler == SchedulerKind::pbs ? pbs_directives(r) : slurm_directives(r);
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

bool fits_job_name(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
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
  if (in.qsub_on_path) return {SchedulerKind::pbs, "qsub is on PATH"};
  if (in.sbatch_on_path) return {SchedulerKind::slurm, "sbatch is on PATH"};
  throw Error(fmt::format(
      "submit: no batch scheduler here (no PBS or Slurm job, machine profile {} names none, no "
      "qsub or sbatch on PATH); pass --scheduler pbs or --scheduler slurm",
      in.profile_name));
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

void check_walltime(std::string_view text) {
  static const std::regex k_form("[0-9]+:[0-5][0-9]:[0-5][0-9]");
  bool zero = std::all_of(text.begin(), text.end(), [](char c) { return c == '0' || c == ':'; });
  if (!std::regex_match(text.begin(), text.end(), k_form) || zero) {
    throw Error(
        // {:?}: quoted with escapes, so that the error stays on one line.
        fmt::format("--time: expected HH:MM:SS, more than 00:00:00 (e.g. 01:30:00), got {:?}",
                    text));
  }
}

std::string default_job_name(const std::vector<std::string>& command) {
  std::string name =
      command.empty() ? "" : std::filesystem::path(command.front()).filename().string();
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !fits_job_name(c); }, '_');
  return name.empty() ? "ezpz" : name;
}

std::string render_batch_script(const BatchRequest& r) {
  const Dialect& d = dialect_for(r.scheduler);
  if (r.nodes < 1) throw Error(fmt::format("--nodes: expected at least 1, got {}", r.nodes));
  if (r.walltime) check_walltime(*r.walltime);
  std::string script = "#!/bin/bash\n" + directive_lines(r, d);
  script += fmt::format(
      "\n# Written by ezpz submit: the job runs ezpz launch from the directory it was\n"
      "# submitted in, with the command exactly as it was given.\n"
      "cd \"${}\" || exit\n",
      d.workdir);
  return script + launch_line(r);
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
