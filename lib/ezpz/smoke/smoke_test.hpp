#pragma once
// `ezpz test`: the trainer's command line, and the verdict read back from
// the summary.json its rank 0 writes. Pure.
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ezpz {

// Where a run's outputs go by default, relative to the current directory:
// outputs/ezpz-test/<YYYY-MM-DD-HHMMSS> in local time. Shared by `ezpz test`
// and ezpz-smoke run alone.
std::string smoke_output_dir(std::time_t now);

// The trainer's argv: the trainer, the user's trainer flags as given, and
// --output-dir `output_dir` unless the user chose one. Returns the output
// directory used, too.
struct SmokeCommand {
  std::vector<std::string> argv;
  std::string output_dir;
};
SmokeCommand smoke_command(const std::string& trainer, const std::vector<std::string>& args,
                           const std::string& default_output_dir);

struct Verdict {
  bool passed = false;
  std::string line;  // "ezpz test: PASS ..." or "ezpz test: FAIL ..."
};

// The one-line verdict. `summary` is summary.json's text (nullopt when the
// trainer never wrote it); `exit_status` is what the launch returned; `run_ended`, the
// launch's own account of its last attempt ("bad_node: exit status 11: rank 1 ... killed by
// signal 11 (SIGSEGV)"), said where the trainer's summary says nothing (none written, or
// passed and the launch failed).
Verdict judge_smoke_run(const std::optional<std::string>& summary, int exit_status,
                        std::string_view output_dir, std::string_view run_ended = {});

}  // namespace ezpz
