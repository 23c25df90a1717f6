#pragma once
// The one user-facing error type. Thrown by pure code, caught once in main,
// printed as "ezpz: error: <message>". Messages read "where: what".
#include <stdexcept>
#include <string>

namespace ezpz {

enum class ExitCode : int {
  ok = 0,
  failure = 1,  // a runtime failure that is not the job's own
  usage = 2,    // bad flags, bad config, bad allocation: nothing was run
  // --spares: a failure worth another attempt, and no spare or retry left for it (sysexits'
  // EX_TEMPFAIL: resubmit). Never a rank's own status, so a wrapper can tell it apart.
  spares_exhausted = 75,
  not_found = 127  // the launcher or command does not exist
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::usage)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

}  // namespace ezpz
