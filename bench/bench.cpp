// ezpz-bench: wall-clock benchmarks of the ezpz binary against baselines, run
// side by side in one invocation. Every timed command is started with
// posix_spawn() in an environment built here (nothing leaks from the caller's
// shell), reaped with wait4() (its rusage gives the peak RSS), and timed with
// steady_clock around spawn + wait. The cases of a group are alternated run by
// run (A, B, C, A, B, C, ...), so that drift (CPU frequency, page cache, other
// load) hits every case alike. Nothing here asserts: it prints for humans.
//
//   ezpz-bench launch_overhead [options]
//   ezpz-bench dry_run_scale   [options]
//   ezpz-bench all             [options]
//
//   ezpz-bench smoke_vs_ddp    [options]   ezpz-smoke against PyTorch DDP (issue 3)
//   ezpz-bench first_step      [options]   `ezpz test` start to the first step
//   ezpz-bench training        [options]   both of those
//   ezpz-bench doctor          [options]   `ezpz doctor` against importing torch (issue 6)
//
// Options: --runs N (200; first_step 15)  --warmup N (5)  --bin-dir DIR (where
// ezpz, ezpz-rankenv and ezpz-smoke are)  --mpiexec PATH  --csv FILE (every
// sample)  --keep-tmp  --commands (print every case's command line)
// smoke_vs_ddp: --reps N (5)  --steps N (300)  --step-warmup N (20)
// --python PATH (/usr/bin/python3)  --ddp-script PATH (bench/python_ddp.py)
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef EZPZ_BENCH_BIN_DIR
#define EZPZ_BENCH_BIN_DIR ""
#endif
#ifndef EZPZ_BENCH_SOURCE_DIR
#define EZPZ_BENCH_SOURCE_DIR ""
#endif

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* k_path = "/usr/local/bin:/usr/bin:/bin";

// The scratch directory, removed on the way out unless --keep-tmp.
std::string g_scratch;

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "ezpz-bench: %s\n", message.c_str());
  if (!g_scratch.empty()) {
    std::error_code error;
    std::filesystem::remove_all(g_scratch, error);
  }
  std::exit(2);
}

// ---- Options ---------------------------------------------------------------

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

  int runs_or(int fallback) const { return runs > 0 ? runs : fallback; }
};

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
      "  --smoke-env N=V  set for ezpz-smoke's ranks only (an experiment; repeatable)\n",
      k_path);
}

