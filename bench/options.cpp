#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "ezpz/core/env.hpp"
#include "setup.hpp"
#include "spawn.hpp"

namespace ezpz::bench {
namespace {

// A flag taking a count: where it goes and the least it may be.
struct CountFlag {
  std::string_view flag;
  std::string_view shown;  // the name an error gives
  int Options::*field;
  long least;
};
constexpr CountFlag k_count_flags[] = {
    {.flag = "--runs", .shown = "--runs", .field = &Options::runs, .least = 1},
    {.flag = "-n", .shown = "--runs", .field = &Options::runs, .least = 1},
    {.flag = "--warmup", .shown = "--warmup", .field = &Options::warmup, .least = 0},
    {.flag = "--reps", .shown = "--reps", .field = &Options::reps, .least = 1},
    {.flag = "--steps", .shown = "--steps", .field = &Options::steps, .least = 1},
    {.flag = "--step-warmup", .shown = "--step-warmup", .field = &Options::step_warmup, .least = 0},
};

struct TextFlag {
  std::string_view flag;
  std::string Options::*field;
};
constexpr TextFlag k_text_flags[] = {
    {.flag = "--bin-dir", .field = &Options::bin_dir},
    {.flag = "--mpiexec", .field = &Options::mpiexec},
    {.flag = "--csv", .field = &Options::csv},
    {.flag = "--python", .field = &Options::python},
    {.flag = "--bucket-mb", .field = &Options::bucket_mb},
    {.flag = "--ddp-script", .field = &Options::ddp_script},
};

struct SwitchFlag {
  std::string_view flag;
  bool Options::*field;
};
constexpr SwitchFlag k_switch_flags[] = {
    {.flag = "--keep-tmp", .field = &Options::keep_tmp},
    {.flag = "--commands", .field = &Options::show_commands},
};

void usage(FILE* out) {
  std::fprintf(
      out,
      "usage: ezpz-bench "
      "{launch_overhead|dry_run_scale|smoke_vs_ddp|first_step|training|doctor|all}\n"
      "                  [--runs N] [--warmup N] [--bin-dir DIR] [--mpiexec PATH] [--csv FILE]\n"
      "                  [--keep-tmp] [--commands] [--reps N] [--steps N] [--step-warmup N]\n"
      "                  [--python PATH] [--ddp-script PATH]\n"
      "  training     smoke_vs_ddp and first_step; all: every benchmark\n"
      "  --runs N     timed runs of each case, alternated case by case (default 200;\n"
      "               first_step: 15; doctor: 20)\n"
      "  --warmup N   untimed runs of each case first (default 5)\n"
      "  --bin-dir    directory holding ezpz and ezpz-rankenv (default: the build tree\n"
      "               this harness was built in, else the harness's own directory/..)\n"
      "  --mpiexec    the mpiexec to compare with, and the one ezpz runs (default:\n"
      "               mpiexec.hydra, else mpiexec, on %s)\n"
      "  --csv FILE   append every sample: group,case,run,ms,maxrss_kb\n"
      "  --keep-tmp   keep the scratch directory (nodefiles, written hostfiles)\n"
      "  --commands   print each case's exact command line and environment\n"
      "smoke_vs_ddp (ezpz-smoke against bench/python_ddp.py, 1 and 2 ranks, alternated):\n"
      "  --reps N         repetitions of every case (default 5)\n"
      "  --steps N        training steps per run (default 300)\n"
      "  --step-warmup N  steps left out of samples/s (default 20)\n"
      "  --python PATH    the Python with torch (default /usr/bin/python3)\n"
      "  --ddp-script P   the DDP script (default: bench/python_ddp.py of this source tree)\n"
      "  --rank-env N=V   set for every rank of both trainers (ezpz launch -x; repeatable)\n"
      "  --smoke-env N=V  set for ezpz-smoke's ranks only (an experiment; repeatable)\n"
      "  --bucket-mb MB   ezpz-smoke's gradient bucket size (0: one bucket after backward)\n",
      k_path);
}

int parse_count_flag(const CountFlag& flag, const char* text) {
  std::optional<long> value = parse_count(text);
  if (!value || *value < flag.least || *value > 1000000) {
    die(std::string(flag.shown) + ": expected a positive integer, got " + text);
  }
  return static_cast<int>(*value);
}

// Sets what `arg` names, taking its value with `value()`; false when it names no flag.
template <typename Value>
bool parse_flag(Options& o, std::string_view arg, const Value& value) {
  for (const CountFlag& f : k_count_flags) {
    if (arg != f.flag) continue;
    o.*f.field = parse_count_flag(f, value());
    return true;
  }
  for (const TextFlag& f : k_text_flags) {
    if (arg != f.flag) continue;
    o.*f.field = value();
    return true;
  }
  for (const SwitchFlag& f : k_switch_flags) {
    if (arg != f.flag) continue;
    o.*f.field = true;
    return true;
  }
  if (arg != "--rank-env" && arg != "--smoke-env") return false;
  std::string assignment = value();
  if (assignment.find('=') == std::string::npos) die(std::string(arg) + ": expected NAME=VALUE");
  (arg == "--rank-env" ? o.rank_env : o.smoke_env).push_back(assignment);
  return true;
}

}  // namespace

bool runs_launch(const Options& o) {
  return o.what == "launch_overhead" || o.what == "all";
}
bool runs_dry(const Options& o) {
  return o.what == "dry_run_scale" || o.what == "all";
}
bool runs_ddp(const Options& o) {
  return o.what == "smoke_vs_ddp" || o.what == "training" || o.what == "all";
}
bool runs_first_step(const Options& o) {
  return o.what == "first_step" || o.what == "training" || o.what == "all";
}
bool runs_doctor(const Options& o) {
  return o.what == "doctor" || o.what == "all";
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) die(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (parse_flag(o, arg, value)) {
      continue;
    } else if (o.what.empty() && !arg.starts_with('-')) {
      o.what = arg;
    } else {
      usage(stderr);
      die("unknown argument " + std::string(arg));
    }
  }
  if (!runs_launch(o) && !runs_dry(o) && !runs_ddp(o) && !runs_first_step(o) && !runs_doctor(o)) {
    usage(stderr);
    die("name a benchmark: launch_overhead, dry_run_scale, smoke_vs_ddp, first_step, training, "
        "doctor or all");
  }
  if (o.steps < o.step_warmup + 2) die("--steps must exceed --step-warmup by at least 2");
  return o;
}

}  // namespace ezpz::bench
