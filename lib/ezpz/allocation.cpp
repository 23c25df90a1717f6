#include "ezpz/allocation.hpp"

#include <unordered_set>

#include <fmt/format.h>

#include "ezpz/error.hpp"
#include "ezpz/files.hpp"

namespace ezpz {

std::string_view short_host_name(std::string_view host) { return host.substr(0, host.find('.')); }

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

std::vector<std::string> parse_hostfile(std::string_view text) {
  std::vector<std::string> hosts;
  while (!text.empty()) {
    auto newline = text.find('\n');
    std::string_view host = host_of_line(text.substr(0, newline));
    if (!host.empty()) hosts.emplace_back(host);
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
