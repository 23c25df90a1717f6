#pragma once
// ezpz's own log lines: stderr only ("ezpz: ..."), because stdout belongs to
// the job and to plans. The level is set once in main.
#include <cstdio>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace ezpz::log {

enum class Level { quiet = 0, warn = 1, info = 2, debug = 3 };

void set_level(Level level);
Level level();
inline bool enabled(Level at) {
  return level() >= at;
}
// "debug", "info", "warn", "quiet" (also "warning", "error"), any case.
std::optional<Level> level_from_string(std::string_view text);

// Colour the "error:" and "warning:" of ezpz's own lines (stderr's --color decision).
void set_color(bool on);

void write(std::string_view prefix, std::string_view message);

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  if (level() >= Level::debug) write("ezpz: ", fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  if (level() >= Level::info) write("ezpz: ", fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  if (level() >= Level::warn) {
    write("ezpz: warning: ", fmt::format(format, std::forward<Args>(args)...));
  }
}

}  // namespace ezpz::log
