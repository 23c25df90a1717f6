// `ezpz runs`: what the run records under .ezpz/runs say (newest first),
// `ezpz runs show [ID|last]`: one run with each attempt's verdict, and
// `ezpz runs prune`: remove old records (a launch keeps the newest EZPZ_RUNS_KEEP).
#include "cmd_runs.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/output/rank_index.hpp"
#include "ezpz/output/rank_log.hpp"
#include "ezpz/profile/machine_profile.hpp"
#include "ezpz/supervise/attempt_facts.hpp"
#include "ezpz/supervise/explain.hpp"
#include "ezpz/supervise/run_prune.hpp"
#include "ezpz/supervise/run_record.hpp"
#include "ezpz/sys/addresses.hpp"
#include "ezpz/sys/run_records.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

namespace {

void setup_prune(CLI::App& cmd, RunsOptions& o, GlobalOptions& globals) {
  o.prune =
      cmd.add_subcommand("prune", "Remove old run records; runs still going are never touched");
  o.prune
      ->add_option("--keep", o.keep,
                   fmt::format("Keep the newest N records (default {}, or EZPZ_RUNS_KEEP; "
                               "none with --older-than alone)",
                               k_default_runs_kept))
      ->type_name("N");
  o.prune
      ->add_option("--older-than", o.older_than,
                   "Only records that ended longer ago than AGE: 90s, 30m, 12h, 7d, 2w")
      ->type_name("AGE");
  o.prune->add_flag("--dry-run", o.dry_run, "List what would be removed");
  add_verbosity_flags(*o.prune, globals);
}

void setup_explain(CLI::App& cmd, RunsOptions& o, GlobalOptions& globals) {
  o.explain = cmd.add_subcommand(
      "explain", "Classify a run's attempt, or with --machine any saved job log, again");
  o.explain->add_option("WHAT", o.explain_what,
                        "The run's id (or last, the default); with --machine, a log file");
  o.explain->add_option("--machine", o.machine, "Read WHAT as a saved log of a job on NAME")
      ->type_name("NAME");
  o.explain
      ->add_option("--exit-status", o.exit_status,
                   "With --machine: the job's exit status, when known (a log is taken for a "
                   "failed job's: 1)")
      ->type_name("N");
  o.explain
      ->add_option("--attempt", o.attempt,
                   "Which attempt of the run (default: the last); its verdict.json says the same")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  o.explain->add_flag("--json", o.json, "Print the explanation as JSON");
  add_verbosity_flags(*o.explain, globals);
}

}  // namespace

