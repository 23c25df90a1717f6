// first_step: from spawning `ezpz test` to rank 0's "step 1/" line, against the same in
// Python under `ezpz launch` (issue 3; bench/README.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "benchmarks.hpp"
#include "training.hpp"

namespace ezpz::bench {
namespace {

// The numbers followed by " ms" in a line, in order:
// "ready 609 ms after start: libtorch loaded in 590 ms, rendezvous ... 6 ms" -> 609 590 6.
std::vector<double> ms_values(const std::string& text) {
  std::vector<double> values;
  for (std::size_t at = text.find(" ms"); at != std::string::npos; at = text.find(" ms", at + 3)) {
    std::size_t from = at;
    while (from > 0 &&
           (std::isdigit(static_cast<unsigned char>(text[from - 1])) || text[from - 1] == '.')) {
      --from;
    }
    if (from < at) values.push_back(std::stod(text.substr(from, at - from)));
  }
  return values;
}

struct StartRun {
  double first_step_line_ms = NAN;     // spawn -> rank 0's "step    1/" line, harness clock
  double trainer_first_step_ms = NAN;  // rank 0: its process start -> step 1 done, own clock
  double trainer_ready_ms = NAN;       // rank 0: process start -> ready to train
  double load_ms = NAN;                // libtorch's static init / `import torch`
  double setup_ms = NAN;               // rendezvous and process group
  double wall_ms = NAN;                // the whole command
};

StartRun run_start(Command& command, const std::string& dir, const std::string& label) {
  std::filesystem::remove_all(dir);
  StartRun r;
  Traced t = run_traced(command, [&](const Line& line, pid_t) {
    if (std::isnan(r.first_step_line_ms) && is_step_line(line.text, 1)) {
      r.first_step_line_ms = line.ms;
    }
    std::string text = line.text.substr(after_rank_prefix(line.text));
    std::vector<double> ms = ms_values(text);
    if (text.starts_with("first step done") && !ms.empty()) r.trainer_first_step_ms = ms[0];
    if (text.starts_with("ready ") && ms.size() >= 3) {
      r.trainer_ready_ms = ms[0];
      r.load_ms = ms[1];
      r.setup_ms = ms[2];
    }
  });
  r.wall_ms = t.wall_ms;
  if (!succeeded(t.status) || std::isnan(r.first_step_line_ms)) {
    std::string text;
    for (const Line& line : t.lines) text += line.text + "\n";
    die(label + ": " + shell_words(command.argv) + ": " + describe_status(t.status) + "\n" + text);
  }
  return r;
}

struct StartCase {
  std::string label;
  Command command;
  std::vector<StartRun> runs;
};

std::vector<StartCase> start_cases(const Setup& s, const std::string& dir) {
  return {
      {"ezpz test -n 2 --model debug",
       {{s.ezpz, "test", "-n", "2", "--model", "debug", "--output-dir", dir}, base_env(s)},
       {}},
      {"python_ddp.py (same) via ezpz launch -n 2",
       {concat({s.ezpz, "launch", "-n", "2", "--", s.python, s.ddp_script},
               concat(model_flags("128,64", 16, 20, 5), {"--output-dir", dir})),
        base_env(s)},
       {}},
  };
}

// Untimed runs first (page cache, profile cache, a working command), then `runs` rounds.
void measure(std::vector<StartCase>& cases, const Options& o, int runs, const std::string& dir) {
  for (StartCase& c : cases) {
    for (int i = 0; i < std::max(1, o.warmup / 5); ++i) run_start(c.command, dir, c.label);
  }
  std::fprintf(stderr, "first_step: %d runs x %zu cases ", runs, cases.size());
  for (int run = 0; run < runs; ++run) {
    for (StartCase& c : cases) c.runs.push_back(run_start(c.command, dir, c.label));
    std::fputc('.', stderr);
  }
  std::fputs(" done\n", stderr);
}

// One row: median, p10, p90, min and max of the values measured (NaN: not measured).
void print_row(const std::string& label, const std::vector<double>& v, const std::string& target,
               FILE* out) {
  std::vector<double> kept;
  for (double x : v) {
    if (!std::isnan(x)) kept.push_back(x);
  }
  if (kept.empty()) return;
  std::fprintf(out, "%-58s %9s %9s %9s %9s %9s  %s\n", label.c_str(),
               fixed(percentile(kept, 0.5), 1).c_str(), fixed(percentile(kept, 0.1), 1).c_str(),
               fixed(percentile(kept, 0.9), 1).c_str(),
               fixed(*std::min_element(kept.begin(), kept.end()), 1).c_str(),
               fixed(*std::max_element(kept.begin(), kept.end()), 1).c_str(), target.c_str());
}

// `field` of every run, or `to` minus `from`.
std::vector<double> pick(const StartCase& c, double StartRun::*field) {
  std::vector<double> v;
  for (const StartRun& r : c.runs) v.push_back(r.*field);
  return v;
}
std::vector<double> between(const StartCase& c, double StartRun::*from, double StartRun::*to) {
  std::vector<double> v;
  for (const StartRun& r : c.runs) v.push_back(r.*to - r.*from);
  return v;
}

// The case's rows; the first case (`ezpz test`) carries the target, into `outcome`.
void print_case(const StartCase& c, bool with_target, TrainOutcome& outcome, FILE* out) {
  std::vector<double> line = pick(c, &StartRun::first_step_line_ms);
  std::string target;
  if (with_target) {
    double median = percentile(line, 0.5);
    bool ok = median <= 1500;
    target = std::string("median<=1500ms ") + (ok ? "ok" : "MISSED");
    outcome.verdict.met = ok;
    outcome.verdict.lines.push_back("first_step / " + c.label + ": median " + fixed(median, 1) +
                                    " ms -> " + target);
  }
  print_row(c.label + ": spawn -> \"step 1/\" line", line, target, out);
  print_row("  before rank 0's process started (launch path)",
            between(c, &StartRun::trainer_first_step_ms, &StartRun::first_step_line_ms), "", out);
  print_row("  rank 0 start -> step 1 done (its own clock)",
            pick(c, &StartRun::trainer_first_step_ms), "", out);
  print_row(with_target ? "    libtorch loaded (before main)" : "    import torch",
            pick(c, &StartRun::load_ms), "", out);
  print_row(with_target ? "    rendezvous and process group" : "    init_process_group",
            pick(c, &StartRun::setup_ms), "", out);
  print_row("    model, first step",
            between(c, &StartRun::trainer_ready_ms, &StartRun::trainer_first_step_ms), "", out);
  print_row("  whole command, spawn -> exit", pick(c, &StartRun::wall_ms), "", out);
}

void append_csv_lines(const StartCase& c, std::vector<std::string>& csv) {
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const StartRun& r = c.runs[i];
    csv.push_back("first_step,\"" + c.label + "\"," + std::to_string(i) + "," +
                  fixed(r.first_step_line_ms, 3) + "," + fixed(r.trainer_first_step_ms, 1) + "," +
                  fixed(r.load_ms, 1) + "," + fixed(r.setup_ms, 1) + "," + fixed(r.wall_ms, 3));
  }
}

}  // namespace

