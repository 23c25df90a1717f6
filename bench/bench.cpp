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
// Options: --runs N (200)  --warmup N (5)  --bin-dir DIR (where ezpz and
// ezpz-rankenv are)  --mpiexec PATH  --csv FILE (every sample)  --keep-tmp
// --commands (print every case's command line)
#include <fcntl.h>
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
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef EZPZ_BENCH_BIN_DIR
#define EZPZ_BENCH_BIN_DIR ""
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
  int runs = 200;
  int warmup = 5;
  std::string bin_dir;
  std::string mpiexec;
  std::string csv;
  bool keep_tmp = false;
  bool show_commands = false;
};

void usage(FILE* out) {
  std::fprintf(
      out,
      "usage: ezpz-bench {launch_overhead|dry_run_scale|all} [--runs N] [--warmup N]\n"
      "                  [--bin-dir DIR] [--mpiexec PATH] [--csv FILE] [--keep-tmp] [--commands]\n"
      "  --runs N     timed runs of each case, alternated case by case (default 200)\n"
      "  --warmup N   untimed runs of each case first (default 5)\n"
      "  --bin-dir    directory holding ezpz and ezpz-rankenv (default: the build tree\n"
      "               this harness was built in, else the harness's own directory/..)\n"
      "  --mpiexec    the mpiexec to compare with (default: first on %s)\n"
      "  --csv FILE   append every sample: group,case,run,ms,maxrss_kb\n"
      "  --keep-tmp   keep the scratch directory (nodefiles, written hostfiles)\n"
      "  --commands   print each case's exact command line and environment\n",
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
    } else if (o.what.empty() && !arg.starts_with('-')) {
      o.what = arg;
    } else {
      usage(stderr);
      die("unknown argument " + std::string(arg));
    }
  }
  if (o.what != "launch_overhead" && o.what != "dry_run_scale" && o.what != "all") {
    usage(stderr);
    die("name a benchmark: launch_overhead, dry_run_scale or all");
  }
  return o;
}

// ---- Files and programs ----------------------------------------------------

bool is_executable(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

std::optional<std::string> find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return is_executable(name) ? std::optional(name) : std::nullopt;
  }
  std::string_view dirs = k_path;
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
    c.samples.reserve(static_cast<std::size_t>(o.runs));
  }
  std::fprintf(stderr, "%s: %d runs x %zu cases ", group.name.c_str(), o.runs, group.cases.size());
  for (int run = 0; run < o.runs; ++run) {
    for (Case& c : group.cases) {
      if (!c.remove_before.empty()) ::unlink(c.remove_before.c_str());
      Sample sample = run_once(c.command, "/dev/null", "/dev/null");
      if (!WIFEXITED(sample.status) || WEXITSTATUS(sample.status) != 0) {
        die(group.name + " / " + c.label + ": run " + std::to_string(run) + ": " +
            describe_status(sample.status));
      }
      c.samples.push_back(sample);
    }
    if ((run + 1) % std::max(1, o.runs / 10) == 0) std::fputc('.', stderr);
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
  std::string mpiexec;
  std::string scratch;  // removed at exit unless --keep-tmp
};

// A clean environment: no PBS_*, SLURM_*, EZPZ_* or MASTER_* from the caller.
std::vector<std::string> base_env(const Setup& s) {
  return {std::string("PATH=") + k_path, "HOME=" + s.scratch + "/home",
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
  auto program = find_on_path(argv[0]);
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
  auto mpiexec = find_on_path(o.mpiexec.empty() ? "mpiexec" : o.mpiexec);
  if (!mpiexec) die("mpiexec not found on " + std::string(k_path) + "; pass --mpiexec PATH");
  s.mpiexec = *mpiexec;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ezpz-bench.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) die("mkdtemp: " + std::string(std::strerror(errno)));
  s.scratch = pattern;
  if (!o.keep_tmp) g_scratch = s.scratch;
  fs::create_directories(s.scratch + "/home");
  fs::create_directories(s.scratch + "/run");
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
              version.c_str(), s.ezpz.c_str(), s.mpiexec.c_str(), o.runs, o.warmup,
              load_average().c_str());
  std::fflush(stdout);

  std::vector<Group> groups;
  if (o.what == "launch_overhead" || o.what == "all") groups = launch_overhead_groups(s);
  if (o.what == "dry_run_scale" || o.what == "all") {
    for (Group& g : dry_run_scale_groups(s)) groups.push_back(std::move(g));
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
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  std::printf(
      "\nmaxRSS: the child's peak resident set from wait4(), with its descendants. A "
      "spawned child starts out\nsharing this harness's memory, so no row reads below "
      "the harness's own %.1f MB.\n",
      static_cast<double>(self.ru_maxrss) / 1024.0);
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