int parse_int(const char* flag, const char* text) {
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > 1000000) {
    die(std::string(flag) + ": expected a positive integer, got " + text);
  }
  return static_cast<int>(value);
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
    } else if (arg == "--runs" || arg == "-n") {
      o.runs = parse_int("--runs", value());
    } else if (arg == "--warmup") {
      const char* text = value();
      o.warmup = std::string_view(text) == "0" ? 0 : parse_int("--warmup", text);
    } else if (arg == "--bin-dir") {
      o.bin_dir = value();
    } else if (arg == "--mpiexec") {
      o.mpiexec = value();
    } else if (arg == "--csv") {
      o.csv = value();
    } else if (arg == "--keep-tmp") {
      o.keep_tmp = true;
    } else if (arg == "--commands") {
      o.show_commands = true;
    } else if (arg == "--reps") {
      o.reps = parse_int("--reps", value());
    } else if (arg == "--steps") {
      o.steps = parse_int("--steps", value());
    } else if (arg == "--step-warmup") {
      const char* text = value();
      o.step_warmup = std::string_view(text) == "0" ? 0 : parse_int("--step-warmup", text);
    } else if (arg == "--python") {
      o.python = value();
    } else if (arg == "--ddp-script") {
      o.ddp_script = value();
    } else if (arg == "--rank-env" || arg == "--smoke-env") {
      std::string assignment = value();
      if (assignment.find('=') == std::string::npos)
        die(std::string(arg) + ": expected NAME=VALUE");
      (arg == "--rank-env" ? o.rank_env : o.smoke_env).push_back(assignment);
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

// ---- Files and programs ----------------------------------------------------

bool is_executable(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> find_on_path(const std::string& name, std::string_view path = k_path) {
  if (name.find('/') != std::string::npos) {
    return is_executable(name) ? std::optional(name) : std::nullopt;
  }
  std::string_view dirs = path;
  while (!dirs.empty()) {
    auto colon = dirs.find(':');
    std::string candidate = std::string(dirs.substr(0, colon)) + "/" + name;
    if (is_executable(candidate)) return candidate;
    dirs.remove_prefix(colon == std::string_view::npos ? dirs.size() : colon + 1);
  }
  return std::nullopt;
}

std::string self_dir() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// ---- Running one command ---------------------------------------------------

struct Command {
  std::vector<std::string> argv;  // argv[0]: a full path
  std::vector<std::string> env;   // NAME=VALUE, the whole environment
};

struct Sample {
  double ms = 0;
  long maxrss_kb = 0;
  int status = 0;
};

std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (auto& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Spawns and reaps `command` once; stdout goes to `stdout_path`, stderr to
// `stderr_path`. The time covers posix_spawn() through wait4().
Sample run_once(Command& command, const std::string& stdout_path, const std::string& stderr_path) {
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
  ::posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
  auto argv = c_array(command.argv);
  auto envp = c_array(command.env);
  Sample sample;
  pid_t pid = 0;
  auto start = Clock::now();
  int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  if (rc != 0) die(command.argv[0] + ": posix_spawn: " + std::strerror(rc));
  rusage usage{};
  int status = 0;
  while (::wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) die(std::string("wait4: ") + std::strerror(errno));
  }
  auto stop = Clock::now();
  ::posix_spawn_file_actions_destroy(&actions);
  sample.ms = std::chrono::duration<double, std::milli>(stop - start).count();
  sample.maxrss_kb = usage.ru_maxrss;
  sample.status = status;
  return sample;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// A word as a POSIX shell reads it back: bare when it is safe, else single-quoted.
std::string shell_quote(const std::string& word) {
  bool safe = !word.empty() && word.find_first_not_of(
                                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789@%+=:,./_-") == std::string::npos;
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

// Runs `command` with stdout and stderr captured; dies unless it exits 0.
std::string capture(Command command, const std::string& scratch) {
  std::string out = scratch + "/capture.out";
  std::string err = scratch + "/capture.err";
  Sample sample = run_once(command, out, err);
  if (!WIFEXITED(sample.status) || WEXITSTATUS(sample.status) != 0) {
    die(shell_words(command.argv) + ": " + describe_status(sample.status) + "\n" + read_file(err) +
        read_file(out));
  }
  return read_file(out);
}

// ---- Statistics --------------------------------------------------------------

// Linear interpolation between closest ranks (R-7, numpy's default).
double percentile(std::vector<double> values, double p) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  double pos = p * static_cast<double>(values.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

// ---- Cases and groups --------------------------------------------------------

struct Case {
  Case(std::string label_, Command command_)
      : label(std::move(label_)), command(std::move(command_)) {}
  std::string label;
  Command command;
  bool baseline = false;             // the group's reference ("base" column)
  std::optional<double> max_added;   // target: paired median added over the baseline, ms
  std::optional<double> max_median;  // target: median, ms
  std::optional<double> max_rss_mb;  // target: peak RSS, MB
  std::string remove_before;         // a file unlinked before every run, untimed
  std::vector<Sample> samples;
};

struct Group {
  std::string name;
  std::string title;
  std::vector<std::string> env;  // the environment every case starts from
  std::vector<Case> cases;
  std::vector<std::string> notes;
  int default_runs = 200;  // without --runs
};

// What `c` sets on top of the group's environment, then its argv: a command line to paste.
std::string command_line(const Group& group, const Case& c) {
  std::string unset;
  for (const std::string& assignment : group.env) {
    std::string name = assignment.substr(0, assignment.find('=') + 1);
    bool kept = std::any_of(c.command.env.begin(), c.command.env.end(),
                            [&](const std::string& e) { return e.starts_with(name); });
    if (!kept) unset += "-u " + name.substr(0, name.size() - 1) + " ";
  }
  std::vector<std::string> words;
  for (const std::string& assignment : c.command.env) {
    if (std::find(group.env.begin(), group.env.end(), assignment) == group.env.end()) {
      words.push_back(assignment);
    }
  }
  words.insert(words.end(), c.command.argv.begin(), c.command.argv.end());
  return (unset.empty() ? "" : "env " + unset) + shell_words(words);
}

struct Verdict {
  bool met = true;
  std::vector<std::string> lines;  // one per case with a target, for the summary
};

// Warm-up, one checked run of each case, then `runs` rounds of every case in turn.
void run_group(Group& group, const Options& o, const std::string& scratch) {
  for (Case& c : group.cases) {
    std::string out = scratch + "/check.out";
    std::string err = scratch + "/check.err";
    Sample check = run_once(c.command, out, err);
    if (!WIFEXITED(check.status) || WEXITSTATUS(check.status) != 0) {
      die(group.name + " / " + c.label + ": " + shell_words(c.command.argv) + ": " +
          describe_status(check.status) + "\n" + read_file(err) + read_file(out));
    }
    for (int i = 0; i < o.warmup; ++i) {
      if (!c.remove_before.empty()) ::unlink(c.remove_before.c_str());
      run_once(c.command, "/dev/null", "/dev/null");
    }
    c.samples.reserve(static_cast<std::size_t>(o.runs_or(group.default_runs)));
  }
  const int runs = o.runs_or(group.default_runs);
  std::fprintf(stderr, "%s: %d runs x %zu cases ", group.name.c_str(), runs, group.cases.size());
  for (int run = 0; run < runs; ++run) {
    for (Case& c : group.cases) {
      if (!c.remove_before.empty()) ::unlink(c.remove_before.c_str());
      Sample sample = run_once(c.command, "/dev/null", "/dev/null");
      if (!WIFEXITED(sample.status) || WEXITSTATUS(sample.status) != 0) {
        die(group.name + " / " + c.label + ": run " + std::to_string(run) + ": " +
            describe_status(sample.status));
      }
      c.samples.push_back(sample);
    }
    if ((run + 1) % std::max(1, runs / 10) == 0) std::fputc('.', stderr);
  }
  std::fputs(" done\n", stderr);
}

std::vector<double> times_of(const Case& c) {
  std::vector<double> ms;
  for (const Sample& s : c.samples) ms.push_back(s.ms);
  return ms;
}

long max_rss_kb(const Case& c) {
  long rss = 0;
  for (const Sample& s : c.samples) rss = std::max(rss, s.maxrss_kb);
  return rss;
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

Verdict print_group(const Group& group, bool show_commands, FILE* out) {
  Verdict verdict;
  const Case* base = nullptr;
  for (const Case& c : group.cases) {
    if (c.baseline && base == nullptr) base = &c;
  }
  std::size_t width = 8;
  for (const Case& c : group.cases) width = std::max(width, c.label.size() + 2);
  std::fprintf(out, "\n== %s: %s\n", group.name.c_str(), group.title.c_str());
  std::fprintf(out, "%-*s %9s %9s %9s %9s %10s %15s %7s  %s\n", static_cast<int>(width), "case",
               "median", "p10", "p90", "maxRSS", "added", "added mean", "ratio", "target");
  std::fprintf(out, "%-*s %9s %9s %9s %9s %10s %15s %7s\n", static_cast<int>(width), "", "ms", "ms",
               "ms", "MB", "ms", "ms, 95% CI", "x");
  double base_median = base ? percentile(times_of(*base), 0.5) : NAN;
  for (const Case& c : group.cases) {
    std::vector<double> ms = times_of(c);
    double median = percentile(ms, 0.5);
    double rss_mb = static_cast<double>(max_rss_kb(c)) / 1024.0;
    std::string added = "-";
    std::string added_mean = "-";
    std::string ratio = "-";
    std::optional<double> paired;
    if (base != nullptr && &c != base) {
      // Median of the per-round differences: each pair ran back to back.
      std::vector<double> diffs;
      for (std::size_t i = 0; i < c.samples.size() && i < base->samples.size(); ++i) {
        diffs.push_back(c.samples[i].ms - base->samples[i].ms);
      }
      paired = percentile(diffs, 0.5);
      added = (*paired >= 0 ? "+" : "") + fixed(*paired, 3);
      double n = static_cast<double>(diffs.size());
      double mean = 0;
      for (double d : diffs) mean += d / n;
      double variance = 0;
      for (double d : diffs) variance += (d - mean) * (d - mean) / std::max(1.0, n - 1);
      added_mean =
          (mean >= 0 ? "+" : "") + fixed(mean, 2) + "+-" + fixed(1.96 * std::sqrt(variance / n), 2);
      ratio = fixed(median / base_median, 2);
    }
    std::string target;
    auto check = [&](bool ok, const std::string& text) {
      verdict.met = verdict.met && ok;
      if (!target.empty()) target += ", ";
      target += text + (ok ? " ok" : " MISSED");
    };
    if (c.max_added && paired) {
      check(*paired <= *c.max_added, "added<=" + fixed(*c.max_added, 0) + "ms");
    }
    if (c.max_median) check(median <= *c.max_median, "median<=" + fixed(*c.max_median, 0) + "ms");
    if (c.max_rss_mb) check(rss_mb <= *c.max_rss_mb, "RSS<=" + fixed(*c.max_rss_mb, 0) + "MB");
    if (!target.empty()) {
      std::string figures = "median " + fixed(median, 2) + " ms";
      if (paired) figures += ", added " + added + " ms";
      if (c.max_rss_mb) figures += ", maxRSS " + fixed(rss_mb, 1) + " MB";
      verdict.lines.push_back(group.name + " / " + c.label + ": " + figures + " -> " + target);
    }
    std::string label = c.label + (&c == base ? " *" : "");
    std::fprintf(out, "%-*s %9s %9s %9s %9s %10s %15s %7s  %s\n", static_cast<int>(width),
                 label.c_str(), fixed(median, 3).c_str(), fixed(percentile(ms, 0.1), 3).c_str(),
                 fixed(percentile(ms, 0.9), 3).c_str(), fixed(rss_mb, 1).c_str(), added.c_str(),
                 added_mean.c_str(), ratio.c_str(), target.c_str());
  }
  if (base != nullptr) {
    std::fprintf(out,
                 "  * baseline. added: median of the per-round differences to it (each pair "
                 "ran back to back);\n    added mean: their mean with a 95%% confidence "
                 "interval; ratio: median / baseline median\n");
  }
  for (const std::string& note : group.notes) std::fprintf(out, "  %s\n", note.c_str());
  if (!show_commands) return verdict;
  std::fprintf(out, "  commands, each in env -i %s plus what it shows:\n",
               shell_words(group.env).c_str());
  for (const Case& c : group.cases) {
    std::fprintf(out, "  %-*s $ %s\n", static_cast<int>(width), c.label.c_str(),
                 command_line(group, c).c_str());
  }
  return verdict;
}

void append_csv(const Group& group, const std::string& path) {
  bool fresh = !fs::exists(path);
  std::ofstream out(path, std::ios::app);
  if (fresh) out << "group,case,run,ms,maxrss_kb\n";
  for (const Case& c : group.cases) {
    for (std::size_t i = 0; i < c.samples.size(); ++i) {
      out << group.name << ",\"" << c.label << "\"," << i << ',' << fixed(c.samples[i].ms, 4) << ','
          << c.samples[i].maxrss_kb << '\n';
    }
  }
}

// ---- The environment ---------------------------------------------------------

struct Setup {
  std::string ezpz;
  std::string rankenv;
  std::string smoke;       // ezpz-smoke beside ezpz; empty when not built
  std::string python;      // for python_ddp.py
  std::string ddp_script;  // bench/python_ddp.py
  std::string mpiexec;
  std::string scratch;  // removed at exit unless --keep-tmp
};

// A clean environment: no PBS_*, SLURM_*, EZPZ_* or MASTER_* from the caller.
std::vector<std::string> base_env(const Setup& s) {
  return {"PATH=" + s.scratch + "/mpi-bin:" + k_path, "HOME=" + s.scratch + "/home",
          "EZPZ_RUN_DIR=" + s.scratch + "/run"};
}

std::vector<std::string> with(std::vector<std::string> env, const std::vector<std::string>& extra) {
  for (const std::string& assignment : extra) {
    std::string name = assignment.substr(0, assignment.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.starts_with(name); });
    env.push_back(assignment);
  }
  return env;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool is_assignment(const std::string& word) {
  auto eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (std::isdigit(static_cast<unsigned char>(word[0]))) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<long>(eq), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// The plan ezpz prints with --dry-run ("NAME=VALUE ... launcher args ..."), as a
// Command to run directly; nullopt when it needs a shell to read (quotes).
std::optional<Command> planned_command(const std::string& line, std::vector<std::string> env) {
  std::istringstream words(line);
  std::vector<std::string> argv;
  for (std::string word; words >> word;) {
    if (word.find_first_of("'\"\\$") != std::string::npos) return std::nullopt;
    if (argv.empty() && is_assignment(word)) {
      env = with(std::move(env), {word});
    } else {
      argv.push_back(word);
    }
  }
  if (argv.empty()) return std::nullopt;
  // Looked up on the case's PATH, as ezpz would: its mpi-bin link, not Debian's alternative.
  std::string_view path = k_path;
  for (const std::string& assignment : env) {
    if (assignment.starts_with("PATH=")) path = std::string_view(assignment).substr(5);
  }
  auto program = find_on_path(argv[0], path);
  if (!program) return std::nullopt;
  argv[0] = *program;
  return Command{argv, env};
}

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// ---- launch_overhead ---------------------------------------------------------

std::vector<Group> launch_overhead_groups(const Setup& s) {
  const std::vector<std::string> env = base_env(s);
  const std::vector<std::string> fixed_port = with(env, {"MASTER_PORT=29500"});
  const std::vector<std::string> target = {"/bin/true"};
  const std::vector<std::string> launch = {s.ezpz, "launch", "-n", "2", "--"};
  const std::vector<std::string> dry_run = {s.ezpz, "launch", "--dry-run", "-n", "2", "--"};

  std::vector<Group> groups;

  Group run{"launch_overhead", "a real 2-rank launch of /bin/true on this host", env, {}, {}};
  Case mpi{"mpiexec -n 2 /bin/true", {concat({s.mpiexec, "-n", "2"}, target), env}};
  mpi.baseline = true;
  run.cases.push_back(mpi);
  std::string plan_line = trim(capture({concat(dry_run, target), env}, s.scratch));
  run.notes.push_back("ezpz's plan: " + plan_line);
  if (auto planned = planned_command(plan_line, env)) {
    run.cases.push_back({"ezpz's plan run directly (launcher + shim)", *planned});
  } else {
    run.notes.push_back("(the plan needs a shell to read; its direct run is left out)");
  }
  Case real{"ezpz launch -n 2 -- /bin/true", {concat(launch, target), env}};
  real.max_added = 2.0;
  run.cases.push_back(real);
  run.cases.push_back(
      {"  same, MASTER_PORT=29500 (no port probe)", {concat(launch, target), fixed_port}});
  groups.push_back(std::move(run));

  Group alone{"ezpz_alone",
              "ezpz's own cost: start-up, planning, and the launch path with a no-op launcher",
              env,
              {},
              {}};
  Case true_case{"/bin/true", {target, env}};
  true_case.baseline = true;
  alone.cases.push_back(true_case);
  alone.cases.push_back({"ezpz --version", {{s.ezpz, "--version"}, env}});
  alone.cases.push_back(
      {"ezpz launch --dry-run -n 2 -- /bin/true", {concat(dry_run, target), env}});
  alone.cases.push_back(
      {"  same, MASTER_PORT=29500 (no port probe)", {concat(dry_run, target), fixed_port}});
  // ezpz may cache its parsed machine profiles under XDG_CACHE_HOME or HOME: the
  // rows above find it warm. Here it is removed before every run (a first run)...
  std::string cold = s.scratch + "/cold-cache";
  Case first{"  same, profile cache removed before each run",
             {concat(dry_run, target), with(env, {"XDG_CACHE_HOME=" + cold})}};
  first.remove_before = cold + "/ezpz/profiles.json";
  alone.cases.push_back(first);
  // ... and here there is nowhere to keep one (EZPZ_RUN_DIR still names the run directory).
  std::vector<std::string> no_home;
  for (const std::string& e : env) {
    if (!e.starts_with("HOME=")) no_home.push_back(e);
  }
  alone.cases.push_back(
      {"  same, HOME unset (no cache directory)", {concat(dry_run, target), no_home}});
  // The whole real launch path (plan, write, spawn the launcher, supervise, reap) with
  // a launcher that does nothing: an `mpiexec` on PATH that is /bin/true.
  std::string fake_bin = s.scratch + "/fake-launcher-bin";
  fs::create_directories(fake_bin);
  fs::create_symlink("/bin/true", fake_bin + "/mpiexec");
  alone.cases.push_back({"ezpz launch -n 2 -- /bin/true, mpiexec = /bin/true",
                         {concat(launch, target), with(env, {"PATH=" + fake_bin + ":" + k_path})}});
  groups.push_back(std::move(alone));

  // What one rank pays: Hydra's per-rank variables plus what ezpz exports.
  std::vector<std::string> rank_env =
      with(env, {"PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2",
                 "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500", "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2",
                 "EZPZ_LAUNCHER=hydra"});
  Group shim{"rankenv_shim",
             "the per-rank env shim, under the variables one Hydra rank sees",
             env,
             {},
             {}};
  Case bare{"/bin/true", {target, rank_env}};
  bare.baseline = true;
  shim.cases.push_back(bare);
  shim.cases.push_back({"ezpz-rankenv /bin/true", {concat({s.rankenv}, target), rank_env}});
  groups.push_back(std::move(shim));
  return groups;
}

// ---- dry_run_scale -----------------------------------------------------------

// Polaris-style FQDNs: x<rack>c<chassis>s<slot>b0n0.hsn.cm.polaris.alcf.anl.gov.
std::string polaris_host(int i) {
  char name[96];
  std::snprintf(name, sizeof name, "x%04dc%ds%db0n0.hsn.cm.polaris.alcf.anl.gov", 3000 + i / 56,
                (i / 8) % 7, i % 8);
  return name;
}

// Written line by line: the harness must stay small, because a child it
// spawns inherits its peak RSS (see the note printed under the tables).
void write_nodefile(const std::string& path, int hosts, int repeats) {
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) die("cannot write " + path);
  for (int i = 0; i < hosts; ++i) {
    std::string host = polaris_host(i);
    for (int r = 0; r < repeats; ++r) std::fprintf(out, "%s\n", host.c_str());
  }
  if (std::fclose(out) != 0) die("cannot write " + path);
}

std::vector<Group> dry_run_scale_groups(const Setup& s) {
  const std::vector<std::string> env = base_env(s);
  const std::string dir = s.scratch;
  write_nodefile(dir + "/nodefile-2", 2, 1);
  write_nodefile(dir + "/nodefile-10k", 10000, 1);
  write_nodefile(dir + "/nodefile-10k-x4", 10000, 4);

  auto pbs = [&](const std::string& nodefile) {
    return with(env, {"PBS_JOBID=8123456.polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov",
                      "PBS_NODEFILE=" + dir + "/" + nodefile, "EZPZ_MACHINE=polaris"});
  };
  const std::vector<std::string> slurm =
      with(env, {"SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=x[00000-09999]"});
  const std::vector<std::string> command = {"--", "python3", "train.py"};
  auto dry = [&](std::vector<std::string> extra) {
    return concat(concat({s.ezpz, "launch", "--dry-run"}, extra), command);
  };
  auto big = [](Case c) {
    c.max_median = 50;
    c.max_rss_mb = 20;
    return c;
  };

  Group g{"dry_run_scale", "ezpz launch --dry-run against allocation size", env, {}, {}};
  Case true_case{"/bin/true", {{"/bin/true"}, env}};
  true_case.baseline = true;
  g.cases.push_back(true_case);
  Case cat{"cat nodefile-10k >/dev/null", {{"/bin/cat", dir + "/nodefile-10k"}, env}};
  g.cases.push_back(cat);
  Case small{"PBS 2 hosts (polaris)", {dry({}), pbs("nodefile-2")}};
  small.max_median = 5;
  g.cases.push_back(small);
  g.cases.push_back(big({"PBS 10k hosts, nodefile used as is", {dry({}), pbs("nodefile-10k")}}));
  g.cases.push_back(
      big({"PBS 10k hosts x4 slots (writes hostfile)", {dry({}), pbs("nodefile-10k-x4")}}));
  g.cases.push_back(big(
      {"PBS 10k hosts --nhosts 9999 (writes)", {dry({"--nhosts", "9999"}), pbs("nodefile-10k")}}));
  g.cases.push_back(big({"PBS 10k hosts --exclude 1 (writes)",
                         {dry({"--exclude", polaris_host(5000)}), pbs("nodefile-10k")}}));
  g.cases.push_back(big({"PBS 10k hosts --json", {dry({"--json"}), pbs("nodefile-10k")}}));
  g.cases.push_back(big({"Slurm x[00000-09999]", {dry({}), slurm}}));
  g.cases.push_back(
      big({"Slurm x[00000-09999] --exclude 1", {dry({"--exclude", "x05000"}), slurm}}));
  g.notes.push_back("nodefiles: " + dir + "/nodefile-{2,10k,10k-x4} (Polaris-style FQDNs, " +
                    std::to_string(fs::file_size(dir + "/nodefile-10k")) + " bytes for 10k); " +
                    "written hostfiles go to EZPZ_RUN_DIR=" + dir + "/run");
  return {g};
}

// ---- doctor ------------------------------------------------------------------

// `ezpz doctor` (no --deep) against the least the Python ezpz's doctor pays
// before its first check: starting Python and importing torch with
// torch.distributed. ezpz-smoke --probe (loading libtorch, which doctor runs
// beside every other probe) is the floor.
std::vector<Group> doctor_groups(const Setup& s) {
  const std::vector<std::string> env = base_env(s);
  Group g{"doctor",
          "ezpz doctor (every check, the trainer probe included) vs importing torch",
          env,
          {},
          {}};
  g.default_runs = 20;
  Case python{"python3 -c 'import torch, torch.distributed'",
              {{s.python, "-c", "import torch, torch.distributed"}, env}};
  python.baseline = true;
  g.cases.push_back(python);
  if (!s.smoke.empty())
    g.cases.push_back({"ezpz-smoke --probe (loads libtorch)", {{s.smoke, "--probe"}, env}});
  Case doctor{"ezpz doctor", {{s.ezpz, "doctor"}, env}};
  doctor.max_median = 600;
  g.cases.push_back(doctor);
  g.cases.push_back({"ezpz doctor --json", {{s.ezpz, "doctor", "--json"}, env}});
  g.notes.push_back(
      "doctor runs ezpz-smoke --probe, mpiexec --version, name look-ups and the "
      "other probes at once; see bench/README.md");
  return {g};
}

std::string doctor_missing(const Setup& s) {
  if (!is_executable(s.python)) return s.python + " not found (apt-get install python3-torch)";
  Command probe{{s.python, "-c", "import torch, torch.distributed"}, base_env(s)};
  Sample check = run_once(probe, "/dev/null", "/dev/null");
  if (!WIFEXITED(check.status) || WEXITSTATUS(check.status) != 0) {
    return s.python + " cannot import torch (apt-get install python3-torch)";
  }
  return "";
}

// ---- Training: ezpz-smoke against PyTorch DDP, and time to the first step ----
//
// These run real training jobs, seconds each, so they are measured differently
// from the groups above: every job's stdout and stderr come back on one pipe and
// each line is stamped with the harness's clock as it arrives; rank 0 of either
// trainer writes metrics.jsonl (one line per step, ezpz-smoke's keys), which is
// where samples/s and the per-phase times come from.

struct Line {
  double ms = 0;  // since posix_spawn(), harness clock, when the harness read it
  std::string text;
};

struct Traced {
  std::vector<Line> lines;
  double wall_ms = 0;  // posix_spawn() to wait4()
  int status = 0;
};

// Runs `command` with stdout and stderr on one pipe (stdin /dev/null), stamping
// every line as it is read; `on_line` sees each line with the child's pid.
Traced run_traced(Command& command, const std::function<void(const Line&, pid_t)>& on_line) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) die(std::string("pipe2: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  auto argv = c_array(command.argv);
  auto envp = c_array(command.env);
  Traced traced;
  pid_t pid = 0;
  auto start = Clock::now();
  int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) die(command.argv[0] + ": posix_spawn: " + std::strerror(rc));
  std::string partial;
  char buffer[65536];
  auto since = [&] {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  auto emit = [&](double ms) {
    for (std::size_t nl; (nl = partial.find('\n')) != std::string::npos;) {
      Line line{ms, partial.substr(0, nl)};
      partial.erase(0, nl + 1);
      on_line(line, pid);
      traced.lines.push_back(std::move(line));
    }
  };
  constexpr double k_limit_ms = 900e3;  // a hung job must not hang the benchmark
  bool killed = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, 1000);
    if (ready < 0 && errno != EINTR) die(std::string("poll: ") + std::strerror(errno));
    if (!killed && since() > k_limit_ms) {
      std::fprintf(stderr, "ezpz-bench: %s: still running after %.0f s, killed\n",
                   command.argv[0].c_str(), k_limit_ms / 1e3);
      ::kill(pid, SIGTERM);
      killed = true;
    }
    if (ready <= 0) continue;
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    double ms = since();
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // every writer is gone
    partial.append(buffer, static_cast<std::size_t>(n));
    emit(ms);
  }
  ::close(fds[0]);
  if (!partial.empty()) {
    partial += '\n';
    emit(since());
  }
  rusage usage{};
  while (::wait4(pid, &traced.status, 0, &usage) < 0) {
    if (errno != EINTR) die(std::string("wait4: ") + std::strerror(errno));
  }
  traced.wall_ms = since();
  return traced;
}

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

// ---- smoke_vs_ddp ----

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

std::vector<std::string> model_flags(const std::string& layers, int batch, int steps, int warmup) {
  return {"--layers",     layers,
          "--batch-size", std::to_string(batch),
          "--iters",      std::to_string(steps),
          "--warmup",     std::to_string(warmup),
          "--lr",         "0.001",
          "--threads",    "1"};
}

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
    argv = concat(argv, {s.smoke, "--dtype", "fp32"});
  } else {
    argv = concat(argv, {s.python, s.ddp_script});
  }
  argv = concat(argv, model_flags("512,256,128", 128, steps, warmup));
  argv = concat(argv, {"--output-dir", dir});
  return {argv, base_env(s)};
}

bool is_step_line(const std::string& text, int step) {
  if (!text.starts_with("step ")) return false;
  std::size_t i = 5;
  while (i < text.size() && text[i] == ' ') ++i;
  return text.compare(i, std::to_string(step).size() + 1, std::to_string(step) + "/") == 0;
}

// One job; dies unless it trained (ezpz-smoke may exit 1 when a check fails:
// the timings are still real, and the verdict is reported beside them).
TrainRun run_training(const Setup& s, const Options& o, TrainCase& c, int steps, int warmup,
                      const std::string& dir, bool look) {
  fs::remove_all(dir);
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

struct TrainOutcome {
  Verdict verdict;
  std::vector<std::string> csv;  // group,case,run,samples_per_s,step_ms,...
};

TrainOutcome smoke_vs_ddp(const Setup& s, const Options& o) {
  std::vector<TrainCase> cases = {{"ezpz-smoke", 1, true},
                                  {"python DDP", 1, false},
                                  {"ezpz-smoke", 2, true},
                                  {"python DDP", 2, false}};
  std::string scratch = s.scratch + "/train";
  // One short untimed run of each: libtorch and Python's torch into the page
  // cache, and a check that every case works before minutes are spent.
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

  TrainOutcome outcome;
  FILE* out = stdout;
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
  std::fprintf(out, "%-12s %5s %10s %10s %10s %8s %7s %7s %7s %7s %7s %7s\n", "case", "ranks",
               "samples/s", "min", "max", "step", "data", "fwd", "bwd", "allred", "opt", "wall");
  std::fprintf(out, "%-12s %5s %10s %10s %10s %8s %7s %7s %7s %7s %7s %7s\n", "", "", "median", "",
               "", "ms", "ms", "ms", "ms", "ms", "ms", "s");
  std::map<std::pair<bool, int>, double> medians;
  for (const TrainCase& c : cases) {
    std::vector<double> rates = values_of(c, [](const TrainRun& r) { return r.samples_per_s; });
    double median = median_of(rates);
    medians[{c.smoke, c.ranks}] = median;
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
        fixed(*std::max_element(rates.begin(), rates.end()), 0).c_str(),
        fixed(phases[0], 3).c_str(), cell(phases[1], 3).c_str(), cell(phases[2], 3).c_str(),
        cell(phases[3], 3).c_str(), cell(phases[4], 3).c_str(), cell(phases[5], 3).c_str(),
        fixed(median_of(values_of(c, [](const TrainRun& r) { return r.wall_s; })), 2).c_str());
    for (std::size_t i = 0; i < c.runs.size(); ++i) {
      const TrainRun& r = c.runs[i];
      std::string line = "smoke_vs_ddp,\"" + c.label + " n=" + std::to_string(c.ranks) + "\"," +
                         std::to_string(i) + "," + fixed(r.samples_per_s, 1);
      for (double p : r.phase_ms) {
        line += ',';
        if (!std::isnan(p)) line += fixed(p, 4);
      }
      outcome.csv.push_back(line + "," + fixed(r.wall_s, 3));
    }
  }
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
  // Per-rep ratios: each pair ran back to back.
  std::vector<double> paired;
  for (std::size_t i = 0; i < cases[2].runs.size() && i < cases[3].runs.size(); ++i) {
    paired.push_back(cases[2].runs[i].samples_per_s / cases[3].runs[i].samples_per_s);
  }
  double ratio = medians[{true, 2}] / medians[{false, 2}];
  bool ok = ratio >= 1.2;
  auto efficiency = [&](bool smoke) { return medians[{smoke, 2}] / (2 * medians[{smoke, 1}]); };
  std::fprintf(out, "\n  2 ranks, ezpz-smoke / python DDP: %.2fx (medians); per rep ", ratio);
  for (double p : paired) std::fprintf(out, "%.2f ", p);
  std::fprintf(out, "(median %.2fx)   target >= 1.20x: %s\n", median_of(paired),
               ok ? "ok" : "MISSED");
  std::fprintf(out,
               "  scaling efficiency 1 -> 2 ranks, throughput(2) / (2 x throughput(1)): "
               "ezpz-smoke %.2f, python DDP %.2f\n",
               efficiency(true), efficiency(false));
  std::fprintf(out, "  1 rank, ezpz-smoke / python DDP: %.2fx\n",
               medians[{true, 1}] / medians[{false, 1}]);
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
  outcome.verdict.met = ok;
  outcome.verdict.lines.push_back("smoke_vs_ddp / 2 ranks: ezpz-smoke " +
                                  fixed(medians[{true, 2}], 0) + " samples/s, python DDP " +
                                  fixed(medians[{false, 2}], 0) + " -> " + fixed(ratio, 2) +
                                  "x, target >= 1.2x " + (ok ? "ok" : "MISSED"));
  return outcome;
}

// ---- first_step ----

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
  fs::remove_all(dir);
  StartRun r;
  Traced t = run_traced(command, [&](const Line& line, pid_t) {
    if (std::isnan(r.first_step_line_ms) && is_step_line(line.text, 1)) {
      r.first_step_line_ms = line.ms;
    }
    std::vector<double> ms = ms_values(line.text);
    if (line.text.starts_with("first step done") && !ms.empty()) r.trainer_first_step_ms = ms[0];
    if (line.text.starts_with("ready ") && ms.size() >= 3) {
      r.trainer_ready_ms = ms[0];
      r.load_ms = ms[1];
      r.setup_ms = ms[2];
    }
  });
  r.wall_ms = t.wall_ms;
  if (!WIFEXITED(t.status) || WEXITSTATUS(t.status) != 0 || std::isnan(r.first_step_line_ms)) {
    std::string text;
    for (const Line& line : t.lines) text += line.text + "\n";
    die(label + ": " + shell_words(command.argv) + ": " + describe_status(t.status) + "\n" + text);
  }
  return r;
}

TrainOutcome first_step(const Setup& s, const Options& o) {
  const int runs = o.runs_or(15);
  std::string dir = s.scratch + "/first-step";
  struct StartCase {
    std::string label;
    Command command;
    std::vector<StartRun> runs;
  };
  std::vector<StartCase> cases = {
      {"ezpz test -n 2 --model debug",
       {{s.ezpz, "test", "-n", "2", "--model", "debug", "--output-dir", dir}, base_env(s)},
       {}},
      {"python_ddp.py (same) via ezpz launch -n 2",
       {concat({s.ezpz, "launch", "-n", "2", "--", s.python, s.ddp_script},
               concat(model_flags("128,64", 16, 20, 5), {"--output-dir", dir})),
        base_env(s)},
       {}},
  };
  for (StartCase& c : cases) {  // untimed: page cache, profile cache, a working command
    for (int i = 0; i < std::max(1, o.warmup / 5); ++i) run_start(c.command, dir, c.label);
  }
  std::fprintf(stderr, "first_step: %d runs x %zu cases ", runs, cases.size());
  for (int run = 0; run < runs; ++run) {
    for (StartCase& c : cases) c.runs.push_back(run_start(c.command, dir, c.label));
    std::fputc('.', stderr);
  }
  std::fputs(" done\n", stderr);

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
  auto row = [&](const std::string& label, const std::vector<double>& v,
                 const std::string& target) {
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
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const StartCase& c = cases[k];
    auto pick = [&](double StartRun::*field) {
      std::vector<double> v;
      for (const StartRun& r : c.runs) v.push_back(r.*field);
      return v;
    };
    std::vector<double> line = pick(&StartRun::first_step_line_ms);
    std::vector<double> before;
    for (const StartRun& r : c.runs)
      before.push_back(r.first_step_line_ms - r.trainer_first_step_ms);
    std::vector<double> step1;
    for (const StartRun& r : c.runs) step1.push_back(r.trainer_first_step_ms - r.trainer_ready_ms);
    std::string target;
    if (k == 0) {
      double median = percentile(line, 0.5);
      bool ok = median <= 1500;
      target = std::string("median<=1500ms ") + (ok ? "ok" : "MISSED");
      outcome.verdict.met = ok;
      outcome.verdict.lines.push_back("first_step / " + c.label + ": median " + fixed(median, 1) +
                                      " ms -> " + target);
    }
    row(c.label + ": spawn -> \"step 1/\" line", line, target);
    row("  before rank 0's process started (launch path)", before, "");
    row("  rank 0 start -> step 1 done (its own clock)", pick(&StartRun::trainer_first_step_ms),
        "");
    row(k == 0 ? "    libtorch loaded (before main)" : "    import torch", pick(&StartRun::load_ms),
        "");
    row(k == 0 ? "    rendezvous and process group" : "    init_process_group",
        pick(&StartRun::setup_ms), "");
    row("    model, first step", step1, "");
    row("  whole command, spawn -> exit", pick(&StartRun::wall_ms), "");
    for (std::size_t i = 0; i < c.runs.size(); ++i) {
      const StartRun& r = c.runs[i];
      outcome.csv.push_back("first_step,\"" + c.label + "\"," + std::to_string(i) + "," +
                            fixed(r.first_step_line_ms, 3) + "," +
                            fixed(r.trainer_first_step_ms, 1) + "," + fixed(r.load_ms, 1) + "," +
                            fixed(r.setup_ms, 1) + "," + fixed(r.wall_ms, 3));
    }
  }
  std::fprintf(out,
               "  launch path: the line's arrival minus rank 0's own \"first step done N ms after "
               "start\" (its start\n"
               "  from /proc/<pid>/stat, 10 ms ticks): ezpz, mpiexec, hydra_pmi_proxy, the shim "
               "and the line's way back.\n"
               "  rank 0's own phases are from its \"ready ...\" log line.\n");
  std::fprintf(out, "  commands (env -i %s):\n", shell_words(base_env(s)).c_str());
  for (const StartCase& c : cases)
    std::fprintf(out, "    $ %s\n", shell_words(c.command.argv).c_str());
  return outcome;
}

// Why the training benchmarks cannot run here; empty when they can.
std::string training_missing(const Setup& s) {
  if (s.smoke.empty()) return "ezpz-smoke not built (cmake -DEZPZ_WITH_SMOKE=ON)";
  if (!is_executable(s.python)) return s.python + " not found (apt-get install python3-torch)";
  if (!is_executable(s.ddp_script) && !fs::exists(s.ddp_script)) {
    return "the DDP script " + s.ddp_script + " not found (--ddp-script)";
  }
  Command probe{{s.python, "-c", "import torch.distributed as d; assert d.is_gloo_available()"},
                base_env(s)};
  Sample check = run_once(probe, "/dev/null", "/dev/null");
  if (!WIFEXITED(check.status) || WEXITSTATUS(check.status) != 0) {
    return s.python + " cannot import torch with Gloo (apt-get install python3-torch)";
  }
  return "";
}

void append_lines(const std::vector<std::string>& lines, const std::string& path,
                  const std::string& header) {
  bool fresh = !fs::exists(path);
  std::ofstream out(path, std::ios::app);
  if (fresh) out << header << '\n';
  for (const std::string& line : lines) out << line << '\n';
}

// ---- main --------------------------------------------------------------------

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return text;
}

// The 1-minute load average: other work on the machine shows up in every figure.
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? "?" : one;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("model name")) return trim(line.substr(line.find(':') + 2));
  }
  return "unknown cpu";
}

