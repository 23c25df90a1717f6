// smoke_vs_ddp: ezpz-smoke against the same training in Python with PyTorch DDP
// (bench/python_ddp.py), 1 and 2 ranks, alternated (issue 3; bench/README.md).
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "benchmarks.hpp"
#include "training.hpp"

namespace ezpz::bench {
namespace {

namespace fs = std::filesystem;

// ---- What the ranks really run on (/proc) ----

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Every process below `root`, found through /proc/<pid>/stat's parent field.
std::vector<pid_t> descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::string stat = read_first_line(entry.path().string() + "/stat");
    auto paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));
    std::string state;
    pid_t parent = 0;
    if (fields >> state >> parent) children.emplace(parent, std::stoi(name));
  }
  std::vector<pid_t> found;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    auto [from, to] = children.equal_range(p);
    for (auto it = from; it != to; ++it) {
      found.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return found;
}

// The ranks (processes named `comm_prefix`) below `root`: how many threads each
// has and which BLAS, LAPACK and OpenMP libraries they have mapped, as in
// "2 x ezpz-smoke, threads 7 7; maps libopenblasp-r0.3.21.so (/usr/lib/...), ...".
std::string describe_ranks(pid_t root, const std::string& comm_prefix) {
  std::vector<std::string> threads;
  std::vector<std::string> libraries;
  std::string comm;
  for (pid_t pid : descendants(root)) {
    std::string dir = "/proc/" + std::to_string(pid);
    std::string name = read_first_line(dir + "/comm");
    if (!name.starts_with(comm_prefix)) continue;
    comm = name;
    std::error_code error;
    long tasks = std::distance(fs::directory_iterator(dir + "/task", error), {});
    threads.push_back(std::to_string(tasks));
    std::ifstream maps(dir + "/maps");
    for (std::string line; std::getline(maps, line);) {
      auto slash = line.find('/');
      if (slash == std::string::npos) continue;
      std::string path = line.substr(slash);
      std::string base = fs::path(path).filename().string();
      bool wanted = base.find("blas") != std::string::npos ||
                    base.find("lapack") != std::string::npos ||
                    base.find("gomp") != std::string::npos || base.find("mkl") != std::string::npos;
      if (wanted && std::find(libraries.begin(), libraries.end(), path) == libraries.end()) {
        libraries.push_back(path);
      }
    }
  }
  if (threads.empty()) return "(no " + comm_prefix + " process found)";
  std::string text = std::to_string(threads.size()) + " x " + comm + ", threads";
  for (const std::string& t : threads) text += " " + t;
  text += "; maps";
  for (std::size_t i = 0; i < libraries.size(); ++i) text += (i ? ", " : " ") + libraries[i];
  return text;
}

// ---- Reading what the trainers wrote ----

// `key`'s number in one flat JSON object ({"a":1,"b": 2.5}); NaN when absent or null.
double json_number(const std::string& object, const std::string& key) {
  std::string quoted = "\"" + key + "\"";
  auto at = object.find(quoted);
  if (at == std::string::npos) return NAN;
  at = object.find(':', at + quoted.size());
  if (at == std::string::npos) return NAN;
  const char* text = object.c_str() + at + 1;
  while (*text == ' ') ++text;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  return end == text ? NAN : value;
}

std::string json_string(const std::string& object, const std::string& key) {
  std::string quoted = "\"" + key + "\"";
  auto at = object.find(quoted);
  if (at == std::string::npos) return "";
  at = object.find('"', object.find(':', at + quoted.size()));
  if (at == std::string::npos) return "";
  auto end = object.find('"', at + 1);
  return end == std::string::npos ? "" : object.substr(at + 1, end - at - 1);
}

// One step's timings as ezpz-smoke records them (report::step_json), in ms.
constexpr const char* k_phases[] = {"step_s",     "data_s",      "forward_s",
                                    "backward_s", "allreduce_s", "optimizer_s"};
constexpr std::size_t k_phase_count = std::size(k_phases);

struct TrainRun {
  double samples_per_s = NAN;           // mean over the steps after warm-up (metrics.jsonl)
  double summary_samples_per_s = NAN;   // what the trainer itself reported (summary.json)
  double phase_ms[k_phase_count] = {};  // means over the same steps; NaN: not measured apart
  double wall_s = 0;                    // the whole `ezpz launch`, start-up included
  int steps_counted = 0;
  std::string checks;  // ezpz-smoke's verdict from summary.json
};

