#pragma once
// The effects of `ezpz submit`: the script's file, and qsub/sbatch run on it
// (an argv, never a shell line).
#include <string>
#include <string_view>

#include "ezpz/core/env.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {

// Writes `text` to `path` atomically (a sibling temporary file, renamed over
// it), mode 0644. Throws Error naming `origin` and the path on failure.
void write_script(const std::string& path, std::string_view text, std::string_view origin);

// Whether `path` names a regular file (following links): what EZPZ_SETUP_ENV must name.
bool is_regular_file(const std::string& path);

struct SubmitOutcome {
  int exit_code = 0;   // the submitter's own, or 128+N when it died of signal N
  std::string output;  // its stdout (its stderr goes to ezpz's)
};

// Runs `program` (a full path) with `script_path` as its one argument, in
// `scratch` for its captured stdout.
SubmitOutcome run_submitter(const std::string& program, const std::string& script_path,
                            const ScratchDirectory& scratch, const Env& env);

}  // namespace ezpz::sys
