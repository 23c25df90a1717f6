#include "ezpz/supervise/attempts.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/error.hpp"
#include "ezpz/core/signals.hpp"
#include "ezpz/launchers/launcher_table.hpp"

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

// ezpz-rankenv's own report (rank_env.hpp's exit_report), for every launcher:
// rank 1 (pid 7304) on n02: exited with code 1
constexpr FailureReport k_rankenv_report = {
    R"(^ezpz-rankenv: rank (\d+) \(pid (\d+)\) on (\S+): ((?:exited with code|killed by signal) .*)$)",
    3,
    1,
    2,
    4,
    {SignalTest::if_words_hold, "signal"}};

bool died_of_signal(const SignalTest& test, std::string_view what) {
  switch (test.kind) {
    case SignalTest::always:
      return true;
    case SignalTest::never:
      return false;
    case SignalTest::if_words_hold:
      return what.find(test.words) != std::string_view::npos;
    case SignalTest::unless_words_start:
      return !what.starts_with(test.words);
  }
  return false;
}

// Regular expressions see one line at a time, and at most this much of it: libstdc++'s matcher
// recurses per character, and a rank may print a megabyte without a newline.
constexpr std::size_t k_max_line = 4096;

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    lines.push_back(text.substr(0, std::min(end, k_max_line)));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return lines;
}

bool search(std::string_view line, const std::regex& regex, std::cmatch& match) {
  return std::regex_search(line.data(), line.data() + line.size(), match, regex);
}

std::string group(const std::cmatch& match, int index) {
  return index > 0 && match[index].matched ? match[index].str() : "";
}

struct CompiledReport {
  const FailureReport* report;
  bool own_words;  // ezpz-rankenv's line, not the launcher's
  std::regex regex;
  std::regex what_regex;
};

CompiledReport compile(const FailureReport& r, bool own_words) {
  return {&r, own_words, std::regex(r.regex.begin(), r.regex.end()),
          std::regex(r.what_regex.begin(), r.what_regex.end())};
}

// ezpz-rankenv's report first, then each launcher's, in the table's order.
const std::vector<CompiledReport>& compiled_reports() {
  static const std::vector<CompiledReport> compiled = [] {
    std::vector<CompiledReport> all{compile(k_rankenv_report, true)};
    for (const LauncherRow& row : k_launchers) {
      for (const FailureReport& r : row.failure_reports) all.push_back(compile(r, false));
    }
    return all;
  }();
  return compiled;
}

// The report `line` (followed by `next`) makes, if it makes one.
std::optional<FailedRank> report_in(std::string_view line, std::string_view next) {
  std::cmatch m;
  for (const CompiledReport& c : compiled_reports()) {
    if (!search(line, c.regex, m)) continue;
    const FailureReport& r = *c.report;
    std::string what = group(m, r.what);
    std::cmatch w;
    if (!r.what_regex.empty() && search(next, c.what_regex, w)) {
      what = std::string(r.what_prefix) + w[1].str();
    }
    FailedRank rank{group(m, r.host), group(m, r.ranks), group(m, r.pid), what, false, c.own_words};
    rank.died_of_signal = died_of_signal(r.died_of_signal, rank.what);
    return rank;
  }
  return std::nullopt;
}

}  // namespace

std::vector<FailedRank> failed_ranks(std::string_view output) {
  std::vector<FailedRank> ranks;
  const std::vector<std::string_view> lines = lines_of(output);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view next = i + 1 < lines.size() ? lines[i + 1] : std::string_view();
    if (auto rank = report_in(lines[i], next)) ranks.push_back(std::move(*rank));
  }
  return ranks;
}

std::vector<std::string> lines_before_failure(std::string_view output, std::size_t count) {
  const std::vector<std::string_view> lines = lines_of(output);
  std::size_t end = 0;
  while (end < lines.size() &&
         !report_in(lines[end], end + 1 < lines.size() ? lines[end + 1] : std::string_view())) {
    ++end;
  }
  if (end == lines.size()) return {};
  std::vector<std::string> before;
  for (std::size_t i = end; i > 0 && before.size() < count; --i) {
    if (lines[i - 1].find_first_not_of(" \t\r") != std::string_view::npos) {
      before.emplace(before.begin(), lines[i - 1]);
    }
  }
  return before;
}

std::string describe_ranks(const FailedRank& rank) {
  if (rank.ranks.empty()) return "a rank";
  return fmt::format(
      "{} {}", rank.ranks.find_first_of(",-") == std::string::npos ? "rank" : "ranks", rank.ranks);
}

std::string describe(const FailedRank& rank) {
  std::string who = describe_ranks(rank);
  if (!rank.pid.empty()) who += fmt::format(" (pid {})", rank.pid);
  return fmt::format("{} on {}: {}", who, rank.host, rank.what);
}

