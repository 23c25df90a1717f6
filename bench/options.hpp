#pragma once
// ezpz-bench's command line: which benchmark, and how many runs of it.
#include <string>
#include <vector>

namespace ezpz::bench {

struct Options {
  std::string what;
  int runs = 0;  // 0: each benchmark's own default (runs_or)
  int warmup = 5;
  std::string bin_dir;
  std::string mpiexec;
  std::string csv;
  bool keep_tmp = false;
  bool show_commands = false;
  // smoke_vs_ddp and first_step
  int reps = 5;
  int steps = 300;
  int step_warmup = 20;
  std::string python = "/usr/bin/python3";  // Debian's, where python3-torch lives
  std::string ddp_script;
  std::vector<std::string> rank_env;   // NAME=VALUE for every rank of both trainers
  std::vector<std::string> smoke_env;  // NAME=VALUE for ezpz-smoke's ranks only
  std::string bucket_mb;               // ezpz-smoke's --bucket-mb; empty: its default

  int runs_or(int fallback) const { return runs > 0 ? runs : fallback; }
};

// Whether `o.what` includes each benchmark.
bool runs_launch(const Options& o);
bool runs_dry(const Options& o);
bool runs_ddp(const Options& o);
bool runs_first_step(const Options& o);
bool runs_doctor(const Options& o);

// The options, or the usage on stdout and exit 0 (--help), or die() naming what is wrong.
Options parse_options(int argc, char** argv);

}  // namespace ezpz::bench