CLI::App* setup_runs(CLI::App& app, RunsOptions& o, GlobalOptions& globals) {
  CLI::App* cmd = app.add_subcommand("runs", "List the runs ezpz launch recorded here");
  add_verbosity_flags(*cmd, globals);
  cmd->add_option("--runs-dir", o.runs_dir, "Where the records are (EZPZ_RUNS_DIR, .ezpz/runs)");
  cmd->add_option("--last", o.limit, "How many runs to list, newest first (20)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-n", o.old_limit)->check(CLI::PositiveNumber)->group("");  // --last's old name
  o.show = cmd->add_subcommand("show", "Print one run: its summary and each attempt's verdict");
  o.show->add_option("ID", o.show_id, "The run's id, the start of it, or last (the default)");
  CLI::Option* rank =
      o.show->add_option("--rank", o.rank, "Print rank K's output instead (its stdout and stderr)")
          ->type_name("K")
          ->check(CLI::NonNegativeNumber);
  o.show->add_option("--grep", o.grep, "With --rank: only the lines containing TEXT")
      ->type_name("TEXT")
      ->needs(rank);
  o.show->add_option("--tail", o.tail, "With --rank: only the last N lines")
      ->type_name("N")
      ->needs(rank);
  o.show->add_option("--attempt", o.attempt, "With --rank: attempt N's output (default: the last)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->needs(rank);
  add_verbosity_flags(*o.show, globals);
  setup_prune(*cmd, o, globals);
  setup_explain(*cmd, o, globals);
  cmd->footer(
      "Examples:\n"
      "  ezpz runs\n"
      "  ezpz runs show                    # the newest run (also: ezpz runs show last)\n"
      "  ezpz runs show 20261122-0958      # any unique start of the id\n"
      "  ezpz runs show last --rank 3 --grep loss --tail 20\n"
      "  ezpz runs prune --keep 10\n"
      "  ezpz runs prune --older-than 7d --dry-run\n"
      "  ezpz runs explain last --json\n"
      "  ezpz runs explain --machine polaris job.ER\n"
      "Each run's files: "
      ".ezpz/runs/ID/{run.json,plan.json,hostfile,attempt-N/"
      "{output.log,ranks.idx|ranks.log,verdict.json}}\n"
      "A launch keeps the newest EZPZ_RUNS_KEEP records (50; all: never prune).");
  return cmd;
}

namespace {

std::string absolute(const std::string& dir) {
  std::error_code ignored;
  return std::filesystem::absolute(dir, ignored).lexically_normal().string();
}

// One attempt's per-rank output: ranks.log, or output.log with its ranks.idx (a labelled run).
std::optional<std::string> rank_output_of(const std::string& attempt_dir, long rank) {
  if (auto log = sys::read_file_if_present(attempt_dir + "/ranks.log")) {
    return output::rank_output(*log, rank);
  }
  const std::optional<std::string> index = sys::read_file_if_present(attempt_dir + "/ranks.idx");
  if (!index) return std::nullopt;
  return output::indexed_rank_output(
      sys::read_file_if_present(attempt_dir + "/output.log").value_or(""), *index, rank);
}

// Rank --rank's output in --attempt's record, else in the last attempt's that has one.
std::string rank_output(const RunsOptions& o, const std::string& run_dir) {
  std::optional<std::string> text =
      o.attempt ? rank_output_of(attempt_dir(run_dir, *o.attempt), *o.rank) : std::nullopt;
  for (int attempt = 1; !o.attempt; ++attempt) {
    std::optional<std::string> next = rank_output_of(attempt_dir(run_dir, attempt), *o.rank);
    if (!next) break;
    text = std::move(next);
  }
  if (text) return *text;
  throw Error(
      fmt::format("{}: no per-rank output{} (the run's console was raw, or its ranks were "
                  "not under ezpz-rankenv)",
                  run_dir, o.attempt ? fmt::format(" for attempt {}", *o.attempt) : ""));
}

int show_rank(const RunsOptions& o, const std::string& run_dir) {
  const std::string text = rank_output(o, run_dir);
  std::fputs(output::pick_lines(text, o.grep, o.tail).c_str(), stdout);
  return 0;
}

int show_run(const RunsOptions& o, const std::string& dir) {
  const bool newest = o.show_id.empty() || o.show_id == "last";
  const std::string run_dir = newest ? sys::newest_run(dir) : sys::find_run(dir, o.show_id);
  if (o.rank) return show_rank(o, run_dir);
  std::fputs(run_details(sys::read_run(run_dir), sys::attempt_verdicts(run_dir), run_dir).c_str(),
             stdout);
  return 0;
}

PruneRule prune_rule(const RunsOptions& o, const Context& context) {
  PruneRule rule{.keep = o.keep, .older_than = std::nullopt};
  if (o.older_than) {
    rule.older_than = parse_age(*o.older_than);
    if (!rule.older_than) {
      throw Error(fmt::format("--older-than {}: expected an age such as 90s, 30m, 12h, 7d or 2w",
                              *o.older_than));
    }
  }
  if (rule.keep || rule.older_than) return rule;
  RunsKept kept = runs_kept(context.env);
  if (!kept.warning.empty()) throw Error(kept.warning);
  rule.keep = kept.newest;
  return rule;
}

int prune(const RunsOptions& o, const Context& context, const std::string& dir) {
  const PruneRule rule = prune_rule(o, context);
  if (!rule.keep && !rule.older_than) {  // EZPZ_RUNS_KEEP=all
    std::printf("EZPZ_RUNS_KEEP=all: nothing removed from %s\n", absolute(dir).c_str());
    return 0;
  }
  sys::PruneResult result = sys::prune_runs(dir, rule, o.dry_run);
  for (const std::string& id : result.removed) {
    std::printf("%s %s\n", o.dry_run ? "would remove" : "removed", id.c_str());
  }
  std::printf("%s %zu of %zu run records in %s\n", o.dry_run ? "would remove" : "removed",
              result.removed.size(), result.total, absolute(dir).c_str());
  return 0;
}

std::vector<BadNodePattern> patterns_of(const std::string& machine, const Context& context) {
  return loaded_profile_named(sys::load_machine_profiles(context.env), machine, "runs explain")
      .bad_node_patterns;
}

std::string read_or_throw(const std::string& path) {
  if (std::optional<std::string> text = sys::read_file_if_present(path)) return *text;
  throw Error(fmt::format("runs explain: {}: no such file", path));
}

// An attempt the record holds no facts of (an older ezpz's record, or a clean exit): its
// output.log, its launcher's status and hosts, its machine's patterns.
std::pair<AttemptFacts, std::vector<BadNodePattern>> older_record(const RunsOptions& o,
                                                                  const Context& context,
                                                                  const std::string& run_dir, int n,
                                                                  const std::string& verdict) {
  const std::string attempt = attempt_dir(run_dir, n);
  ExplainInput in = recorded_attempt(verdict, attempt + "/verdict.json");
  const std::string plan = run_dir + "/" + attempt_plan_file(n);
  read_recorded_plan(read_or_throw(plan), plan, in);
  // Without a captured output (--output raw, nothing to read it for) there is nothing more.
  in.output = sys::read_file_if_present(attempt + "/output.log").value_or("");
  in.address_hosts = sys::hosts_at_addresses(lost_peer_addresses(in.output), in.hosts);
  // A clean exit's verdict reads no bad-node pattern: its machine's profile need not be found.
  if (in.exit_status != 0) {
    in.patterns = patterns_of(o.machine.value_or(sys::read_run(run_dir).summary.machine), context);
  }
  return {facts_of_log(in), in.patterns};
}

// A run's attempt (--attempt N, else its last): the facts its supervisor judged, with the
// patterns it judged them by (another machine's with --machine).
std::pair<Explanation, std::string> recorded_explanation(const RunsOptions& o,
                                                         const Context& context,
                                                         const std::string& dir) {
  const bool newest = o.explain_what.empty() || o.explain_what == "last";
  const std::string run_dir = newest ? sys::newest_run(dir) : sys::find_run(dir, o.explain_what);
  const std::vector<std::string> verdicts = sys::attempt_verdicts(run_dir);
  if (verdicts.empty()) throw Error(fmt::format("runs explain: {}: no attempt ended", run_dir));
  const int n = o.attempt.value_or(static_cast<int>(verdicts.size()));
  if (n > static_cast<int>(verdicts.size())) {
    throw Error(fmt::format("runs explain --attempt {}: {} has {} attempt{}", n, run_dir,
                            verdicts.size(), verdicts.size() == 1 ? "" : "s"));
  }
  const std::string attempt = attempt_dir(run_dir, n);
  const std::string facts_path = attempt + "/" + std::string(k_facts_file);
  if (std::optional<std::string> text = sys::read_file_if_present(facts_path)) {
    RecordedFacts recorded = parse_facts(*text, facts_path);
    if (o.machine) recorded.patterns = patterns_of(*o.machine, context);
    return {explain(recorded.facts, recorded.patterns), attempt};
  }
  auto [facts, patterns] = older_record(o, context, run_dir, n, verdicts[n - 1]);
  return {explain(facts, patterns), attempt};
}

// A saved log (--machine NAME LOGFILE): taken for a failed job's unless --exit-status.
std::pair<Explanation, std::string> log_explanation(const RunsOptions& o, const Context& context) {
  ExplainInput in{.output = read_or_throw(o.explain_what),
                  .exit_status = o.exit_status.value_or(1),
                  .hosts = {},
                  .world_size = 0,
                  .patterns = patterns_of(*o.machine, context)};
  return {explain(in), o.explain_what};
}

int explain_run(const RunsOptions& o, const Context& context, const std::string& dir) {
  const bool saved_log = o.machine && !o.explain_what.empty();
  const auto [e, source] =
      saved_log ? log_explanation(o, context) : recorded_explanation(o, context, dir);
  std::fputs((o.json ? explanation_json(e, source) : explanation_text(e)).c_str(), stdout);
  return 0;
}

void say_where(const std::string& dir, std::size_t total, std::size_t shown) {
  if (!log::enabled(log::Level::warn)) return;
  std::string more = shown < total ? fmt::format("; the newest {} shown (--last N)", shown) : "";
  log::write("ezpz: ", fmt::format("{} run{} recorded in {}{}", total, total == 1 ? "" : "s",
                                   absolute(dir), more));
}

}  // namespace

int run_runs(const RunsOptions& o, const Context& context) {
  const std::string dir = sys::runs_directory(o.runs_dir, context.env);
  if (o.show->parsed()) return show_run(o, dir);
  if (o.prune->parsed()) return prune(o, context, dir);
  if (o.explain->parsed()) return explain_run(o, context, dir);
  int limit = o.limit;
  if (o.old_limit) {
    log::warn("runs -n is deprecated (-n is ranks elsewhere): use --last {}", *o.old_limit);
    limit = *o.old_limit;
  }
  std::vector<ListedRun> runs = sys::list_runs(dir);
  const std::size_t total = runs.size();
  if (runs.size() > static_cast<std::size_t>(limit)) runs.resize(limit);
  say_where(dir, total, runs.size());
  std::fputs(runs_table(runs).c_str(), stdout);
  return 0;
}

}  // namespace ezpz
