#pragma once
// An environment snapshot, captured once in main and passed down as a value,
// so that no code below main reads the process environment.
#include <cstdint>
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

// `env` with `dir` first on PYTHONPATH (the rest kept after it).
Env with_python_path(Env env, const std::string& dir);

// The first of `names` that is set and non-empty, with its name.
std::optional<std::pair<std::string, std::string>> first_nonempty(
    const Env& env, const std::vector<std::string_view>& names);

// True for names that look like credentials (*TOKEN*, *KEY*, *PASS*, *AUTH*,
// *CREDENTIAL* ..., case-insensitive; k_secret_markers in env.cpp): their
// values are never printed.
bool is_secret_name(std::string_view name);

// True for values shaped like credentials whatever their name: a URL with a password
// (postgres://u:pw@h/db), a connection string's Password=, a bearer header, a well-known
// token format (ghp_..., xoxb-..., hf_..., AKIA...).
bool is_secret_value(std::string_view value);

// A secret by its name or by its value's shape.
bool is_secret(std::string_view name, std::string_view value);

// What ezpz prints for a variable: "<redacted>" in place of a secret's value.
std::string_view shown_value(std::string_view name, std::string_view value);

// An environment variable name a shell accepts: letters, digits and _, not
// starting with a digit.
bool is_variable_name(std::string_view name);
inline constexpr std::string_view k_not_a_variable_name =
    "is not a variable name (letters, digits and _, not starting with a digit)";

// Parses "K=V" (from -x/--env); throws Error naming `flag` when '=' is absent
// or the name is empty or not a variable name.
std::pair<std::string, std::string> parse_assignment(std::string_view text, std::string_view flag);

// ezpz's per-user cache directory: $XDG_CACHE_HOME/ezpz, else $HOME/.cache/ezpz;
// nullopt when neither is set.
std::optional<std::string> ezpz_cache_dir(const Env& env);

// Whether a cache file may be believed, as ssh believes its files: a regular file owned by
// the user, and it and its directory writable by nobody else (the directory owned by the
// user or root). A cache another user could write would choose what ezpz runs.
struct CacheFileFacts {
  bool regular = false;
  unsigned owner = 0, mode = 0, dir_owner = 0, dir_mode = 0;
  unsigned user = 0;  // the effective uid
};
bool trusted_cache_file(const CacheFileFacts& facts);

// Where a file a subcommand leaves for the user goes unless an option names one (doctor's and
// yeet's failed-nodes files): $EZPZ_RUN_DIR/<name>, else <ezpz cache dir>/<subcommand>/<name>;
// nullopt when neither is known. Never the current directory, which may be a checkout.
std::optional<std::string> run_file_path(const Env& env, std::string_view subcommand,
                                         std::string_view name);

// A strict non-negative decimal integer, or nullopt ("12", not "12x" or "-1").
std::optional<long> parse_count(std::string_view text);

// A size in bytes: a count with an optional binary suffix K, M, G or T (also
// KiB, MB ..., any case: 1K = 1024), at most 2^62; nullopt otherwise.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace ezpz
