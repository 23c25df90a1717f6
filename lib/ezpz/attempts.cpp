#include "ezpz/attempts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <utility>

#include <fmt/format.h>

#include "ezpz/error.hpp"

namespace ezpz {
namespace {

constexpr std::array<std::pair<Ending, std::string_view>, 7> k_ending_names = {{
    {Ending::success, "success"},
    {Ending::application_error, "application_error"},
    {Ending::bad_node, "bad_node"},
    {Ending::hang, "hang"},
    {Ending::timeout, "timeout"},
    {Ending::walltime, "walltime"},
    {Ending::interrupted, "interrupted"},
}};

// Every host the patterns name in `output`, first seen first, once each.
std::vector<std::string> scrape_hosts(std::string_view output,
                                      const std::vector<BadNodePattern>& patterns) {
  std::vector<std::string> hosts;
  for (const BadNodePattern& pattern : patterns) {
    std::regex regex;
    try {
      regex = std::regex(pattern.regex, std::regex::ECMAScript | std::regex::multiline);
    } catch (const std::regex_error& e) {
      throw Error(fmt::format("bad_node_patterns {}: invalid regular expression: {}", pattern.name,
                              e.what()));
    }
    for (std::cregex_iterator it(output.data(), output.data() + output.size(), regex), end;
         it != end; ++it) {
      if (it->size() < 2 || !(*it)[1].matched) continue;
      std::string host = (*it)[1].str();
      if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
    }
  }
  return hosts;
}

Classification signal_ending(const AttemptFacts& f) {
  // At walltime the scheduler sends SIGTERM to the job: pass it on, say so, stop.
  if (f.forwarded_signal == SIGTERM && f.scheduler_job) {
    return {Ending::walltime, {}, "SIGTERM inside the job: walltime (or the job was cancelled)"};
  }
  return {Ending::interrupted, {}, fmt::format("interrupted by signal {}", f.forwarded_signal)};
}

}  // namespace

std::string_view to_string(Ending ending) {
  for (const auto& [value, name] : k_ending_names) {
    if (value == ending) return name;
  }
  return "?";
}

Classification classify_attempt(const AttemptFacts& f, const std::vector<BadNodePattern>& patterns) {
  if (f.interrupted) return signal_ending(f);
  if (f.watchdog == Watchdog::timeout) return {Ending::timeout, {}, "the --timeout limit passed"};
  if (f.watchdog == Watchdog::idle) {
    return {Ending::hang, {}, "no output from any rank for --idle-timeout"};
  }
  if (f.exit_status == 0) return {Ending::success, {}, "exit status 0"};
  std::vector<std::string> hosts = scrape_hosts(f.output, patterns);
  if (!hosts.empty()) {
    std::string names;
    for (const std::string& host : hosts) names += (names.empty() ? "" : ", ") + host;
    return {Ending::bad_node, hosts, fmt::format("exit status {}; bad node: {}", f.exit_status, names)};
  }
  // A rank killed by a signal is the machine's doing more often than the job's.
  if (f.exit_status > 128) {
    return {Ending::bad_node, {},
            fmt::format("exit status {}: a rank died of signal {}; no node named", f.exit_status,
                        f.exit_status - 128)};
  }
  return {Ending::application_error, {},
          fmt::format("exit status {}: the job's own failure", f.exit_status)};
}

bool worth_retrying(Ending ending) {
  return ending == Ending::bad_node || ending == Ending::hang || ending == Ending::timeout;
}

double backoff_seconds(int attempt, double first, double cap) {
  if (attempt < 2) return 0;
  return std::min(cap, first * std::pow(2.0, attempt - 2));
}

NodePool split_pool(const std::vector<std::string>& hosts, int spares) {
  if (spares < 0 || static_cast<std::size_t>(spares) >= hosts.size()) {
    throw Error(fmt::format("--spares {}: the allocation has {} host{}; at least one must stay active",
                            spares, hosts.size(), hosts.size() == 1 ? "" : "s"));
  }
  auto split = hosts.end() - spares;
  return {{hosts.begin(), split}, {split, hosts.end()}, {}};
}

std::vector<std::string> replace_bad_nodes(NodePool& pool, const std::vector<std::string>& bad) {
  std::vector<std::string> swaps;
  auto swap_out = [&](std::vector<std::string>::iterator host) {
    std::string spare = pool.spares.front();
    pool.spares.erase(pool.spares.begin());
    swaps.push_back(fmt::format("{} -> {}", *host, spare));
    pool.retired.push_back(*host);
    *host = spare;
  };
  for (const std::string& name : bad) {
    auto host = std::find(pool.active.begin(), pool.active.end(), name);
    if (host == pool.active.end() || pool.spares.empty()) continue;
    swap_out(host);
  }
  // Nobody named, or only hosts already gone: rotate the first one out blind.
  if (swaps.empty() && !pool.spares.empty()) swap_out(pool.active.begin());
  return swaps;
}

}  // namespace ezpz
