// `ezpz completion bash|zsh` and `ezpz man`: the command tree CLI11 holds for
// --help, read into plain descriptions, rendered by lib/ezpz/cli_docs.
#include "cmd_completion.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "ezpz/cli/cli_docs.hpp"

namespace ezpz {

CLI::App* setup_completion(CLI::App& app, CompletionOptions& o, GlobalOptions& globals) {
  o.root = &app;
  CLI::App* cmd =
      app.add_subcommand("completion", "Print the shell completion script for bash or zsh");
  add_verbosity_flags(*cmd, globals);
  cmd->add_option("SHELL", o.shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  cmd->footer(
      "Examples:\n"
      "  source <(ezpz completion bash)              # this shell only\n"
      "  ezpz completion zsh > ~/.zfunc/_ezpz        # with ~/.zfunc on fpath\n"
      "Installed copies live in share/bash-completion/completions/ezpz and\n"
      "share/zsh/vendor-completions/_ezpz.");
  return cmd;
}

CLI::App* setup_man(CLI::App& app, ManOptions& o, GlobalOptions&) {
  o.root = &app;
  CLI::App* cmd = app.add_subcommand("man", "Print the ezpz(1) man page in roff");
  cmd->group("");  // for the build, not for users: they run `man ezpz`
  return cmd;
}

namespace {

bool hidden(const std::string& group) {
  return group.empty();
}

docs::OptionDoc describe(const CLI::Option& option) {
  docs::OptionDoc d;
  for (const std::string& s : option.get_snames()) d.names.push_back("-" + s);
  for (const std::string& l : option.get_lnames()) d.names.push_back("--" + l);
  if (d.names.empty()) {  // a positional argument
    d.names.push_back(option.get_name());
    d.positional = true;
  }
  if (option.get_type_size() != 0) d.value = option.get_type_name();
  d.description = option.get_description();
  return d;
}

docs::CommandDoc describe(const CLI::App& app) {
  docs::CommandDoc d{app.get_name(),          app.get_description(), app.get_footer(), {}, {},
                     app.get_prefix_command()};
  for (const CLI::Option* option : app.get_options()) {
    if (!hidden(option->get_group())) d.options.push_back(describe(*option));
  }
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (!hidden(sub->get_group())) d.subcommands.push_back(describe(*sub));
  }
  return d;
}

}  // namespace

int run_completion(const CompletionOptions& o, const Context&) {
  const docs::CommandDoc tree = describe(*o.root);
  const std::string text =
      o.shell == "zsh" ? docs::zsh_completion(tree) : docs::bash_completion(tree);
  std::fputs(text.c_str(), stdout);
  return 0;
}

int run_man(const ManOptions& o, const Context&) {
  std::fputs(docs::man_page(describe(*o.root), EZPZ_VERSION).c_str(), stdout);
  return 0;
}

}  // namespace ezpz
