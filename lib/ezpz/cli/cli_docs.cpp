#include "ezpz/cli/cli_docs.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "ezpz/launch/render.hpp"
#include "ezpz/launchers/launcher_table.hpp"

namespace ezpz::docs {

namespace {

// Options whose values are known words. `@machines` asks the ezpz being completed
// for its profile names, so a user's own profiles complete too; `@launchers` are the
// launcher table's names. Every other option
// that takes a value completes file names.
struct ValueWords {
  std::string_view option;
  std::string_view words;
};
constexpr std::array<ValueWords, 5> k_value_words = {{
    {"--machine", "@machines"},
    {"--scheduler", "pbs slurm flux local"},
    {"--launcher", "@launchers"},
    {"--color", "auto always never"},
    {"--signal", "TERM INT KILL HUP QUIT USR1 USR2"},
}};

// Positional arguments that are machine names, by command path.
constexpr std::array<std::string_view, 1> k_machine_positionals = {"machines show"};

using Visit = std::function<void(const std::string& path, const CommandDoc&)>;

void walk(const CommandDoc& command, const std::string& path, const Visit& visit) {
  visit(path, command);
  for (const CommandDoc& sub : command.subcommands)
    walk(sub, path.empty() ? sub.name : path + " " + sub.name, visit);
}

std::string joined(const std::vector<std::string>& words, std::string_view separator = " ") {
  return fmt::format("{}", fmt::join(words, separator));
}

std::vector<std::string> subcommand_names(const CommandDoc& command) {
  std::vector<std::string> names;
  for (const CommandDoc& sub : command.subcommands) names.push_back(sub.name);
  return names;
}

std::vector<std::string> option_names(const CommandDoc& command) {
  std::vector<std::string> names;
  for (const OptionDoc& o : command.options) {
    if (!o.positional) names.insert(names.end(), o.names.begin(), o.names.end());
  }
  return names;
}

// The names of the options of `command` that take a value.
std::vector<std::string> value_options(const CommandDoc& command) {
  std::vector<std::string> names;
  for (const OptionDoc& o : command.options) {
    if (!o.positional && !o.value.empty())
      names.insert(names.end(), o.names.begin(), o.names.end());
  }
  return names;
}

// `_ezpz_takes_value PATH WORD`: whether WORD is an option of the command at PATH
// that takes a value (-q is --queue for submit, --quiet elsewhere).
std::string takes_value_function(const CommandDoc& root) {
  std::string out = "_ezpz_takes_value() {\n  case $1 in\n";
  walk(root, "", [&](const std::string& path, const CommandDoc& c) {
    std::vector<std::string> names = value_options(c);
    if (!names.empty())
      out += fmt::format("    (\"{}\") case $2 in ({}) return 0 ;; esac ;;\n", path,
                         joined(names, "|"));
  });
  return out + "  esac\n  return 1\n}\n\n";
}

// `case` arms, one per command path: `"launch") echo "--nprocs ...";;` style.
std::string path_arms(const CommandDoc& root, std::string_view indent,
                      const std::function<std::string(const CommandDoc&)>& body) {
  std::string out;
  walk(root, "", [&](const std::string& path, const CommandDoc& c) {
    out += fmt::format("{}(\"{}\") {} ;;\n", indent, path, body(c));
  });
  return out;
}

// Every launcher's name and the names users type for it, in the launcher table's order.
std::string launcher_words() {
  std::string words;
  for (const LauncherRow& row : k_launchers) {
    words += fmt::format("{}{}", words.empty() ? "" : " ", row.name);
    for (std::string_view alias : row.aliases) words += fmt::format(" {}", alias);
  }
  return words;
}

std::string value_arms(std::string_view indent, std::string_view machines_action,
                       std::string_view words_action, std::string_view files_action) {
  std::string out;
  for (const ValueWords& v : k_value_words) {
    std::string words = v.words == "@launchers" ? launcher_words() : std::string(v.words);
    std::string action = v.words == "@machines" ? std::string(machines_action)
                                                : fmt::format(fmt::runtime(words_action), words);
    out += fmt::format("{}({}) {} ;;\n", indent, v.option, action);
  }
  out += fmt::format("{}(*) {} ;;\n", indent, files_action);
  return out;
}

// `_ezpz_takes_command PATH`: whether the words after the options of the command at
// PATH are the user's command (launch, test, submit).
std::string takes_command_function(const CommandDoc& root) {
  std::vector<std::string> takers;
  walk(root, "", [&](const std::string& path, const CommandDoc& c) {
    if (c.takes_command) takers.push_back(shell_quote(path));
  });
  return fmt::format(
      "_ezpz_takes_command() {{\n  case $1 in\n    ({}) return 0 ;;\n  esac\n  return 1\n}}\n\n",
      takers.empty() ? "''" : joined(takers, "|"));
}

}  // namespace

std::string bash_completion(const CommandDoc& root) {
  std::string out = fmt::format(
      "# bash completion for {0}, generated by `{0} completion bash` from the definitions\n"
      "# behind --help. Installed where bash-completion looks, or: source <({0} completion "
      "bash)\n\n",
      root.name);
  out += "_ezpz_subcommands() {\n  case $1 in\n";
  out += path_arms(root, "    ", [](const CommandDoc& c) {
    return "echo " + shell_quote(joined(subcommand_names(c)));
  });
  out += "  esac\n}\n\n_ezpz_options() {\n  case $1 in\n";
  out += path_arms(root, "    ", [](const CommandDoc& c) {
    return "echo " + shell_quote(joined(option_names(c)));
  });
  out += "  esac\n}\n\n";
  out += takes_value_function(root);
  out += takes_command_function(root);
  // Machine names come from file names anyone may have chosen: matched as text, never through
  // compgen -W, which expands its words ($(...), `...`) as the shell would.
  out +=
      "_ezpz_machines() {\n"
      "  local name\n"
      "  COMPREPLY=()\n"
      "  while IFS= read -r name; do\n"
      "    [[ $name == \"$cur\"* ]] && COMPREPLY+=(\"$name\")\n"
      "  done < <(\"${COMP_WORDS[0]}\" machines list --names 2>/dev/null)\n"
      "}\n\n";
  out +=
      "_ezpz() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  local at='' i w sub found\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=${COMP_WORDS[i]}\n"
      "    # After '--' or the command's first word, the words are the user's command.\n"
      "    if [[ $w == -- ]]; then compopt -o default; COMPREPLY=(); return 0; fi\n"
      "    if _ezpz_takes_value \"$at\" \"$w\"; then ((i++)); continue; fi\n"
      "    [[ $w == -* ]] && continue\n"
      "    found=''\n"
      "    for sub in $(_ezpz_subcommands \"$at\"); do\n"
      "      if [[ $w == \"$sub\" ]]; then found=$sub; break; fi\n"
      "    done\n"
      "    if [[ -n $found ]]; then at=${at:+$at }$found; continue; fi\n"
      "    if _ezpz_takes_command \"$at\"; then compopt -o default; COMPREPLY=(); return 0; fi\n"
      "  done\n"
      "  if ((COMP_CWORD > 1)) && _ezpz_takes_value \"$at\" \"$prev\"; then\n"
      "    case $prev in\n";
  out += value_arms("      ", "_ezpz_machines", "COMPREPLY=($(compgen -W '{}' -- \"$cur\"))",
                    "compopt -o filenames; mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")");
  out += "    esac\n    return 0\n  fi\n";
  for (std::string_view path : k_machine_positionals) {
    out += fmt::format(
        "  if [[ $at == '{}' && $cur != -* ]]; then\n"
        "    _ezpz_machines\n"
        "    return 0\n  fi\n",
        path);
  }
  out +=
      "  if [[ $cur == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$(_ezpz_options \"$at\")\" -- \"$cur\"))\n"
      "  else\n"
      "    COMPREPLY=($(compgen -W \"$(_ezpz_subcommands \"$at\")\" -- \"$cur\"))\n"
      "    if ((${#COMPREPLY[@]} == 0)) && _ezpz_takes_command \"$at\"; then compopt -o default; "
      "fi\n"
      "  fi\n"
      "}\n"
      "complete -F _ezpz ezpz\n";
  return out;
}

namespace {

// Text as roff prints it: backslashes and dashes escaped, and no line starting
// with a control character ('.' or '\'').
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string option_item(const OptionDoc& o) {
  std::vector<std::string> names;
  for (const std::string& name : o.names) names.push_back("\\fB" + roff(name) + "\\fR");
  std::string head = joined(names, ", ");
  if (!o.value.empty()) head += " \\fI" + roff(o.value) + "\\fR";
  return fmt::format(".TP\n{}\n{}\n", head, roff(o.description));
}

std::string command_section(const std::string& path, const CommandDoc& c) {
  std::string usage = "ezpz " + path + " [OPTIONS]";
  for (const OptionDoc& o : c.options) {
    if (o.positional) usage += " " + o.names.front();
  }
  if (!usage_tail(path).empty()) {
    // Two appends, not " " + string: GCC 12 -O3 warns falsely on that (-Wrestrict, PR 105329).
    usage += ' ';
    usage += usage_tail(path);
  }
  std::string out = fmt::format(".SS \"{}\"\n{}\n", roff(usage), roff(c.description));
  for (const OptionDoc& o : c.options) out += option_item(o);
  if (!c.footer.empty()) out += fmt::format(".PP\n.nf\n{}\n.fi\n", roff(c.footer));
  return out;
}

}  // namespace

struct UsageTail {
  std::string_view subcommand;
  std::string_view tail;
};
constexpr std::array<UsageTail, 3> k_usage_tails = {{
    {"launch", "[--] COMMAND [ARGS...]"},
    {"submit", "-- COMMAND [ARGS...]"},
    {"test", "[TRAINER FLAGS...] [-- TRAINER FLAGS...]"},
}};

std::string_view usage_tail(std::string_view subcommand) {
  for (const UsageTail& row : k_usage_tails) {
    if (row.subcommand == subcommand) return row.tail;
  }
  return {};
}

std::string man_page(const CommandDoc& root, const std::string& version) {
  std::string_view summary = root.description;  // "ezpz: launch ..." -> "launch ..."
  if (summary.starts_with(root.name + ": ")) summary.remove_prefix(root.name.size() + 2);
  std::string out = fmt::format(
      ".\\\" Generated by `ezpz man` from the definitions behind --help; do not edit.\n"
      ".TH EZPZ 1 \"\" \"ezpz {}\" \"User Commands\"\n"
      ".SH NAME\nezpz \\- {}\n"
      ".SH SYNOPSIS\n\\fBezpz\\fR [\\fIOPTIONS\\fR] \\fISUBCOMMAND\\fR [\\fIARGS\\fR...]\n.br\n"
      "\\fBezpz launch\\fR [\\fIOPTIONS\\fR] [\\fB\\-\\-\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR...]\n"
      ".SH DESCRIPTION\n"
      "ezpz plans and runs distributed PyTorch jobs: it detects the scheduler (PBS, Slurm or\n"
      "none), reads the allocation, chooses the machine profile, and starts every rank with\n"
      "the right launcher (PALS or Hydra mpiexec, srun, mpirun, torchrun) and the torch\n"
      "env:// variables (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).\n"
      ".SH OPTIONS\n",
      roff(version), roff(summary));
  for (const OptionDoc& o : root.options) out += option_item(o);
  out += ".SH COMMANDS\n";
  walk(root, "", [&](const std::string& path, const CommandDoc& c) {
    if (!path.empty()) out += command_section(path, c);
  });
  out +=
      ".SH ENVIRONMENT\n"
      ".TP\n\\fBEZPZ_MACHINE\\fR\nThe machine profile to use, as \\fB\\-\\-machine\\fR does.\n"
      ".TP\n\\fBEZPZ_MACHINES_PATH\\fR\nMore profile directories, separated by ':'; the first "
      "wins.\n"
      ".TP\n\\fBEZPZ_SCHEDULER\\fR\nThe scheduler to assume, as \\fB\\-\\-scheduler\\fR does.\n"
      ".TP\n\\fBEZPZ_LOG_LEVEL\\fR\ndebug, info, warn or quiet.\n"
      ".TP\n\\fBEZPZ_RUNS_DIR\\fR\nWhere \\fBezpz launch\\fR keeps run records (default "
      ".ezpz/runs).\n"
      ".TP\n\\fBNO_COLOR\\fR\nSet to anything but the empty string: no colour unless "
      "\\fB\\-\\-color always\\fR.\n"
      ".SH FILES\n"
      ".TP\n\\fI~/.config/ezpz/machines/NAME.yaml\\fR\nYour machine profiles; they replace bundled "
      "ones of the same name.\n"
      ".TP\n\\fIPREFIX/share/ezpz/machines/\\fR\nThe bundled machine profiles.\n"
      ".SH EXIT STATUS\n"
      "0 on success; the job's own status for \\fBezpz launch\\fR (128+N when a rank died of\n"
      "signal N, 124 when \\fB\\-\\-timeout\\fR or \\fB\\-\\-idle\\-timeout\\fR stopped it); 1 for "
      "a\n"
      "failure that is not the job's; 2 for bad options, configuration or allocation (nothing\n"
      "was run); 127 when the launcher or command does not exist.\n"
      ".SH SEE ALSO\n\\fBmpiexec\\fR(1), \\fBsrun\\fR(1), \\fBqsub\\fR(1), \\fBsbatch\\fR(1)\n";
  return out;
}

std::string zsh_completion(const CommandDoc& root) {
  std::string out = fmt::format(
      "#compdef {0}\n# zsh completion for {0}, generated by `{0} completion zsh` from the\n"
      "# definitions behind --help. Installed as _{0} where zsh's fpath looks.\n\n",
      root.name);
  out += "_ezpz_subcommands() {\n  case $1 in\n";
  out += path_arms(root, "    ", [](const CommandDoc& c) {
    std::vector<std::string> entries;
    for (const CommandDoc& sub : c.subcommands)
      entries.push_back(shell_quote(sub.name + ":" + sub.description));
    return "reply=(" + joined(entries) + ")";
  });
  out += "  esac\n}\n\n_ezpz_options() {\n  case $1 in\n";
  out += path_arms(root, "    ",
                   [](const CommandDoc& c) { return "reply=(" + joined(option_names(c)) + ")"; });
  out += "  esac\n}\n\n";
  out += takes_value_function(root);
  out += takes_command_function(root);
  out +=
      "_ezpz() {\n"
      "  local at='' w prev i\n"
      "  local -a reply names\n"
      "  for ((i = 2; i < CURRENT; i++)); do\n"
      "    w=${words[i]}\n"
      "    # After '--' or the command's first word, the words are the user's command.\n"
      "    if [[ $w == -- ]]; then words=(${words[i+1,-1]}); ((CURRENT -= i)); _normal; return; "
      "fi\n"
      "    if _ezpz_takes_value \"$at\" $w; then ((i++)); continue; fi\n"
      "    [[ $w == -* ]] && continue\n"
      "    _ezpz_subcommands \"$at\"; names=(${reply%%:*})\n"
      "    if ((${names[(Ie)$w]})); then at=${at:+$at }$w; continue; fi\n"
      "    if _ezpz_takes_command \"$at\"; then words=(${words[i,-1]}); ((CURRENT -= i - 1)); "
      "_normal; return; fi\n"
      "  done\n"
      "  prev=${words[CURRENT-1]}\n"
      "  if ((CURRENT > 2)) && _ezpz_takes_value \"$at\" $prev; then\n"
      "    case $prev in\n";
  out +=
      value_arms("      ", "compadd -- ${(f)\"$(${words[1]} machines list --names 2>/dev/null)\"}",
                 "compadd -- {}", "_files");
  out += "    esac\n    return\n  fi\n";
  for (std::string_view path : k_machine_positionals) {
    out += fmt::format(
        "  if [[ $at == '{}' && $PREFIX != -* ]]; then\n"
        "    compadd -- ${{(f)\"$(${{words[1]}} machines list --names 2>/dev/null)\"}}\n"
        "    return\n  fi\n",
        path);
  }
  out +=
      "  if [[ $PREFIX == -* ]]; then\n"
      "    _ezpz_options \"$at\"; compadd -- $reply\n"
      "  else\n"
      "    _ezpz_subcommands \"$at\"\n"
      "    if (($#reply)); then _describe -t commands 'ezpz command' reply\n"
      "    elif _ezpz_takes_command \"$at\"; then _normal\n"
      "    fi\n"
      "  fi\n"
      "}\n\n"
      "_ezpz \"$@\"\n";
  return out;
}

}  // namespace ezpz::docs
