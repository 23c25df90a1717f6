// `ezpz yeet`: stage a directory or tarball to node-local storage on every
// node. ezpz plans the bundled MPI stager, one rank per node, through the
// launch planner (so --nhosts, --exclude, --hostfile, --dry-run work as for
// launch); the stager reads the source once and broadcasts it.
#include "cmd_yeet.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "bundled.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/stage/yeet.hpp"
#include "ezpz/supervise/kill.hpp"
#include "ezpz/sys/paths.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz {

CLI::App* setup_yeet(CLI::App& app, YeetOptions& o, GlobalOptions& globals) {
  o.globals = &globals;
  CLI::App* cmd = app.add_subcommand(
      "yeet", "Copy an environment (directory or tarball) to node-local disk on every node");
  add_verbosity_flags(*cmd, globals);
  cmd->add_option("SRC", o.source, "Directory or tarball (default: $VIRTUAL_ENV, $CONDA_PREFIX)");
  cmd->add_option("--src", o.source_flag, "Same as SRC")->type_name("PATH");
  cmd->add_option("--dst", o.destination,
                  "Where the copy goes on each node (default: /tmp/<name>); {host} and {index} "
                  "become the node's name and index")
      ->type_name("DIR");
  cmd->add_flag("--force", o.force,
                "Copy again where DST is already an up-to-date copy (only ever replaces copies "
                "ezpz yeet made)");
  cmd->add_flag("--keep-setuid", o.keep_setuid,
                "Keep setuid/setgid bits on the copy (default: dropped)");
  cmd->add_flag(
      "--checksum", o.checksum,
      "Decide 'up to date' from file contents, not sizes and times (reads the source twice)");
  cmd->add_option("--min-success", o.min_success,
                  "Succeed when N nodes (or FRACTION of them) hold the copy (default: all)")
      ->type_name("N|FRACTION");
  cmd->add_option("--failed-file", o.failed_file,
                  "Where failed nodes are listed, for ezpz launch --exclude-file (default: "
                  "$EZPZ_RUN_DIR/yeet-failed-nodes-<job>.txt, else in ~/.cache/ezpz/yeet)")
      ->type_name("FILE");
  cmd->add_option("--chunk-size", o.chunk_size, "Broadcast chunk (default 4MiB)")
      ->type_name("BYTES")
      ->transform(CLI::AsSizeValue(false));
  cmd->add_option("--bwlimit", o.bwlimit,
                  "Read the source at most this fast, per second (default: no limit)")
      ->type_name("BYTES")
      ->transform(CLI::AsSizeValue(false));
  add_plan_options(*cmd, o.plan, /*rank_options=*/false);
  cmd->footer(
      "Examples:\n"
      "  ezpz yeet                                  # the active venv to /tmp/<name> on every "
      "node\n"
      "  ezpz yeet /lus/proj/envs/torch.tar.gz --dst /tmp/torch\n"
      "  ezpz yeet --min-success 0.99 --exclude x4102c5s2b0n0\n"
      "  ezpz yeet --dry-run\n"
      "A re-run with an unchanged source transfers nothing; a changed source replaces the copy\n"
      "atomically. ezpz only deletes what it made.");
  return cmd;
}

