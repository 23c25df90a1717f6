#include <csignal>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ezpz/core/signals.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

// The attempt's "died of signal 13 (SIGPIPE)" was sigabbrev_np's word: the table says the same
// for every number, and nothing for the real-time signals.
TEST_CASE("the signal table names what glibc names", "[signals]") {
  for (int number = 0; number <= 65; ++number) {
    const char* glibc = ::sigabbrev_np(number);
    INFO("signal " << number);
    CHECK(signal_abbrev(number) == (glibc ? std::optional<std::string_view>(glibc) : std::nullopt));
  }
}

TEST_CASE("every named signal round-trips, with or without SIG", "[signals]") {
  for (const SignalName& row : signal_names()) {
    CHECK(signal_number(row.abbrev) == row.number);
    CHECK(signal_number("SIG" + std::string(row.abbrev)) == row.number);
    CHECK(signal_name(row.number) == "SIG" + std::string(row.abbrev));
  }
}

TEST_CASE("names in the three forms ezpz prints", "[signals]") {
  const std::vector<std::tuple<int, std::string, std::optional<std::string_view>>> rows = {
      {SIGTERM, "SIGTERM", "TERM"},  {SIGINT, "SIGINT", "INT"},
      {SIGHUP, "SIGHUP", "HUP"},     {SIGQUIT, "SIGQUIT", "QUIT"},
      {SIGUSR1, "SIGUSR1", "USR1"},  {SIGUSR2, "SIGUSR2", "USR2"},
      {SIGKILL, "SIGKILL", "KILL"},  {SIGPIPE, "SIGPIPE", "PIPE"},
      {SIGSEGV, "SIGSEGV", "SEGV"},  {SIGIO, "SIGPOLL", "POLL"},
      {SIGIOT, "SIGABRT", "ABRT"},   {40, "signal 40", std::nullopt},
      {0, "signal 0", std::nullopt}, {-1, "signal -1", std::nullopt},
  };
  for (const auto& [number, name, abbrev] : rows) {
    CHECK(signal_name(number) == name);
    CHECK(signal_abbrev(number) == abbrev);
  }
  CHECK_FALSE(signal_number("term").has_value());
  CHECK_FALSE(signal_number("SIG").has_value());
  CHECK_FALSE(signal_number("").has_value());
  CHECK_FALSE(signal_number("SIGFOO").has_value());
  CHECK_FALSE(signal_number("15").has_value());
}
