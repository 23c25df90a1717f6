#pragma once
// Whether to colour output, decided once per stream: --color, NO_COLOR, the terminal.
#include <optional>
#include <string>
#include <string_view>

#include "ezpz/core/env.hpp"

namespace ezpz {

enum class ColorMode { automatic, always, never };

// "auto", "always", "never"; nullopt for anything else.
std::optional<ColorMode> parse_color_mode(std::string_view text);

// always and never are the user's word. auto colours a terminal unless NO_COLOR is set
// to a non-empty value (no-color.org) or TERM is "dumb".
bool use_color(ColorMode mode, const Env& env, bool is_terminal);

enum class Paint { red, green, yellow, bold, bold_red };

// `text` in ANSI SGR colour when `on`, else unchanged.
std::string paint(std::string_view text, Paint colour, bool on);

}  // namespace ezpz
