#pragma once
// Child spawning for ezpz-bench. Every command is started with posix_spawn() in an
// environment the harness built (nothing leaks from the caller's shell) and reaped with
// wait4(), whose rusage gives the peak RSS; the time covers spawn through wait.
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace ezpz::bench {

// The scratch directory die() removes on the way out; empty (the default) keeps it.
void remove_on_exit(const std::string& scratch);

// "ezpz-bench: <message>" on stderr, the scratch directory removed, exit 2.
[[noreturn]] void die(const std::string& message);

struct Command {
  std::vector<std::string> argv;  // argv[0]: a full path
  std::vector<std::string> env;   // NAME=VALUE, the whole environment
};

struct Sample {
  double ms = 0;
  long maxrss_kb = 0;
  int status = 0;
};

// Spawns and reaps `command` once; stdout goes to `stdout_path`, stderr to
// `stderr_path`. The time covers posix_spawn() through wait4().
Sample run_once(Command& command, const std::string& stdout_path, const std::string& stderr_path);

// Exited with status 0.
bool succeeded(int status);

// Runs `command` once, its output on /dev/null: whether it exited 0.
bool exits_zero(Command command);

// "exit 3", "signal Killed".
std::string describe_status(int status);

// The words as a POSIX shell reads them back (ezpz's own shell_quote).
std::string shell_words(const std::vector<std::string>& words);

// The whole file; empty when it cannot be read.
std::string read_file(const std::string& path);

// An executable regular file at `path` (relative to the current directory without a '/').
bool is_executable(const std::string& path);

// Runs `command` with stdout and stderr captured; dies unless it exits 0.
std::string capture(Command command, const std::string& scratch);

// A job's output line, stamped with the harness's clock when it was read.
struct Line {
  double ms = 0;  // since posix_spawn()
  std::string text;
};

struct Traced {
  std::vector<Line> lines;
  double wall_ms = 0;  // posix_spawn() to wait4()
  int status = 0;
};

// Runs `command` with stdout and stderr on one pipe (stdin /dev/null), stamping
// every line as it is read; `on_line` sees each line with the child's pid. A job
// still running after 15 minutes gets SIGTERM.
Traced run_traced(Command& command, const std::function<void(const Line&, pid_t)>& on_line);

}  // namespace ezpz::bench