TrainOutcome first_step(const Setup& s, const Options& o) {
  const int runs = o.runs_or(15);
  std::string dir = s.scratch + "/first-step";
  std::vector<StartCase> cases = start_cases(s, dir);
  measure(cases, o, runs, dir);

  TrainOutcome outcome;
  FILE* out = stdout;
  std::fprintf(out,
               "\n== first_step: from spawning the command to rank 0's \"step 1/\" line arriving "
               "on the harness's pipe\n"
               "   2 local ranks, model 784-128-64-10, batch 16 per rank, 20 steps; %d runs, "
               "alternated\n",
               runs);
  std::fprintf(out, "%-58s %9s %9s %9s %9s %9s  %s\n", "case", "median", "p10", "p90", "min", "max",
               "target");
  std::fprintf(out, "%-58s %9s %9s %9s %9s %9s\n", "", "ms", "ms", "ms", "ms", "ms");
  for (std::size_t k = 0; k < cases.size(); ++k) {
    print_case(cases[k], k == 0, outcome, out);
    append_csv_lines(cases[k], outcome.csv);
  }
  std::fprintf(out,
               "  launch path: the line's arrival minus rank 0's own \"first step done N ms after "
               "start\" (its start\n"
               "  from /proc/<pid>/stat, 10 ms ticks): ezpz, mpiexec, hydra_pmi_proxy, the shim "
               "and the line's way back.\n"
               "  rank 0's own phases are from its \"ready ...\" log line.\n");
  std::fprintf(out, "  commands (env -i %s):\n", shell_words(base_env(s)).c_str());
  for (const StartCase& c : cases) {
    std::fprintf(out, "    $ %s\n", shell_words(c.command.argv).c_str());
  }
  return outcome;
}

}  // namespace ezpz::bench
