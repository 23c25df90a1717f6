// Completion scripts and the man page from a small command tree: what each
// level offers, which options take values, and roff escaping.
#include "ezpz/cli/cli_docs.hpp"

#include "tests/catch.hpp"

namespace ezpz::docs {
namespace {

CommandDoc tree() {
  CommandDoc show{"show", "Show one", "", {{{"NAME"}, "TEXT", "The name", true}}, {}, false};
  CommandDoc machines{"machines", "Profiles", "", {{{"--names"}, "", "Names only", false}},
                      {show},     false};
  CommandDoc launch{"launch",
                    "Launch a command",
                    "Examples:\n  ezpz launch -- a.out\n.starts with a dot\n'and a quote",
                    {{{"-q", "--queue"}, "TEXT", "Queue \\ with a backslash", false},
                     {{"--dry-run"}, "", "Print", false}},
                    {},
                    true};
  return {"ezpz",
          "ezpz: launch things",
          "",
          {{{"-q", "--quiet"}, "", "Quiet", false}},
          {launch, machines},
          false};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("bash: words and value-taking options per command path", "[docs]") {
  const std::string script = bash_completion(tree());
  CHECK(contains(script, "(\"\") echo 'launch machines' ;;"));
  CHECK(contains(script, "(\"machines\") echo show ;;"));
  CHECK(contains(script, "(\"launch\") echo '-q --queue --dry-run' ;;"));
  // -q takes a value under launch only; at the top it is a flag.
  CHECK(contains(script, "(\"launch\") case $2 in (-q|--queue) return 0 ;; esac ;;"));
  CHECK_FALSE(contains(script, "(\"\") case $2 in"));
  CHECK(contains(script, "_ezpz_takes_command() {\n  case $1 in\n    (launch) return 0 ;;"));
  CHECK(contains(script, "complete -F _ezpz ezpz\n"));
}

TEST_CASE("zsh: subcommands carry their descriptions", "[docs]") {
  const std::string script = zsh_completion(tree());
  CHECK(script.starts_with("#compdef ezpz\n"));
  CHECK(contains(script, "(\"\") reply=('launch:Launch a command' machines:Profiles) ;;"));
}

TEST_CASE("man: sections, options and roff escaping", "[docs]") {
  const std::string page = man_page(tree(), "1.2.3");
  CHECK(contains(page, ".TH EZPZ 1 \"\" \"ezpz 1.2.3\" \"User Commands\"\n"));
  CHECK(contains(page, ".SH NAME\nezpz \\- launch things\n"));
  CHECK(contains(page, ".SS \"ezpz launch [OPTIONS] [\\-\\-] COMMAND [ARGS...]\"\n"));
  CHECK(contains(page, ".SS \"ezpz machines show [OPTIONS] NAME\"\n"));
  CHECK(contains(
      page, ".TP\n\\fB\\-q\\fR, \\fB\\-\\-queue\\fR \\fITEXT\\fR\nQueue \\e with a backslash\n"));
  // Lines of the examples that begin with '.' or '\'' would be roff requests.
  CHECK(contains(page, "\n\\&.starts with a dot\n\\&'and a quote\n"));
}

TEST_CASE("usage lines name what follows the options", "[docs]") {
  CHECK(usage_tail("launch") == "[--] COMMAND [ARGS...]");
  CHECK(usage_tail("submit") == "-- COMMAND [ARGS...]");
  CHECK(usage_tail("test") == "[TRAINER FLAGS...] [-- TRAINER FLAGS...]");
  CHECK(usage_tail("env").empty());
  CommandDoc test{"test", "Run the trainer", "", {}, {}, false};
  const std::string page = man_page({"ezpz", "ezpz: x", "", {}, {test}, false}, "1");
  CHECK(
      contains(page, ".SS \"ezpz test [OPTIONS] [TRAINER FLAGS...] [\\-\\- TRAINER FLAGS...]\"\n"));
}

}  // namespace
}  // namespace ezpz::docs