// Reads rank 0's metrics.jsonl and summary.json in `dir`: samples/s is the mean
// of the per-step samples/s over the steps after `warmup`, as ezpz-smoke
// computes it (trainer.cpp mean_samples_per_s, report::summarize).
TrainRun read_train_run(const std::string& dir, int warmup) {
  TrainRun r;
  std::ifstream metrics(dir + "/metrics.jsonl");
  double sums[k_phase_count] = {};
  double rate_sum = 0;
  for (std::string line; std::getline(metrics, line);) {
    if (json_number(line, "step") <= warmup) continue;
    rate_sum += json_number(line, "samples_per_s");
    for (std::size_t i = 0; i < k_phase_count; ++i) sums[i] += json_number(line, k_phases[i]);
    ++r.steps_counted;
  }
  if (r.steps_counted > 0) {
    r.samples_per_s = rate_sum / r.steps_counted;
    for (std::size_t i = 0; i < k_phase_count; ++i) r.phase_ms[i] = sums[i] * 1e3 / r.steps_counted;
  }
  std::string summary = read_file(dir + "/summary.json");
  r.summary_samples_per_s = json_number(summary, "samples_per_s");
  std::string status = json_string(summary, "status");
  std::string reason = json_string(summary, "reason");
  r.checks = status + (reason.empty() ? "" : " (" + reason + ")");
  return r;
}

// ---- The runs ----

struct TrainCase {
  TrainCase(std::string label_, int ranks_, bool smoke_)
      : label(std::move(label_)), ranks(ranks_), smoke(smoke_) {}
  std::string label;
  int ranks = 1;
  bool smoke = true;  // else python_ddp.py
  std::vector<TrainRun> runs;
  std::string ranks_seen;  // describe_ranks() on the first timed run
  std::set<std::string> checks;
};

// `ezpz launch -n N -- <trainer> <the same flags>`, writing into `dir`.
Command train_command(const Setup& s, const Options& o, const TrainCase& c, int steps, int warmup,
                      const std::string& dir) {
  std::vector<std::string> argv = {s.ezpz, "launch", "-n", std::to_string(c.ranks)};
  for (const std::string& e : o.rank_env) argv = concat(argv, {"-x", e});
  if (c.smoke) {
    for (const std::string& e : o.smoke_env) argv = concat(argv, {"-x", e});
  }
  argv.push_back("--");
  if (c.smoke) {
    // The collectives sweep is no training: left out, so that wall times compare.
    argv = concat(argv, {s.smoke, "--dtype", "fp32", "--no-collectives"});
    if (!o.bucket_mb.empty()) argv = concat(argv, {"--bucket-mb", o.bucket_mb});
  } else {
    argv = concat(argv, {s.python, s.ddp_script});
  }
  argv = concat(argv, model_flags("512,256,128", 128, steps, warmup));
  argv = concat(argv, {"--output-dir", dir});
  return {argv, base_env(s)};
}

// One job; dies unless it trained (ezpz-smoke may exit 1 when a check fails:
// the timings are still real, and the verdict is reported beside them).
TrainRun run_training(const Setup& s, const Options& o, TrainCase& c, int steps, int warmup,
                      const std::string& dir, bool look) {
  std::filesystem::remove_all(dir);
  Command command = train_command(s, o, c, steps, warmup, dir);
  std::string comm = c.smoke ? "ezpz-smoke" : "python";
  Traced t = run_traced(command, [&](const Line& line, pid_t pid) {
    if (look && c.ranks_seen.empty() && is_step_line(line.text, 2)) {
      c.ranks_seen = describe_ranks(pid, comm);
    }
  });
  TrainRun r = read_train_run(dir, warmup);
  bool exited = WIFEXITED(t.status);
  int code = exited ? WEXITSTATUS(t.status) : -1;
  if (!exited || (code != 0 && !(c.smoke && code == 1)) || r.steps_counted == 0) {
    std::string tail;
    for (std::size_t i = t.lines.size() > 30 ? t.lines.size() - 30 : 0; i < t.lines.size(); ++i) {
      tail += t.lines[i].text + "\n";
    }
    die(c.label + ": " + shell_words(command.argv) + ": " + describe_status(t.status) + ", " +
        std::to_string(r.steps_counted) + " steps recorded\n" + tail);
  }
  r.wall_s = t.wall_ms / 1e3;
  return r;
}

std::vector<double> values_of(const TrainCase& c, const std::function<double(const TrainRun&)>& f) {
  std::vector<double> v;
  for (const TrainRun& r : c.runs) v.push_back(f(r));
  return v;
}

double median_of(const std::vector<double>& v) {
  return percentile(v, 0.5);
}

