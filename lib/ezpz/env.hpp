#pragma once
// An environment snapshot, captured once in main and passed down as a value,
// so that no code below main reads the process environment.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ezpz {

using Env = std::map<std::string, std::string, std::less<>>;

// Ordered (name, value) pairs: the order is the order they are rendered in.
using EnvList = std::vector<std::pair<std::string, std::string>>;

// The value of `name` when it is set and non-empty; schedulers treat an empty
// variable as unset.
std::optional<std::string> get_nonempty(const Env& env, std::string_view name);

// The first of `names` that is set and non-empty, with its name.
std::optional<std::pair<std::string, std::string>> first_nonempty(
    const Env& env, const std::vector<std::string_view>& names);

// True for names that look like credentials (*TOKEN*, *KEY*, *SECRET*,
// *PASSWORD*, case-insensitive): their values are never printed.
bool is_secret_name(std::string_view name);

// Parses "K=V" (from -x/--env); throws Error naming `flag` when '=' is absent
// or the name is empty.
std::pair<std::string, std::string> parse_assignment(std::string_view text, std::string_view flag);

// ezpz's per-user cache directory: $XDG_CACHE_HOME/ezpz, else $HOME/.cache/ezpz;
// nullopt when neither is set.
std::optional<std::string> ezpz_cache_dir(const Env& env);

// A strict non-negative decimal integer, or nullopt ("12", not "12x" or "-1").
std::optional<long> parse_count(std::string_view text);

}  // namespace ezpz