// ezpz runs `mpiexec` from PATH: base_env puts this link to s.mpiexec first. Hydra starts
// the hydra_pmi_proxy beside the mpiexec it was run as, so that is linked too.
void pin_mpiexec(const Setup& s) {
  const fs::path dir = s.scratch + "/mpi-bin";
  fs::create_directories(dir);
  fs::create_symlink(s.mpiexec, dir / "mpiexec");
  const fs::path proxy = fs::path(s.mpiexec).parent_path() / "hydra_pmi_proxy";
  if (is_executable(proxy.string())) fs::create_symlink(proxy, dir / "hydra_pmi_proxy");
}

Setup make_setup(const Options& o) {
  Setup s;
  std::vector<std::string> dirs;
  if (!o.bin_dir.empty()) {
    dirs.push_back(o.bin_dir);
  } else {
    if (*EZPZ_BENCH_BIN_DIR) dirs.emplace_back(EZPZ_BENCH_BIN_DIR);
    dirs.push_back(self_dir());
    dirs.push_back(self_dir() + "/..");
  }
  for (const auto& dir : dirs) {
    if (is_executable(dir + "/ezpz") && is_executable(dir + "/ezpz-rankenv")) {
      s.ezpz = fs::weakly_canonical(dir + "/ezpz").string();
      s.rankenv = fs::weakly_canonical(dir + "/ezpz-rankenv").string();
      break;
    }
  }
  if (s.ezpz.empty()) die("ezpz and ezpz-rankenv not found; pass --bin-dir BUILD_DIR");
  std::string smoke = fs::path(s.ezpz).parent_path().string() + "/ezpz-smoke";
  if (is_executable(smoke)) s.smoke = smoke;
  s.python = o.python;
  s.ddp_script = o.ddp_script;
  if (s.ddp_script.empty()) {
    s.ddp_script = *EZPZ_BENCH_SOURCE_DIR ? std::string(EZPZ_BENCH_SOURCE_DIR) + "/python_ddp.py"
                                          : self_dir() + "/../../bench/python_ddp.py";
  }
  s.ddp_script = fs::weakly_canonical(s.ddp_script).string();
  // MPICH's Hydra by its own name: with Open MPI also installed, Debian's `mpiexec`
  // alternative may be Open MPI's.
  auto mpiexec = find_on_path(o.mpiexec.empty() ? "mpiexec.hydra" : o.mpiexec);
  if (!mpiexec && o.mpiexec.empty()) mpiexec = find_on_path("mpiexec");
  if (!mpiexec) die("mpiexec not found on " + std::string(k_path) + "; pass --mpiexec PATH");
  s.mpiexec = *mpiexec;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ezpz-bench.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) die("mkdtemp: " + std::string(std::strerror(errno)));
  s.scratch = pattern;
  if (!o.keep_tmp) g_scratch = s.scratch;
  fs::create_directories(s.scratch + "/home");
  fs::create_directories(s.scratch + "/run");
  pin_mpiexec(s);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  Setup s = make_setup(o);
  utsname host{};
  ::uname(&host);
  std::string version = trim(capture({{s.ezpz, "--version"}, base_env(s)}, s.scratch));
  std::printf("ezpz-bench %s | %s | %s %s %s | %ld cores, %s\n", o.what.c_str(), now_utc().c_str(),
              host.sysname, host.release, host.machine, ::sysconf(_SC_NPROCESSORS_ONLN),
              cpu_model().c_str());
  std::printf("%s (%s) | mpiexec: %s | %d runs/case, alternated, %d warm-up | load %s\n",
              version.c_str(), s.ezpz.c_str(), s.mpiexec.c_str(),
              o.runs_or(o.what == "doctor" ? 20 : 200), o.warmup, load_average().c_str());
  std::string missing;
  if (runs_ddp(o) || runs_first_step(o)) {
    missing = training_missing(s);
    if (!missing.empty() && o.what != "all") die(missing);
    if (missing.empty()) {
      std::printf("training: ezpz-smoke %s | python %s | %s\n", s.smoke.c_str(), s.python.c_str(),
                  s.ddp_script.c_str());
    }
  }
  std::fflush(stdout);

  std::vector<Group> groups;
  if (runs_launch(o)) groups = launch_overhead_groups(s);
  if (runs_dry(o)) {
    for (Group& g : dry_run_scale_groups(s)) groups.push_back(std::move(g));
  }
  if (runs_doctor(o)) {
    std::string why = doctor_missing(s);
    if (!why.empty() && o.what != "all") die(why);
    if (why.empty()) {
      for (Group& g : doctor_groups(s)) groups.push_back(std::move(g));
    } else {
      std::printf("doctor: skipped: %s\n", why.c_str());
    }
  }
  bool all_met = true;
  std::vector<std::string> summary;
  for (Group& g : groups) {
    run_group(g, o, s.scratch);
    Verdict verdict = print_group(g, o.show_commands, stdout);
    all_met = all_met && verdict.met;
    summary.insert(summary.end(), verdict.lines.begin(), verdict.lines.end());
    if (!o.csv.empty()) append_csv(g, o.csv);
    std::fflush(stdout);
  }
  if (!missing.empty()) {
    std::printf("\nsmoke_vs_ddp, first_step: skipped: %s\n", missing.c_str());
  } else {
    std::vector<TrainOutcome> outcomes;
    if (runs_ddp(o)) {
      std::printf("\nload average before smoke_vs_ddp: %s\n", load_average().c_str());
      std::fflush(stdout);
      outcomes.push_back(smoke_vs_ddp(s, o));
      if (!o.csv.empty()) {
        append_lines(outcomes.back().csv, o.csv + ".smoke_vs_ddp.csv",
                     "group,case,rep,samples_per_s,step_ms,data_ms,forward_ms,backward_ms,"
                     "allreduce_ms,optimizer_ms,wall_s");
      }
    }
    if (runs_first_step(o)) {
      std::printf("\nload average before first_step: %s\n", load_average().c_str());
      std::fflush(stdout);
      outcomes.push_back(first_step(s, o));
      if (!o.csv.empty()) {
        append_lines(outcomes.back().csv, o.csv + ".first_step.csv",
                     "group,case,run,first_step_line_ms,trainer_first_step_ms,load_ms,setup_ms,"
                     "wall_ms");
      }
    }
    for (const TrainOutcome& t : outcomes) {
      all_met = all_met && t.verdict.met;
      summary.insert(summary.end(), t.verdict.lines.begin(), t.verdict.lines.end());
    }
    std::fflush(stdout);
  }
  if (!groups.empty()) {
    rusage self{};
    ::getrusage(RUSAGE_SELF, &self);
    std::printf(
        "\nmaxRSS: the child's peak resident set from wait4(), with its descendants. A "
        "spawned child starts out\nsharing this harness's memory, so no row reads below "
        "the harness's own %.1f MB.\n",
        static_cast<double>(self.ru_maxrss) / 1024.0);
  }
  std::printf("load average at the end: %s\n", load_average().c_str());
  std::printf("\ntargets: %s\n", all_met ? "all met" : "SOME MISSED");
  for (const std::string& line : summary) std::printf("  %s\n", line.c_str());
  if (o.keep_tmp) {
    std::printf("scratch kept: %s\n", s.scratch.c_str());
  } else {
    std::error_code error;
    fs::remove_all(s.scratch, error);
  }
  return 0;
}
