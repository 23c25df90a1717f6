#include "ezpz/core/env.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"

namespace ezpz {

std::optional<std::string> get_nonempty(const Env& env, std::string_view name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

Env with_python_path(Env env, const std::string& dir) {
  const std::optional<std::string> old = get_nonempty(env, "PYTHONPATH");
  env.insert_or_assign("PYTHONPATH", old ? dir + ":" + *old : dir);
  return env;
}

std::optional<std::pair<std::string, std::string>> first_nonempty(
    const Env& env, const std::vector<std::string_view>& names) {
  for (std::string_view name : names) {
    if (auto value = get_nonempty(env, name)) return std::pair{std::string(name), *value};
  }
  return std::nullopt;
}

namespace {

// What marks a credential in a variable's name, case-insensitive. Broad on
// purpose: a value hidden for nothing costs a user one look at the
// environment; a token printed into a shared log is leaked. README "Secrets"
// lists the same words. Parts match anywhere (PGPASS, DB_CREDENTIALS); words
// only between underscores, where a part would hide PATH or PWD.
constexpr std::array<std::string_view, 15> k_secret_parts = {
    "TOKEN",   "KEY",  "SECRET", "PASS", "CREDENTIAL", "AUTH",  "COOKIE",   "SESSION",
    "PRIVATE", "CERT", "BEARER", "SALT", "WEBHOOK",    "NETRC", "SIGNATURE"};
constexpr std::array<std::string_view, 7> k_secret_words = {"PAT", "PW",  "JWT", "PSK",
                                                            "OTP", "SIG", "DSN"};

// What marks a credential in a value, whatever its name (issue 45: DATABASE_URL's password
// and a connection string's were printed). Case-insensitive pieces of connection strings and
// headers, and the prefixes of well-known token formats (GitHub's, Slack's, Hugging Face's,
// AWS access key ids, OpenAI's).
constexpr std::array<std::string_view, 6> k_secret_value_parts = {"password=", "pwd=",   "bearer ",
                                                                  "secret=",   "token=", "sig="};
constexpr std::array<std::string_view, 9> k_token_prefixes = {
    "ghp_", "gho_", "ghs_", "github_pat_", "xoxb-", "xoxp-", "hf_", "AKIA", "sk-"};

std::string upper_case(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return upper;
}

// scheme://user:password@host...: a URL that carries a password.
bool url_with_password(std::string_view value) {
  const std::size_t scheme = value.find("://");
  if (scheme == std::string_view::npos) return false;
  const std::string_view rest = value.substr(scheme + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  const std::size_t at = authority.rfind('@');
  return at != std::string_view::npos &&
         authority.substr(0, at).find(':') != std::string_view::npos;
}

}  // namespace

bool is_secret_name(std::string_view name) {
  const std::string upper = upper_case(name);
  auto contains = [&](std::string_view part) { return upper.find(part) != std::string::npos; };
  std::vector<std::string_view> words = split(upper, '_');
  auto is_word = [&](std::string_view word) {
    return std::find(words.begin(), words.end(), word) != words.end();
  };
  return std::any_of(k_secret_parts.begin(), k_secret_parts.end(), contains) ||
         std::any_of(k_secret_words.begin(), k_secret_words.end(), is_word);
}

bool is_secret_value(std::string_view value) {
  std::string lower(value);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto holds = [&](std::string_view part) { return lower.find(part) != std::string::npos; };
  const auto starts = [&](std::string_view prefix) { return value.starts_with(prefix); };
  return url_with_password(value) ||
         std::any_of(k_secret_value_parts.begin(), k_secret_value_parts.end(), holds) ||
         std::any_of(k_token_prefixes.begin(), k_token_prefixes.end(), starts);
}

bool is_secret(std::string_view name, std::string_view value) {
  return is_secret_name(name) || is_secret_value(value);
}

std::string_view shown_value(std::string_view name, std::string_view value) {
  return is_secret(name, value) ? std::string_view("<redacted>") : value;
}

bool is_variable_name(std::string_view name) {
  auto word = [](char c) { return c == '_' || std::isalnum(static_cast<unsigned char>(c)); };
  return !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front())) &&
         std::all_of(name.begin(), name.end(), word);
}

std::pair<std::string, std::string> parse_assignment(std::string_view text, std::string_view flag) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw Error(fmt::format("{} {}: expected NAME=VALUE", flag, text));
  }
  std::string_view name = text.substr(0, eq);
  // The name reaches `export NAME=...` lines users eval and paste: one that
  // is not a name would run as shell code there, or abort a `set -e` script.
  if (!is_variable_name(name)) {
    throw Error(fmt::format("{} {:?}: {:?} {}", flag, text, name, k_not_a_variable_name));
  }
  return {std::string(name), std::string(text.substr(eq + 1))};
}

std::optional<std::string> ezpz_cache_dir(const Env& env) {
  if (auto cache = get_nonempty(env, "XDG_CACHE_HOME")) return *cache + "/ezpz";
  if (auto home = get_nonempty(env, "HOME")) return *home + "/.cache/ezpz";
  return std::nullopt;
}

bool trusted_cache_file(const CacheFileFacts& f) {
  constexpr unsigned k_group_or_others_write = 0022;
  return f.regular && f.owner == f.user && (f.mode & k_group_or_others_write) == 0 &&
         (f.dir_owner == f.user || f.dir_owner == 0) && (f.dir_mode & k_group_or_others_write) == 0;
}

std::optional<std::string> run_file_path(const Env& env, std::string_view subcommand,
                                         std::string_view name) {
  if (auto dir = get_nonempty(env, "EZPZ_RUN_DIR")) return fmt::format("{}/{}", *dir, name);
  if (auto cache = ezpz_cache_dir(env)) return fmt::format("{}/{}/{}", *cache, subcommand, name);
  return std::nullopt;
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, int>, 5> k_units = {
      {{"", 0}, {"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}}};
  const std::size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
  std::string unit(text.substr(digits));
  std::transform(unit.begin(), unit.end(), unit.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (unit.size() == 3 && unit.ends_with("IB"))
    unit.resize(1);  // KiB
  else if (unit.ends_with("B"))
    unit.pop_back();  // KB, B
  std::optional<long> count = parse_count(text.substr(0, digits));
  for (const auto& [name, shift] : k_units) {
    if (!count || unit != name) continue;
    const auto value = static_cast<std::uint64_t>(*count);
    if (value > (std::uint64_t{1} << (62 - shift))) return std::nullopt;
    return value << shift;
  }
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