// One short untimed run of each case (libtorch and Python's torch into the page cache,
// and a check that every case works before minutes are spent), then the reps.
void measure(const Setup& s, const Options& o, std::vector<TrainCase>& cases) {
  std::string scratch = s.scratch + "/train";
  for (TrainCase& c : cases) {
    run_training(s, o, c, o.step_warmup + 2, o.step_warmup, scratch, false);
  }
  std::fprintf(stderr, "smoke_vs_ddp: %d reps x %zu cases x %d steps ", o.reps, cases.size(),
               o.steps);
  for (int rep = 0; rep < o.reps; ++rep) {
    for (TrainCase& c : cases) {
      TrainRun r = run_training(s, o, c, o.steps, o.step_warmup, scratch, rep == 0);
      if (c.smoke) c.checks.insert(r.checks);
      c.runs.push_back(r);
      std::fputc('.', stderr);
    }
  }
  std::fputs(" done\n", stderr);
}

// ---- The table ----

// Median samples/s by (ezpz-smoke?, ranks).
using Medians = std::map<std::pair<bool, int>, double>;

void print_heading(const Options& o, FILE* out) {
  std::fprintf(out,
               "\n== smoke_vs_ddp: ezpz-smoke vs PyTorch DDP (bench/python_ddp.py), both under "
               "`ezpz launch -n N`\n"
               "   784-512-256-128-10 MLP, batch 128 per rank, Adam lr 1e-3, fp32, 1 thread per "
               "rank, synthetic data,\n"
               "   %d steps (samples/s over steps %d-%d), %d reps, alternated (A B A B per rep)\n",
               o.steps, o.step_warmup + 1, o.steps, o.reps);
  if (!o.rank_env.empty()) {
    std::fprintf(out, "   every rank of both: %s\n", shell_words(o.rank_env).c_str());
  }
  if (!o.smoke_env.empty()) {
    std::fprintf(out, "   ezpz-smoke's ranks only (--smoke-env): %s\n",
                 shell_words(o.smoke_env).c_str());
  }
  std::fprintf(out, "   ezpz-smoke's gradient buckets: --bucket-mb %s\n",
               o.bucket_mb.empty() ? "default (25)" : o.bucket_mb.c_str());
  std::fprintf(out, "%-12s %5s %10s %10s %10s %8s %7s %7s %7s %7s %7s %7s\n", "case", "ranks",
               "samples/s", "min", "max", "step", "data", "fwd", "bwd", "allred", "opt", "wall");
  std::fprintf(out, "%-12s %5s %10s %10s %10s %8s %7s %7s %7s %7s %7s %7s\n", "", "", "median", "",
               "", "ms", "ms", "ms", "ms", "ms", "ms", "s");
}

// The case's row; returns its median samples/s.
double print_row(const TrainCase& c, FILE* out) {
  std::vector<double> rates = values_of(c, [](const TrainRun& r) { return r.samples_per_s; });
  double median = median_of(rates);
  double phases[k_phase_count];
  for (std::size_t i = 0; i < k_phase_count; ++i) {
    phases[i] = median_of(values_of(c, [i](const TrainRun& r) { return r.phase_ms[i]; }));
  }
  auto cell = [](double v, int decimals) {
    return std::isnan(v) ? std::string("(bwd)") : fixed(v, decimals);
  };
  std::fprintf(
      out, "%-12s %5d %10s %10s %10s %8s %7s %7s %7s %7s %7s %7s\n", c.label.c_str(), c.ranks,
      fixed(median, 0).c_str(), fixed(*std::min_element(rates.begin(), rates.end()), 0).c_str(),
      fixed(*std::max_element(rates.begin(), rates.end()), 0).c_str(), fixed(phases[0], 3).c_str(),
      cell(phases[1], 3).c_str(), cell(phases[2], 3).c_str(), cell(phases[3], 3).c_str(),
      cell(phases[4], 3).c_str(), cell(phases[5], 3).c_str(),
      fixed(median_of(values_of(c, [](const TrainRun& r) { return r.wall_s; })), 2).c_str());
  return median;
}

// One CSV line per run of `c`.
void append_csv_lines(const TrainCase& c, std::vector<std::string>& csv) {
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const TrainRun& r = c.runs[i];
    std::string line = "smoke_vs_ddp,\"" + c.label + " n=" + std::to_string(c.ranks) + "\"," +
                       std::to_string(i) + "," + fixed(r.samples_per_s, 1);
    for (double p : r.phase_ms) {
      line += ',';
      if (!std::isnan(p)) line += fixed(p, 4);
    }
    csv.push_back(line + "," + fixed(r.wall_s, 3));
  }
}

void print_per_rep(const std::vector<TrainCase>& cases, FILE* out) {
  std::fprintf(out,
               "  samples/s: global samples per second, the mean of batch x ranks / step time "
               "over the counted steps\n"
               "  (rank 0), then the median over reps; phases: means over the same steps, median "
               "over reps. python's\n"
               "  gradient all-reduce runs inside backward (DDP hooks) and is counted there; "
               "ezpz-smoke's allred is the\n"
               "  wait after backward. wall: the whole `ezpz launch`, start-up and logging "
               "included.\n");
  for (const TrainCase& c : cases) {
    std::fprintf(out, "  samples/s per rep, %s n=%d:", c.label.c_str(), c.ranks);
    for (const TrainRun& r : c.runs) std::fprintf(out, " %.0f", r.samples_per_s);
    std::fprintf(out, "\n");
  }
}

