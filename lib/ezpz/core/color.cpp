#include "ezpz/core/color.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace ezpz {

std::optional<ColorMode> parse_color_mode(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, ColorMode>, 3> k_modes = {{
      {"auto", ColorMode::automatic},
      {"always", ColorMode::always},
      {"never", ColorMode::never},
  }};
  for (const auto& [name, mode] : k_modes) {
    if (name == text) return mode;
  }
  return std::nullopt;
}

bool use_color(ColorMode mode, const Env& env, bool is_terminal) {
  if (mode != ColorMode::automatic) return mode == ColorMode::always;
  return is_terminal && !get_nonempty(env, "NO_COLOR") &&
         get_nonempty(env, "TERM").value_or("") != "dumb";
}

std::string paint(std::string_view text, Paint colour, bool on) {
  if (!on) return std::string(text);
  static constexpr std::array<std::string_view, 5> k_sgr = {"31", "32", "33", "1", "1;31"};
  return fmt::format("\033[{}m{}\033[0m", k_sgr[static_cast<size_t>(colour)], text);
}

}  // namespace ezpz
