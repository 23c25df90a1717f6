#include "ezpz/core/allocation.hpp"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/files.hpp"
#include "ezpz/core/text.hpp"

namespace ezpz {

std::string_view short_host_name(std::string_view host) {
  return ip_literal(host) ? host : host.substr(0, host.find('.'));
}

bool lists_host(const std::vector<std::string>& hosts, std::string_view host) {
  const std::string_view name = short_host_name(host);
  return std::any_of(hosts.begin(), hosts.end(),
                     [name](const std::string& listed) { return short_host_name(listed) == name; });
}

namespace {

std::string_view trim(std::string_view text) {
  const char* blanks = " \t\r\n";
  auto first = text.find_first_not_of(blanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

// "host", "host slots=4", "host:4" (Hydra), "host 4": the host is the first word.
// One pass per line: nodefiles of 10,000+ lines are read on every launch.
std::string_view host_of_line(std::string_view line) {
  line = trim(line);
  size_t end = 0;
  while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != ':' &&
         line[end] != '#') {
    ++end;
  }
  return line.substr(0, end);
}

}  // namespace

std::string read_naming(const FileReader& files, const std::string& path, std::string_view origin) {
  try {
    return files.read(path);
  } catch (const Error& error) {
    throw Error(fmt::format("{}: {}", origin, error.what()), error.code());
  }
}

namespace {

bool is_label_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

std::optional<std::string> label_problem(std::string_view label) {
  if (label.empty()) return "an empty label (two dots, or a dot at either end)";
  if (label.size() > 63) return fmt::format("a label of {} characters (at most 63)", label.size());
  if (label.front() == '-' || label.back() == '-') return "a label that starts or ends with '-'";
  return std::nullopt;
}

// Long or binary names are cut for the one-line message.
std::string shown_host(std::string_view host) {
  constexpr std::size_t k_shown = 40;
  if (host.size() <= k_shown) return fmt::format("{:?}", host);
  return fmt::format("{:?}... ({} characters)", host.substr(0, k_shown), host.size());
}

}  // namespace

std::optional<std::string> host_name_problem(std::string_view host) {
  if (host.size() > 253) return fmt::format("{} characters (at most 253)", host.size());
  for (char c : host) {
    if (c != '.' && !is_label_char(c)) {
      return fmt::format("it holds {:?} (letters, digits, '-', '_' and '.' only)",
                         std::string(1, c));
    }
  }
  for (std::string_view label : split(host, '.')) {
    if (auto problem = label_problem(label)) return problem;
  }
  return std::nullopt;
}

void check_host_name(std::string_view host, std::string_view where) {
  if (auto problem = host_name_problem(host)) {
    throw Error(fmt::format("{}: {} is not a host name: {}", where, shown_host(host), *problem));
  }
}

namespace {

bool all_digits(std::string_view text) {
  return !text.empty() && text.size() <= 6 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// What may follow a host on its line: a count of slots as Hydra (":4"), Open MPI ("slots=4",
// "max_slots=8", "max-slots=8") or a bare number write it, and a comment. Nothing else: a launcher
// reads more words than these (Hydra's "user=" reaches ssh's argv, "-F/path/evil@n01"), and a word
// ezpz did not check must not reach it.
bool is_slots_word(std::string_view word) {
  for (std::string_view prefix : {"slots=", "max_slots=", "max-slots=", ":"}) {
    if (word.starts_with(prefix)) return all_digits(word.substr(prefix.size()));
  }
  return all_digits(word);
}

void check_rest_of_line(std::string_view rest, std::string_view where) {
  rest = rest.substr(0, rest.find('#'));
  for (std::string_view word : split(rest, ' ')) {
    word = trim(word);
    if (word.empty() || is_slots_word(word)) continue;
    throw Error(
        fmt::format("{}: {} is not a host's slot count (host, host:N, host slots=N, "
                    "host max_slots=N, host N)",
                    where, shown_host(word)));
  }
}

}  // namespace

std::vector<std::string> parse_hostfile(std::string_view text, std::string_view source) {
  std::vector<std::string> hosts;
  for (int line = 1; !text.empty(); ++line) {
    auto newline = text.find('\n');
    const std::string_view whole = trim(text.substr(0, newline));
    std::string_view host = host_of_line(whole);
    if (!host.empty()) {
      const std::string where = fmt::format("{}:{}", source, line);
      check_host_name(host, where);
      check_rest_of_line(whole.substr(host.size()), where);
      hosts.emplace_back(host);
    }
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
  }
  return hosts;
}

std::vector<std::string> unique_hosts(const std::vector<std::string>& hosts) {
  std::vector<std::string> unique;
  std::unordered_set<std::string_view> seen;
  seen.reserve(hosts.size());
  for (const std::string& host : hosts) {
    if (seen.insert(short_host_name(host)).second) unique.push_back(host);
  }
  return unique;
}

}  // namespace ezpz
