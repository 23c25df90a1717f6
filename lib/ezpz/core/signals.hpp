#pragma once
// Signal names and numbers: the one table behind `ezpz kill --signal`, the executor's
// "forwarding SIGINT" lines and an attempt's "died of signal 13 (SIGPIPE)".
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ezpz {

struct SignalName {
  std::string_view abbrev;  // "TERM": the name without its "SIG", as glibc's sigabbrev_np gives it
  int number;
};

// Every signal Linux names (1-31; the real-time ones have numbers only), in number order.
std::span<const SignalName> signal_names();

// "TERM" for SIGTERM; nullopt for a signal without a name.
std::optional<std::string_view> signal_abbrev(int number);

// The number of "TERM" or "SIGTERM" (upper case, as kill(1) writes them); nullopt otherwise.
std::optional<int> signal_number(std::string_view name);

// "SIGTERM"; "signal 40" for one without a name.
std::string signal_name(int number);

}  // namespace ezpz
