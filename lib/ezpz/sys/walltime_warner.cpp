#include "ezpz/sys/walltime_warner.hpp"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "ezpz/core/log.hpp"
#include "ezpz/sys/job_end.hpp"

namespace ezpz::sys {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The epoch time turned into the steady clock's once, so a change of the wall clock meanwhile
// (NTP) moves nothing. An attempt that starts too late for the signal gets none.
WalltimeWarner::WalltimeWarner(const std::optional<walltime::Schedule>& schedule,
                               SignalRanks signal_ranks)
    : signal_ranks_(std::move(signal_ranks)) {
  if (!schedule) return;
  delivery_ = schedule->delivery;
  const std::int64_t now = epoch_now();
  if (auto line = walltime::too_late_warning(schedule->spec, schedule->end, now)) {
    log::warn("{}", *line);
    return;
  }
  spec_ = schedule->spec;
  due_ = Clock::now() +
         std::chrono::seconds(walltime::seconds_until_warning(schedule->end, now, *spec_));
}

milliseconds WalltimeWarner::until_due(milliseconds budget) const {
  if (!spec_) return budget;
  const auto left = std::chrono::ceil<milliseconds>(due_ - Clock::now());
  return std::clamp(left, milliseconds(0), budget);
}

std::optional<std::string> WalltimeWarner::send_if_due(pid_t launcher) {
  if (!spec_ || Clock::now() < due_) return std::nullopt;
  const walltime::WarnSpec spec = *spec_;
  spec_.reset();
  log::write("ezpz: ", walltime::sending_line(spec));
  if (delivery_ == walltime::Delivery::node_step) {
    if (!signal_ranks_ || !signal_ranks_(spec.signal)) return std::nullopt;
  } else if (::kill(launcher, spec.signal) != 0) {
    log::write("ezpz: ", fmt::format("cannot send {} to the launcher: {}", walltime::describe(spec),
                                     std::strerror(errno)));
    return std::nullopt;
  }
  return walltime::verdict_words(spec, delivery_);
}

}  // namespace ezpz::sys
