#include "ezpz/env.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "ezpz/error.hpp"

namespace ezpz {

std::optional<std::string> get_nonempty(const Env& env, std::string_view name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::optional<std::pair<std::string, std::string>> first_nonempty(
    const Env& env, const std::vector<std::string_view>& names) {
  for (std::string_view name : names) {
    if (auto value = get_nonempty(env, name)) return std::pair{std::string(name), *value};
  }
  return std::nullopt;
}

bool is_secret_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  static constexpr std::array<std::string_view, 5> k_markers = {"TOKEN", "KEY", "SECRET",
                                                                "PASSWORD", "PASSWD"};
  return std::any_of(k_markers.begin(), k_markers.end(), [&](std::string_view marker) {
    return upper.find(marker) != std::string::npos;
  });
}

std::pair<std::string, std::string> parse_assignment(std::string_view text, std::string_view flag) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw Error(fmt::format("{} {}: expected NAME=VALUE", flag, text));
  }
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

std::optional<std::string> ezpz_cache_dir(const Env& env) {
  if (auto cache = get_nonempty(env, "XDG_CACHE_HOME")) return *cache + "/ezpz";
  if (auto home = get_nonempty(env, "HOME")) return *home + "/.cache/ezpz";
  return std::nullopt;
}

std::optional<long> parse_count(std::string_view text) {
  long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

}  // namespace ezpz