// The 2-rank ratio against its target (returned: whether met), and the scaling.
bool print_ratios(const std::vector<TrainCase>& cases, Medians& medians, FILE* out) {
  // Per-rep ratios: each pair ran back to back.
  std::vector<double> paired;
  for (std::size_t i = 0; i < cases[2].runs.size() && i < cases[3].runs.size(); ++i) {
    paired.push_back(cases[2].runs[i].samples_per_s / cases[3].runs[i].samples_per_s);
  }
  double ratio = medians[{true, 2}] / medians[{false, 2}];
  auto efficiency = [&](bool smoke) { return medians[{smoke, 2}] / (2 * medians[{smoke, 1}]); };
  bool scales = efficiency(true) >= efficiency(false);
  bool ok = ratio >= 1.3 && scales;
  std::fprintf(out, "\n  2 ranks, ezpz-smoke / python DDP: %.2fx (medians); per rep ", ratio);
  for (double p : paired) std::fprintf(out, "%.2f ", p);
  std::fprintf(out, "(median %.2fx)   target >= 1.30x: %s\n", median_of(paired),
               ratio >= 1.3 ? "ok" : "MISSED");
  std::fprintf(out,
               "  scaling efficiency 1 -> 2 ranks, throughput(2) / (2 x throughput(1)): "
               "ezpz-smoke %.2f, python DDP %.2f   target >= DDP's: %s\n",
               efficiency(true), efficiency(false), scales ? "ok" : "MISSED");
  std::fprintf(out, "  1 rank, ezpz-smoke / python DDP: %.2fx\n",
               medians[{true, 1}] / medians[{false, 1}]);
  return ok;
}

// What the ranks ran on, ezpz-smoke's checks, and the commands.
void print_notes(const Setup& s, const Options& o, const std::vector<TrainCase>& cases, FILE* out) {
  for (const TrainCase& c : cases) {
    std::fprintf(out, "  ranks of %s n=%d: %s\n", c.label.c_str(), c.ranks, c.ranks_seen.c_str());
  }
  for (const TrainCase& c : cases) {
    if (!c.smoke) continue;
    for (const std::string& check : c.checks) {
      std::fprintf(out, "  ezpz-smoke n=%d checks: %s\n", c.ranks, check.c_str());
    }
  }
  // The trainer's own figure must be the one computed here from its metrics.
  for (const TrainCase& c : cases) {
    for (const TrainRun& r : c.runs) {
      if (std::abs(r.summary_samples_per_s / r.samples_per_s - 1) > 1e-3) {
        std::fprintf(out, "  note: %s n=%d reported %.1f samples/s, its metrics give %.1f\n",
                     c.label.c_str(), c.ranks, r.summary_samples_per_s, r.samples_per_s);
      }
    }
  }
  std::fprintf(out, "  commands (env -i %s):\n", shell_words(base_env(s)).c_str());
  for (const TrainCase& c : cases) {
    std::fprintf(out, "    $ %s\n",
                 shell_words(train_command(s, o, c, o.steps, o.step_warmup, "<dir>").argv).c_str());
  }
}

}  // namespace

TrainOutcome smoke_vs_ddp(const Setup& s, const Options& o) {
  std::vector<TrainCase> cases = {{"ezpz-smoke", 1, true},
                                  {"python DDP", 1, false},
                                  {"ezpz-smoke", 2, true},
                                  {"python DDP", 2, false}};
  measure(s, o, cases);
  TrainOutcome outcome;
  FILE* out = stdout;
  print_heading(o, out);
  Medians medians;
  for (const TrainCase& c : cases) {
    medians[{c.smoke, c.ranks}] = print_row(c, out);
    append_csv_lines(c, outcome.csv);
  }
  print_per_rep(cases, out);
  bool ok = print_ratios(cases, medians, out);
  double ratio = medians[{true, 2}] / medians[{false, 2}];
  print_notes(s, o, cases, out);
  outcome.verdict.met = ok;
  outcome.verdict.lines.push_back(
      "smoke_vs_ddp / 2 ranks: ezpz-smoke " + fixed(medians[{true, 2}], 0) +
      " samples/s, python DDP " + fixed(medians[{false, 2}], 0) + " -> " + fixed(ratio, 2) +
      "x, target >= 1.3x and scaling >= DDP's " + (ok ? "ok" : "MISSED"));
  return outcome;
}

}  // namespace ezpz::bench
