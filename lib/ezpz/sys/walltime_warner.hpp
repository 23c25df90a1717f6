#pragma once
// --signal's timer in the executor's wait loop: at the scheduled time, the signal goes to the
// launcher, which passes it on to every rank on every node (walltime::check_forwarded made sure
// it does). Sent once per attempt, never after the job has begun to stop.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "ezpz/supervise/walltime_warning.hpp"

namespace ezpz::sys {

class WalltimeWarner {
 public:
  explicit WalltimeWarner(const std::optional<walltime::Schedule>& schedule);
  // How long the wait loop may sleep before the signal is due.
  std::chrono::milliseconds until_due(std::chrono::milliseconds budget) const;
  // Sends the signal to `launcher` once it is due; returns the verdict's words when it did.
  std::optional<std::string> send_if_due(pid_t launcher);

 private:
  std::optional<walltime::WarnSpec> spec_;  // empty once sent, or without --signal
  std::chrono::steady_clock::time_point due_{};
};

}  // namespace ezpz::sys