std::string ranks_on_host(const std::vector<std::string>& hosts, int ppn, std::string_view host,
                          int world_size) {
  const std::size_t size = world_size > 0 ? static_cast<std::size_t>(world_size) : SIZE_MAX;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (short_host_name(hosts[i]) != short_host_name(host)) continue;
    const std::size_t first = i * static_cast<std::size_t>(ppn);
    const std::size_t last = std::min(first + ppn, size) - 1;  // the last host may hold fewer
    if (first > last) return "";
    return first == last ? std::to_string(first) : fmt::format("{}-{}", first, last);
  }
  return "";
}

std::string host_of_rank(const std::vector<std::string>& hosts, int ppn, std::string_view rank) {
  std::size_t index = 0;
  auto [end, error] = std::from_chars(rank.data(), rank.data() + rank.size(), index);
  if (error != std::errc() || end != rank.data() + rank.size() || ppn < 1) return "";
  index /= static_cast<std::size_t>(ppn);
  return index < hosts.size() ? hosts[index] : "";
}

BadNodeMatcher::BadNodeMatcher(const std::vector<BadNodePattern>& patterns) {
  for (const BadNodePattern& pattern : patterns) {
    try {
      regexes_.emplace_back(pattern.regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Error(fmt::format("bad_node_patterns {}: invalid regular expression: {}", pattern.name,
                              e.what()));
    }
  }
}

std::vector<std::string> BadNodeMatcher::hosts_in(std::string_view text) const {
  std::vector<std::string> hosts;
  std::cmatch m;
  for (std::string_view line : lines_of(text)) {
    for (const std::regex& regex : regexes_) {
      if (!search(line, regex, m) || m.size() < 2 || !m[1].matched) continue;
      std::string host = m[1].str();
      if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
    }
  }
  return hosts;
}

std::vector<std::string> scrape_bad_hosts(std::string_view output,
                                          const std::vector<BadNodePattern>& patterns) {
  return BadNodeMatcher(patterns).hosts_in(output);
}

std::string_view to_string(Ending ending) {
  for (const auto& [value, name] : k_ending_names) {
    if (value == ending) return name;
  }
  return "?";
}

namespace {

Classification signal_ending(const AttemptFacts& f) {
  // At walltime the scheduler sends SIGTERM to the job: pass it on, say so, stop.
  if (f.forwarded_signal == SIGTERM && f.scheduler_job) {
    return {
        Ending::walltime, {}, {}, "SIGTERM inside the job: walltime (or the job was cancelled)"};
  }
  return {Ending::interrupted, {}, {}, fmt::format("interrupted by signal {}", f.forwarded_signal)};
}

// A rank that wrote to a pipe nobody reads (`ezpz launch ... | head` without a record): the
// launchers' words for SIGPIPE. The job's own doing, never a node's.
bool broken_pipe(std::string_view what) {
  return what.find("Broken pipe") != std::string_view::npos ||
         what.find("signal 13") != std::string_view::npos ||
         what.find("SIGNAL: 13") != std::string_view::npos;
}

// Without a named bad node and without the watchdog: the launcher's own words decide, else its
// exit status. A rank killed by a signal is the machine's doing more often than the job's.
Classification by_failed_ranks(const AttemptFacts& f, std::vector<FailedRank> failed) {
  if (!failed.empty()) {
    const FailedRank& first = failed.front();
    const Ending ending = first.died_of_signal && !broken_pipe(first.what)
                              ? Ending::bad_node
                              : Ending::application_error;
    std::string reason = fmt::format("exit status {}: {}", f.exit_status, describe(first));
    return {ending, {}, std::move(failed), std::move(reason)};
  }
  // Not stopped by ezpz (that is signal_ending's): the launcher itself was killed, by the
  // kernel or by someone else (MPICH 4.0's Hydra dies of SIGPIPE when a proxy it writes to
  // has just exited). Retried like a bad node, but no rank is blamed.
  if (f.launcher_signal != 0) {
    const std::optional<std::string_view> abbrev = signal_abbrev(f.launcher_signal);
    return {Ending::bad_node,
            {},
            {},
            fmt::format("exit status {}: the launcher itself died of signal {} ({}); the ranks' "
                        "statuses were lost with it",
                        f.exit_status, f.launcher_signal,
                        abbrev ? fmt::format("SIG{}", *abbrev) : "unnamed")};
  }
  if (f.exit_status == 128 + SIGPIPE) {
    return {Ending::application_error,
            {},
            {},
            fmt::format("exit status {}: a rank wrote to a closed pipe (SIGPIPE): the reader of "
                        "the job's output went away",
                        f.exit_status)};
  }
  // 129-192: 128+N for signal N; 255 is a launcher's own "something failed".
  if (f.exit_status > 128 && f.exit_status <= 128 + 64) {
    return {Ending::bad_node,
            {},
            {},
            fmt::format("exit status {}: a rank died of signal {}; no node named", f.exit_status,
                        f.exit_status - 128)};
  }
  return {Ending::application_error,
          {},
          {},
          fmt::format("exit status {}: the job's own failure", f.exit_status)};
}

}  // namespace

namespace {

bool same_host(std::string_view a, std::string_view b) {
  return short_host_name(a) == short_host_name(b);
}

// The rank a report with only a pid means, from another report of the same process
// (ezpz-rankenv names rank and pid; MPICH 4.0's Hydra only the pid).
std::string rank_of_pid(const std::vector<FailedRank>& failed, const FailedRank& rank) {
  for (const FailedRank& other : failed) {
    if (!other.ranks.empty() && other.pid == rank.pid && same_host(other.host, rank.host)) {
      return other.ranks;
    }
  }
  return "";
}

// Fills in what a launcher left out (the rank, from the pid or the placement; the host, from
// the placement) and keeps one report per rank and host, where it first came (the first is the
// cause), in ezpz-rankenv's words when it has them: the launcher's report (on stdout) and
// ezpz-rankenv's (on stderr) reach ezpz in either order.
std::vector<FailedRank> complete(std::vector<FailedRank> failed, const AttemptFacts& f) {
  for (FailedRank& rank : failed) {
    if (rank.ranks.empty() && !rank.pid.empty()) rank.ranks = rank_of_pid(failed, rank);
    if (rank.ranks.empty() && f.ppn > 0) {
      rank.ranks = ranks_on_host(f.hosts, f.ppn, rank.host, f.world_size);
    }
    if (rank.host.empty()) rank.host = host_of_rank(f.hosts, f.ppn, rank.ranks);
  }
  std::vector<FailedRank> kept;
  for (FailedRank& rank : failed) {
    auto seen = std::find_if(kept.begin(), kept.end(), [&](const FailedRank& k) {
      return k.ranks == rank.ranks && same_host(k.host, rank.host);
    });
    if (seen == kept.end()) {
      kept.push_back(std::move(rank));
    } else if (rank.own_words && !seen->own_words) {
      *seen = std::move(rank);
    }
  }
  return kept;
}

}  // namespace

Classification classify_attempt(const AttemptFacts& f,
                                const std::vector<BadNodePattern>& patterns) {
  if (f.interrupted) return signal_ending(f);
  if (f.watchdog == Watchdog::stdout_closed) {
    return {Ending::interrupted, {}, {}, "ezpz's stdout was closed by its reader (SIGPIPE)"};
  }
  if (f.exit_status == 0 && f.watchdog == Watchdog::none)
    return {Ending::success, {}, {}, "exit status 0"};
  std::vector<FailedRank> failed = complete(failed_ranks(f.output), f);
  // A named bad node explains a hang or a timeout too: it comes first.
  std::vector<std::string> hosts = scrape_bad_hosts(f.output, patterns);
  if (!hosts.empty()) {
    return {Ending::bad_node, hosts, std::move(failed),
            fmt::format("exit status {}; bad node: {}", f.exit_status, fmt::join(hosts, ", "))};
  }
  if (f.watchdog == Watchdog::timeout) {
    return {Ending::timeout, {}, std::move(failed), "the --time-limit passed"};
  }
  if (f.watchdog == Watchdog::idle) {
    return {Ending::hang, {}, std::move(failed), "no output from any rank for --idle-timeout"};
  }
  return by_failed_ranks(f, std::move(failed));
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
    throw Error(
        fmt::format("--spares {}: the allocation has {} host{}; at least one must stay active",
                    spares, hosts.size(), hosts.size() == 1 ? "" : "s"));
  }
  auto split = hosts.end() - spares;
  return {{hosts.begin(), split}, {split, hosts.end()}, {}};
}

NodePool plan_pool(const std::vector<std::string>& planned,
                   const std::vector<std::string>& available, int spares) {
  std::vector<std::string> candidates = planned;
  for (const std::string& host : available) {
    if (std::find(planned.begin(), planned.end(), host) == planned.end())
      candidates.push_back(host);
  }
  NodePool pool = split_pool(candidates, spares);
  // Hosts beyond the plan and the spares stay out of the job, as without --spares.
  if (pool.active.size() > planned.size()) {
    pool.spares.insert(pool.spares.begin(), pool.active.begin() + planned.size(),
                       pool.active.end());
    pool.active.resize(planned.size());
    pool.spares.resize(spares);
  }
  return pool;
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
    auto host = std::find_if(pool.active.begin(), pool.active.end(), [&](const std::string& h) {
      return short_host_name(h) == short_host_name(name);
    });
    if (host == pool.active.end() || pool.spares.empty()) continue;
    swap_out(host);
  }
  // Nobody named, or only hosts already gone: rotate the first one out blind.
  if (swaps.empty() && !pool.spares.empty()) swap_out(pool.active.begin());
  return swaps;
}

}  // namespace ezpz
