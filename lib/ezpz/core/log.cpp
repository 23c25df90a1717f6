#include "ezpz/core/log.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <utility>

#include "ezpz/core/color.hpp"

namespace ezpz::log {
namespace {
Level g_level = Level::warn;
bool g_color = false;

// The prefixes whose word carries a colour.
struct Painted {
  std::string_view prefix;
  std::string_view word;
  Paint colour;
};
constexpr std::array<Painted, 2> k_painted = {{
    {"ezpz: error: ", "error:", Paint::bold_red},
    {"ezpz: warning: ", "warning:", Paint::yellow},
}};

std::string painted(std::string_view prefix) {
  for (const Painted& p : k_painted) {
    if (g_color && prefix == p.prefix) return "ezpz: " + paint(p.word, p.colour, true) + " ";
  }
  return std::string(prefix);
}
}  // namespace

void set_color(bool on) {
  g_color = on;
}

void set_level(Level level) {
  g_level = level;
}
Level level() {
  return g_level;
}

std::optional<Level> level_from_string(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static const std::array<std::pair<std::string_view, Level>, 6> k_levels = {{
      {"debug", Level::debug},
      {"info", Level::info},
      {"warn", Level::warn},
      {"warning", Level::warn},
      {"error", Level::quiet},
      {"quiet", Level::quiet},
  }};
  for (const auto& [name, level] : k_levels) {
    if (name == lower) return level;
  }
  return std::nullopt;
}

void write(std::string_view prefix, std::string_view message) {
  // One write per line, so lines from concurrent ezpz processes do not interleave.
  std::string line = painted(prefix) + std::string(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace ezpz::log
