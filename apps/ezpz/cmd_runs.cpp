// `ezpz runs`: what the run records under .ezpz/runs say (newest first), and
// `ezpz runs show ID`: one run with each attempt's verdict.
#include "cmd_runs.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "ezpz/error.hpp"
#include "ezpz/run_record.hpp"
#include "ezpz/sys/run_records.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

CLI::App* setup_runs(CLI::App& app, RunsOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand("runs", "List the runs ezpz launch recorded here");
  add_verbosity_flags(*cmd, globals);
  cmd->add_option("--runs-dir", o.runs_dir, "Where the records are (EZPZ_RUNS_DIR, .ezpz/runs)");
  cmd->add_option("-n,--last", o.limit, "How many runs to list (20)")->check(CLI::PositiveNumber);
  o.show = cmd->add_subcommand("show", "Print one run: its summary and each attempt's verdict");
  o.show->add_option("ID", o.show_id, "The run's id, or the start of it")->required();
  add_verbosity_flags(*o.show, globals);
  cmd->footer(
      "Examples:\n"
      "  ezpz runs\n"
      "  ezpz runs show 20261122-0958      # any unique start of the id\n"
      "Each run's files: .ezpz/runs/ID/{run.json,plan.json,hostfile,attempt-N/{output.log,verdict.json}}");
  return cmd;
}

int run_runs(const RunsOptions& o, const Context& context) {
  const std::string dir = sys::runs_directory(o.runs_dir, context.env);
  if (o.show->parsed()) {
    const std::string run_dir = sys::find_run(dir, o.show_id);
    std::fputs(run_details(sys::read_run(run_dir), sys::attempt_verdicts(run_dir), run_dir).c_str(),
               stdout);
    return 0;
  }
  std::vector<ListedRun> runs = sys::list_runs(dir);
  if (runs.size() > static_cast<std::size_t>(o.limit)) runs.resize(o.limit);
  std::fputs(runs_table(runs).c_str(), stdout);
  return 0;
}

}  // namespace ezpz
