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
// Options: options.cpp (ezpz-bench --help); the files: bench/README.md.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "benchmarks.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::bench {
namespace {

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

// The two lines every report starts with: the host, ezpz's version and the run's settings.
void print_banner(const Options& o, const Setup& s) {
  utsname host{};
  ::uname(&host);
  std::string version = trim(capture({{s.ezpz, "--version"}, base_env(s)}, s.scratch));
  std::printf("ezpz-bench %s | %s | %s %s %s | %ld cores, %s\n", o.what.c_str(), now_utc().c_str(),
              host.sysname, host.release, host.machine, ::sysconf(_SC_NPROCESSORS_ONLN),
              cpu_model().c_str());
  std::printf("%s (%s) | mpiexec: %s | %d runs/case, alternated, %d warm-up | load %s\n",
              version.c_str(), s.ezpz.c_str(), s.mpiexec.c_str(),
              o.runs_or(o.what == "doctor" ? 20 : 200), o.warmup, load_average().c_str());
}

// Why the training benchmarks are skipped (empty: they run, or are not asked for); dies
// when they were asked for by name and cannot run.
std::string check_training(const Options& o, const Setup& s) {
  if (!runs_ddp(o) && !runs_first_step(o)) return "";
  std::string missing = training_missing(s);
  if (!missing.empty() && o.what != "all") die(missing);
  if (missing.empty()) {
    std::printf("training: ezpz-smoke %s | python %s | %s\n", s.smoke.c_str(), s.python.c_str(),
                s.ddp_script.c_str());
  }
  return missing;
}

// The timed groups asked for.
std::vector<Group> timed_groups(const Options& o, const Setup& s) {
  std::vector<Group> groups;
  if (runs_launch(o)) groups = launch_overhead_groups(s);
  if (runs_dry(o)) {
    for (Group& g : dry_run_scale_groups(s)) groups.push_back(std::move(g));
  }
  if (!runs_doctor(o)) return groups;
  std::string why = doctor_missing(s);
  if (!why.empty() && o.what != "all") die(why);
  if (why.empty()) {
    for (Group& g : doctor_groups(s)) groups.push_back(std::move(g));
  } else {
    std::printf("doctor: skipped: %s\n", why.c_str());
  }
  return groups;
}

// Every target's verdict, for the summary at the end.
struct Summary {
  bool all_met = true;
  std::vector<std::string> lines;

  void add(const Verdict& verdict) {
    all_met = all_met && verdict.met;
    lines.insert(lines.end(), verdict.lines.begin(), verdict.lines.end());
  }
};

void run_timed(std::vector<Group>& groups, const Options& o, const Setup& s, Summary& summary) {
  for (Group& g : groups) {
    run_group(g, o, s.scratch);
    summary.add(print_group(g, o.show_commands, stdout));
    if (!o.csv.empty()) append_csv(g, o.csv);
    std::fflush(stdout);
  }
}

// A training benchmark: whether it was asked for, what runs it, its CSV file's header.
struct TrainingBenchmark {
  const char* name;
  bool (*asked)(const Options&);
  TrainOutcome (*run)(const Setup&, const Options&);
  const char* csv_header;
};
constexpr TrainingBenchmark k_training[] = {
    {.name = "smoke_vs_ddp",
     .asked = runs_ddp,
     .run = smoke_vs_ddp,
     .csv_header = "group,case,rep,samples_per_s,step_ms,data_ms,forward_ms,backward_ms,"
                   "allreduce_ms,optimizer_ms,wall_s"},
    {.name = "first_step",
     .asked = runs_first_step,
     .run = first_step,
     .csv_header = "group,case,run,first_step_line_ms,trainer_first_step_ms,load_ms,setup_ms,"
                   "wall_ms"},
};

// The training benchmarks asked for: each prints its tables, the verdict goes to
// `summary`, and with --csv its rows to FILE.<name>.csv.
void run_training(const Options& o, const Setup& s, Summary& summary) {
  for (const TrainingBenchmark& benchmark : k_training) {
    if (!benchmark.asked(o)) continue;
    std::printf("\nload average before %s: %s\n", benchmark.name, load_average().c_str());
    std::fflush(stdout);
    TrainOutcome outcome = benchmark.run(s, o);
    if (!o.csv.empty()) {
      append_lines(outcome.csv, o.csv + "." + benchmark.name + ".csv", benchmark.csv_header);
    }
    summary.add(outcome.verdict);
  }
  std::fflush(stdout);
}

// The RSS floor every row shares: a spawned child starts out as a copy of this process.
void print_rss_note() {
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  std::printf(
      "\nmaxRSS: the child's peak resident set from wait4(), with its descendants. A "
      "spawned child starts out\nsharing this harness's memory, so no row reads below "
      "the harness's own %.1f MB.\n",
      static_cast<double>(self.ru_maxrss) / 1024.0);
}

void print_summary(const Summary& summary) {
  std::printf("load average at the end: %s\n", load_average().c_str());
  std::printf("\ntargets: %s\n", summary.all_met ? "all met" : "SOME MISSED");
  for (const std::string& line : summary.lines) std::printf("  %s\n", line.c_str());
}

int run(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  Setup s = make_setup(o, sys::capture_environment());
  print_banner(o, s);
  std::string missing = check_training(o, s);
  std::fflush(stdout);
  std::vector<Group> groups = timed_groups(o, s);
  Summary summary;
  run_timed(groups, o, s, summary);
  if (!missing.empty()) {
    std::printf("\nsmoke_vs_ddp, first_step: skipped: %s\n", missing.c_str());
  } else {
    run_training(o, s, summary);
  }
  if (!groups.empty()) print_rss_note();
  print_summary(summary);
  if (o.keep_tmp) {
    std::printf("scratch kept: %s\n", s.scratch.c_str());
  } else {
    std::error_code error;
    std::filesystem::remove_all(s.scratch, error);
  }
  return 0;
}

}  // namespace
}  // namespace ezpz::bench

int main(int argc, char** argv) {
  try {
    return ezpz::bench::run(argc, argv);
  } catch (const ezpz::Error& error) {
    ezpz::bench::die(error.what());
  }
}