namespace {

std::string choose_source(const YeetOptions& o, const Context& context) {
  if (o.source && o.source_flag) throw Error("--src and SRC are mutually exclusive; pick one");
  std::optional<std::string> source = o.source ? o.source : o.source_flag;
  if (!source) source = yeet::default_source(context.env);
  if (!source) {
    throw Error(
        "nothing to stage: give SRC, or activate the environment (VIRTUAL_ENV or CONDA_PREFIX)");
  }
  std::string path = source->front() == '/' ? *source : sys::current_directory() + "/" + *source;
  switch (sys::path_kind(path)) {
    case sys::PathKind::directory:
      return path;
    case sys::PathKind::file:
      if (yeet::is_tarball_name(path)) return path;
      throw Error(
          fmt::format("{}: not a directory or a tarball (.tar, .tar.gz, .tgz, .tar.zst, "
                      ".tar.xz, .tar.bz2)",
                      *source));
    case sys::PathKind::missing:
      break;
  }
  throw Error(fmt::format("{}: no such file or directory", *source));
}

// DST, normal, checked as this host sees it (each node's stager checks again,
// with {host} filled in). What exists is resolved: a symlink or bind mount
// cannot hide that DST is the source, inside it, or holds it.
std::string choose_destination(const YeetOptions& o, const std::string& source) {
  std::string given = o.destination.value_or(yeet::default_destination(source));
  std::string destination = yeet::normal_destination(given);
  bool absolute = !destination.empty() && destination.front() == '/';
  yeet::ResolvedPath resolved = absolute ? sys::resolve_path(destination, /*follow_last=*/false)
                                         : yeet::ResolvedPath{destination, {}, false};
  if (auto problem = yeet::destination_problem(
          destination, resolved, sys::resolve_path(source, /*follow_last=*/true), source)) {
    throw Error(fmt::format("--dst {}: {}", yeet::destination_label(given, destination), *problem));
  }
  return destination;
}

std::string progress_mode(const YeetOptions& o) {
  if (o.globals && o.globals->quiet) return "none";
  return ::isatty(STDERR_FILENO) ? "tty" : "lines";
}

// Named by the job as `ezpz kill` reads it: the allocation is not planned yet.
std::string failed_file(const YeetOptions& o, const Context& context) {
  if (o.failed_file) {
    return o.failed_file->empty() || o.failed_file->front() == '/'
               ? *o.failed_file
               : sys::current_directory() + "/" + *o.failed_file;
  }
  const std::string job_id =
      kill::job_id_of([&](std::string_view name) { return get_nonempty(context.env, name); });
  if (auto path = yeet::default_failed_file(context.env, job_id)) return *path;
  // No EZPZ_RUN_DIR or HOME (cron, some batch systems): beside the run records, in the working
  // directory, never a shared /tmp name another user could have linked elsewhere.
  return yeet::default_failed_file({{"EZPZ_RUN_DIR", sys::current_directory() + "/.ezpz"}}, job_id)
      .value();
}

std::vector<std::string> stager_command(const YeetOptions& o, const Context& context,
                                        const std::string& source, const std::string& destination) {
  std::vector<std::string> argv = {
      find_bundled_program(context, "ezpz-stager",
                           "build it with MPI and libarchive (cmake -DEZPZ_WITH_STAGER=ON)"),
      "--source",
      source,
      "--dst",
      destination,
      "--progress",
      progress_mode(o)};
  if (o.force) argv.push_back("--force");
  if (o.keep_setuid) argv.push_back("--keep-setuid");
  if (o.checksum) argv.push_back("--checksum");
  if (o.min_success) {
    yeet::parse_min_success(
        *o.min_success);  // a bad value is a usage error here, not on every node
    argv.insert(argv.end(), {"--min-success", *o.min_success});
  }
  argv.insert(argv.end(), {"--failed-file", failed_file(o, context)});
  if (o.chunk_size != (4u << 20))
    argv.insert(argv.end(), {"--chunk-size", std::to_string(o.chunk_size)});
  if (o.bwlimit > 0) argv.insert(argv.end(), {"--bwlimit", std::to_string(o.bwlimit)});
  return argv;
}

}  // namespace

int run_yeet(const YeetOptions& options, const Context& context) {
  YeetOptions o = options;
  plan_one_rank_per_host(o.plan);
  std::string source = choose_source(o, context);
  std::string destination = choose_destination(o, source);
  std::vector<std::string> command = stager_command(o, context, source, destination);
  PreparedLaunch prepared = prepare_launch(o.plan, command, context);
  if (o.plan.dry_run) return print_plan(o.plan, prepared);
  int status = run_plan(prepared, context);
  if (status == 0 || status == 1 || status == 2) return status;  // the stager cleaned up itself
  // A rank was killed: its staging directory is still there. Each node's
  // stager removes what dead runs on that node left, then exits.
  command.push_back("--cleanup");
  PreparedLaunch cleanup = prepare_launch(o.plan, command, context);
  run_plan(cleanup, context);
  return status;
}

}  // namespace ezpz
