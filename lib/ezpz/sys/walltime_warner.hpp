#pragma once
// --signal's timer in the executor's wait loop: at the scheduled time, the signal goes to the
// launcher, which passes it on to every rank on every node (walltime::delivery_for found that
// it verifiably does), or else to `signal_ranks`, which runs a step on each node that signals
// the ranks there. Sent once per attempt, never after the job has begun to stop.
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "ezpz/supervise/walltime_warning.hpp"

namespace ezpz::sys {

class WalltimeWarner {
 public:
  // `signal_ranks(signal)`: the node step; true when it reached the ranks.
  using SignalRanks = std::function<bool(int signal)>;
  WalltimeWarner(const std::optional<walltime::Schedule>& schedule, SignalRanks signal_ranks);
  // How long the wait loop may sleep before the signal is due.
  std::chrono::milliseconds until_due(std::chrono::milliseconds budget) const;
  // Sends the signal to `launcher` once it is due; returns the verdict's words when it did.
  std::optional<std::string> send_if_due(pid_t launcher);

 private:
  std::optional<walltime::WarnSpec> spec_;  // empty once sent, or without --signal
  walltime::Delivery delivery_ = walltime::Delivery::launcher;
  SignalRanks signal_ranks_;
  std::chrono::steady_clock::time_point due_{};
};

}  // namespace ezpz::sys
