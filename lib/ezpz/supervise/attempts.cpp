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
#include "ezpz/core/text.hpp"
#include "ezpz/launchers/launcher_table.hpp"
#include "ezpz/supervise/job_faults.hpp"

namespace ezpz {
namespace {

constexpr std::array<std::pair<Ending, std::string_view>, 9> k_ending_names = {{
    {Ending::success, "success"},
    {Ending::application_error, "application_error"},
    {Ending::bad_node, "bad_node"},
    {Ending::launcher_died, "launcher_died"},
    {Ending::hang, "hang"},
    {Ending::never_started, "never_started"},
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
  std::regex host_before;
};

CompiledReport compile(const FailureReport& r, bool own_words) {
  return {&r, own_words, std::regex(r.regex.begin(), r.regex.end()),
          std::regex(r.what_regex.begin(), r.what_regex.end()),
          std::regex(r.host_before.begin(), r.host_before.end())};
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

// A report's line with the lines beside it: some launchers spread one report over three.
struct Around {
  std::string_view before, line, next;
};

// The report `at.line` makes, if it makes one.
std::optional<FailedRank> report_in(Around at) {
  std::cmatch m;
  for (const CompiledReport& c : compiled_reports()) {
    if (!search(at.line, c.regex, m)) continue;
    const FailureReport& r = *c.report;
    std::string what = group(m, r.what);
    std::string host = group(m, r.host);
    std::cmatch w;
    if (!r.what_regex.empty() && search(at.next, c.what_regex, w)) {
      what = std::string(r.what_prefix) + w[1].str();
    }
    if (!r.host_before.empty() && search(at.before, c.host_before, w)) host = w[1].str();
    FailedRank rank{host, group(m, r.ranks), group(m, r.pid), what, false, c.own_words};
    rank.died_of_signal = died_of_signal(r.died_of_signal, rank.what);
    return rank;
  }
  return std::nullopt;
}

Around around(const std::vector<std::string_view>& lines, std::size_t i) {
  return {.before = i > 0 ? lines[i - 1] : std::string_view(),
          .line = lines[i],
          .next = i + 1 < lines.size() ? lines[i + 1] : std::string_view()};
}

}  // namespace

namespace {

// PALS reports every rank's end, the healthy ones' too ("x1: rank 0 exited with code 0"): a
// rank that exited 0 is no failure, and never the application's error.
bool reports_success(const FailedRank& rank) {
  return !rank.died_of_signal && (rank.what.ends_with("code 0") || rank.what.ends_with("CODE: 0"));
}

}  // namespace

std::vector<FailedRank> failed_ranks(std::string_view output) {
  std::vector<FailedRank> ranks;
  const std::vector<std::string_view> lines = lines_of(output);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto rank = report_in(around(lines, i));
    if (rank && !reports_success(*rank)) ranks.push_back(std::move(*rank));
  }
  return ranks;
}

std::vector<std::string> lines_before_failure(std::string_view output, std::size_t count) {
  const std::vector<std::string_view> lines = lines_of(output);
  std::size_t end = 0;
  while (end < lines.size() && !report_in(around(lines, end))) ++end;
  if (end == lines.size()) return {};
  std::vector<std::string> before;
  for (std::size_t i = end; i > 0 && before.size() < count; --i) {
    if (lines[i - 1].find_first_not_of(" \t\r") != std::string_view::npos) {
      before.emplace(before.begin(), without_escapes(lines[i - 1]));
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
    names_.push_back(pattern.name);
    try {
      regexes_.emplace_back(pattern.regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Error(fmt::format("bad_node_patterns {}: invalid regular expression: {}", pattern.name,
                              e.what()));
    }
  }
}

std::vector<BadNodeHit> BadNodeMatcher::hits_in(std::string_view text) const {
  std::vector<BadNodeHit> hits;
  std::cmatch m;
  for (std::string_view line : lines_of(text)) {
    for (std::size_t i = 0; i < regexes_.size(); ++i) {
      if (!search(line, regexes_[i], m) || m.size() < 2 || !m[1].matched) continue;
      std::string host = m[1].str();
      auto seen = [&](const BadNodeHit& hit) { return hit.host == host; };
      if (std::none_of(hits.begin(), hits.end(), seen)) {
        hits.push_back({.host = std::move(host), .pattern = names_[i], .line = std::string(line)});
      }
    }
  }
  return hits;
}

std::vector<std::string> BadNodeMatcher::hosts_in(std::string_view text) const {
  std::vector<std::string> hosts;
  for (BadNodeHit& hit : hits_in(text)) hosts.push_back(std::move(hit.host));
  return hosts;
}

bool among_hosts(const std::vector<std::string>& hosts, std::string_view host) {
  return hosts.empty() || std::any_of(hosts.begin(), hosts.end(), [&](const std::string& h) {
           return short_host_name(h) == short_host_name(host);
         });
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

// The signal a launcher's words name: "killed by signal 11 (SIGSEGV)", "KILLED BY SIGNAL: 9",
// Hydra 4.0's "EXIT CODE: 9" (printed only for a signal), "exited on signal 6 (Aborted)",
// srun's "Killed", "Segmentation fault", "User defined signal 1"; 0 when none.
int signal_of(std::string_view what) {
  // The words first: "User defined signal 1" holds "signal 1", which is SIGHUP's number.
  constexpr std::array<std::pair<std::string_view, int>, 9> k_words = {
      {{"User defined signal 1", SIGUSR1},
       {"User defined signal 2", SIGUSR2},
       {"Killed", SIGKILL},
       {"Segmentation", SIGSEGV},
       {"Aborted", SIGABRT},
       {"Bus error", SIGBUS},
       {"Terminated", SIGTERM},
       {"Floating", SIGFPE},
       {"Illegal", SIGILL}}};
  for (const auto& [word, sig] : k_words) {
    if (what.find(word) != std::string_view::npos) return sig;
  }
  static const std::regex number(R"((?:signal|SIGNAL|EXIT CODE|exitcode):? -?(\d+))");
  std::cmatch m;
  return search(what, number, m) ? std::stoi(m[1].str()) : 0;
}

}  // namespace

bool teardown_report(const FailedRank& rank) {
  return rank.died_of_signal && signal_of(rank.what) == SIGTERM;
}

std::optional<int> rank_status(const FailedRank& rank) {
  // torchrun's "exitcode -9" is signal 9.
  static const std::regex number(R"((?:code|CODE|signal|SIGNAL):?\s+-?(\d{1,3})\b)");
  std::cmatch m;
  const int n = search(rank.what, number, m) ? std::stoi(m[1].str()) : 0;
  if (!rank.died_of_signal) return n != 0 ? std::optional(n) : std::nullopt;
  const int sig = n != 0 ? n : signal_of(rank.what);
  return sig != 0 ? std::optional(128 + sig) : std::nullopt;
}

namespace {

// The same rank dying of the same signal as in the attempt before, on another host: the
// program's doing, not the node's.
bool same_death(const SignalDeath& before, const SignalDeath& now) {
  return before.signal != 0 && before.signal == now.signal && !now.ranks.empty() &&
         before.ranks == now.ranks && short_host_name(before.host) != short_host_name(now.host);
}

// The deaths that can be a node's: SIGKILL (the kernel's, or a node daemon's) and SIGBUS (a
// memory or filesystem fault), when ezpz sent neither. Any other signal is the program's (a
// segfault, an abort, a floating-point trap).
bool node_signal(int sig) {
  return sig == SIGKILL || sig == SIGBUS;
}

// Whether ezpz itself sent or forwarded `sig` during the attempt.
bool ezpz_sent(const AttemptFacts& f, int sig) {
  return std::any_of(f.sent.begin(), f.sent.end(),
                     [&](const SentSignal& s) { return s.signal == sig; });
}

// A rank died of a signal. SIGKILL or SIGBUS once is evidence against its host (swapped, when
// the launcher named one of the job's); the same death again on a new host is the program's.
// Any other signal is the program's at once.
Classification signal_death(const AttemptFacts& f, SignalDeath death,
                            std::vector<FailedRank> failed, std::string reason) {
  Classification c{.ending = Ending::application_error,
                   .bad_hosts = {},
                   .failed = std::move(failed),
                   .reason = std::move(reason),
                   .death = death};
  if (death.signal == SIGABRT) {
    c.rule = "abort";
    c.reason += ": the program aborted itself (an assertion, abort(), an uncaught exception)";
  } else if (!node_signal(death.signal)) {
    c.rule = "program_signal";
    c.reason += fmt::format(": the program's own fault (signal {}), not its node's", death.signal);
  } else if (same_death(f.previous_death, death)) {
    c.rule = "same_death_twice";
    c.reason += fmt::format(": it died the same way{} in the attempt before: the program's doing",
                            f.previous_death.host.empty() ? "" : " on " + f.previous_death.host);
  } else {
    c.ending = Ending::bad_node;
    c.rule = "signal_death";
    if (!death.host.empty() && among_hosts(f.hosts, death.host)) {
      c.bad_hosts = {death.host};
      c.evidence = {c.failed.empty() ? c.reason : describe(c.failed.front())};
    }
  }
  return c;
}

Classification launcher_death(const AttemptFacts& f, std::vector<FailedRank> failed) {
  const std::optional<std::string_view> abbrev = signal_abbrev(f.launcher_signal);
  const std::string who =
      f.launcher_part.empty() ? "the launcher itself" : "the launcher's " + f.launcher_part;
  return {.ending = Ending::launcher_died,
          .bad_hosts = {},
          .failed = std::move(failed),
          .reason = fmt::format(
              "exit status {}: {} died of signal {} ({}); the ranks' statuses were lost with it",
              f.exit_status, who, f.launcher_signal,
              abbrev ? fmt::format("SIG{}", *abbrev) : "unnamed"),
          .rule = f.launcher_part.empty() ? "launcher_signal" : "launcher_part_signal"};
}

// A quoted line stays one line of a verdict.
std::string quoted(std::string_view line) {
  constexpr std::size_t k_most = 200;
  return fmt::format("\"{}{}\"", line.substr(0, k_most), line.size() > k_most ? "..." : "");
}

// A rank stopped, not failed: SIGTERM (PALS and srun stop the others so once a rank dies, and
// report each: "x1: rank 0 died from signal 15"), or a signal ezpz itself sent or forwarded.
bool stopped_rank(const AttemptFacts& f, const FailedRank& rank) {
  return teardown_report(rank) || (rank.died_of_signal && ezpz_sent(f, signal_of(rank.what)));
}

// Victim, not teardown: reports come in any order. The first report of a rank that was not
// stopped is the cause (ezpz-rankenv's own words first: the rank's own ending); the stopped
// ranks are the innocent, listed after it.
void put_victim_first(const AttemptFacts& f, std::vector<FailedRank>& failed) {
  auto victim = std::find_if(failed.begin(), failed.end(), [&](const FailedRank& rank) {
    return rank.own_words && !stopped_rank(f, rank);
  });
  if (victim == failed.end()) {
    victim = std::find_if_not(failed.begin(), failed.end(),
                              [&](const FailedRank& rank) { return stopped_rank(f, rank); });
  }
  if (victim != failed.end()) std::rotate(failed.begin(), victim, victim + 1);
}

// A peer lost (gloo's "Connection closed by peer" on the ranks that survived it): a report of a
// rank on the lost peer's host is the victim's, first; false when the launcher reported none.
bool put_lost_peer_first(std::vector<FailedRank>& failed, const std::vector<BadNodeHit>& lost) {
  auto victim = std::find_if(failed.begin(), failed.end(), [&](const FailedRank& rank) {
    return std::any_of(lost.begin(), lost.end(), [&](const BadNodeHit& hit) {
      return short_host_name(hit.host) == short_host_name(rank.host);
    });
  });
  if (victim == failed.end()) return false;
  std::rotate(failed.begin(), victim, victim + 1);
  return true;
}

// The ranks that lost their peer are the teardown; the peer's host, whose death no report
// names, is the victim: its node is suspect (scraped, with the line).
Classification peer_lost(const AttemptFacts& f, const std::vector<BadNodeHit>& lost,
                         std::vector<FailedRank> failed) {
  std::vector<std::string> hosts;
  std::vector<std::string> evidence;
  for (const BadNodeHit& hit : lost) {
    hosts.push_back(hit.host);
    evidence.push_back(hit.line);
  }
  return {.ending = Ending::bad_node,
          .bad_hosts = hosts,
          .failed = std::move(failed),
          .reason = fmt::format("exit status {}: the ranks lost their peer on {}: {}",
                                f.exit_status, fmt::join(hosts, ", "), quoted(lost.front().line)),
          .rule = "peer_lost " + lost.front().pattern,
          .line = lost.front().line,
          .evidence = std::move(evidence)};
}

// The launcher failed before ezpz-rankenv started any rank: its first line says why (Hydra's
// "execvp error on file .../hydra_pmi_proxy"). Not retried: the same launcher fails the same
// way.
Classification launcher_failed_alone(const AttemptFacts& f) {
  // No rank started, so every line is the launcher's, known apart or not (`ezpz runs explain`).
  const std::vector<std::string_view> lines =
      lines_of(f.launcher_output ? std::string_view(*f.launcher_output) : f.output);
  const auto said = std::find_if(lines.begin(), lines.end(), [](std::string_view line) {
    return line.find_first_not_of(" \t\r") != std::string_view::npos;
  });
  const std::string line = said == lines.end() ? "" : std::string(*said);
  return {.ending = Ending::application_error,
          .bad_hosts = {},
          .failed = {},
          .reason = fmt::format("exit status {}: the launcher failed before any rank started{}",
                                f.exit_status, line.empty() ? "" : ": " + line),
          .rule = "no_rank_started",
          .line = line};
}

// Every rank reported was stopped, none failed first: with a rank's own failure reported to
// ezpz (its report lost from the tail), that failure; else the shape of a walltime or of a job
// torn down from outside (scancel, qdel): nothing names a node.
Classification torn_down(const AttemptFacts& f, std::vector<FailedRank> failed) {
  if (f.failed_rank_status) {
    return {.ending = Ending::application_error,
            .bad_hosts = {},
            .failed = std::move(failed),
            .reason = fmt::format("exit status {}: a rank failed on its own (status {}); the "
                                  "others were stopped after it",
                                  f.exit_status, *f.failed_rank_status),
            .rule = "rank_failed"};
  }
  return {.ending = Ending::walltime,
          .bad_hosts = {},
          .failed = std::move(failed),
          .reason = fmt::format("exit status {}: every rank was stopped (SIGTERM) and none failed "
                                "first: the job was torn down from outside (walltime, scancel, "
                                "qdel), not by a node",
                                f.exit_status),
          .rule = "teardown_only"};
}

// The launcher's status alone, no rank reported: 128+N names the signal; a node's only for
// SIGKILL or SIGBUS, and then no host is named (none is retired: the same hosts again).
Classification by_status(const AttemptFacts& f) {
  if (f.ranks_started == 0) return launcher_failed_alone(f);
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
    const int sig = f.exit_status - 128;
    if (sig == SIGTERM) return torn_down(f, {});
    return signal_death(
        f, {.ranks = "", .host = "", .signal = sig}, {},
        fmt::format("exit status {}: a rank died of signal {}; no node named", f.exit_status, sig));
  }
  return {Ending::application_error,
          {},
          {},
          fmt::format("exit status {}: the job's own failure", f.exit_status)};
}

// Without a named bad node and without the watchdog: the launcher's own words decide, else its
// exit status. A launcher killed by anything but SIGPIPE explains its ranks' deaths (they are
// the teardown); MPICH 4.0's Hydra dies of SIGPIPE when a proxy it writes to has just exited,
// so there a rank's report comes first.
Classification by_failed_ranks(const AttemptFacts& f, std::vector<FailedRank> failed,
                               const std::vector<BadNodeHit>& lost) {
  if (f.launcher_signal != 0 && (f.launcher_signal != SIGPIPE || failed.empty())) {
    return launcher_death(f, std::move(failed));
  }
  const bool placed = !lost.empty() && put_lost_peer_first(failed, lost);
  if (!lost.empty() && !placed) return peer_lost(f, lost, std::move(failed));
  if (failed.empty()) return by_status(f);
  // A stopped rank on the lost peer's host is no victim (its address may be every host's, as
  // 127.0.0.1 is on a one-machine cluster): the rank that failed on its own comes first.
  if (!placed || stopped_rank(f, failed.front())) put_victim_first(f, failed);
  const FailedRank& first = failed.front();
  if (stopped_rank(f, first)) return torn_down(f, std::move(failed));
  std::string reason = fmt::format("exit status {}: {}", f.exit_status, describe(first));
  if (!first.died_of_signal || broken_pipe(first.what)) {
    return {Ending::application_error, {}, std::move(failed), std::move(reason)};
  }
  const SignalDeath death{
      .ranks = first.ranks, .host = first.host, .signal = signal_of(first.what)};
  return signal_death(f, death, std::move(failed), std::move(reason));
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
    // A one-host job's ranks are all on its host, whatever the launcher calls it (torchrun's
    // getfqdn() is "localhost" where /etc/hosts says so).
    if (f.hosts.size() == 1 && !rank.host.empty()) rank.host = f.hosts.front();
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

namespace {

int world_size_of(const AttemptFacts& f) {
  return f.world_size > 0 ? f.world_size : static_cast<int>(f.hosts.size()) * f.ppn;
}

Classification job_fault(const AttemptFacts& f, JobFaultHit hit, std::vector<FailedRank> failed) {
  return {.ending = Ending::application_error,
          .bad_hosts = {},
          .failed = std::move(failed),
          .reason = fmt::format("exit status {}: {}: {}", f.exit_status, hit.fault->what,
                                quoted(hit.line)),
          .rule = fmt::format("job_faults {}", hit.fault->name),
          .line = std::move(hit.line)};
}

// The hosts the launcher's own lines name, of this attempt's hosts only: a host outside the
// allocation (github.com in a rank's ssh error) is never a bad node.
std::vector<BadNodeHit> scraped_hits(const AttemptFacts& f, std::string_view launcher_lines,
                                     const std::vector<BadNodePattern>& patterns) {
  std::vector<BadNodeHit> hits = BadNodeMatcher(patterns).hits_in(launcher_lines);
  std::erase_if(hits, [&](const BadNodeHit& hit) { return !among_hosts(f.hosts, hit.host); });
  return hits;
}

Classification scraped(const AttemptFacts& f, std::vector<BadNodeHit> hits,
                       std::vector<FailedRank> failed) {
  std::vector<std::string> hosts;
  std::vector<std::string> evidence;
  for (const BadNodeHit& hit : hits) {
    hosts.push_back(hit.host);
    evidence.push_back(hit.line);
  }
  return {
      .ending = Ending::bad_node,
      .bad_hosts = hosts,
      .failed = std::move(failed),
      .reason = fmt::format("exit status {}; bad node: {}", f.exit_status, fmt::join(hosts, ", ")),
      .rule = "bad_node_patterns " + hits.front().pattern,
      .line = hits.front().line,
      .evidence = std::move(evidence)};
}

// The job's hosts the lost peers' addresses are, through the caller's lookup: an address that
// is none of them (or not looked up) names no host, and never a bad node.
std::vector<BadNodeHit> lost_peer_hosts(const AttemptFacts& f, const std::vector<PeerLost>& peers) {
  std::vector<BadNodeHit> hits;
  for (const PeerLost& peer : peers) {
    auto host = f.address_hosts.find(peer.address);
    if (host == f.address_hosts.end() || f.hosts.empty() || !among_hosts(f.hosts, host->second)) {
      continue;
    }
    auto seen = [&](const BadNodeHit& hit) { return hit.host == host->second; };
    if (std::none_of(hits.begin(), hits.end(), seen)) {
      hits.push_back({.host = host->second, .pattern = peer.pattern, .line = peer.line});
    }
  }
  return hits;
}

// Silent for --idle-timeout: before any progress line the job never started training (the
// Python ezpz's stuck_pre_training: imports, the rendezvous, data loading); after one it hung.
Classification idle_ending(const AttemptFacts& f, std::vector<FailedRank> failed) {
  const std::regex progress(f.progress_pattern);
  std::cmatch m;
  for (std::string_view line : lines_of(f.output)) {
    if (search(line, progress, m)) {
      return {Ending::hang, {}, std::move(failed), "no output from any rank for --idle-timeout"};
    }
  }
  return {Ending::never_started,
          {},
          std::move(failed),
          "no output for --idle-timeout and no progress line before it: the job never started "
          "training (look at its start-up: imports, the rendezvous, data loading)"};
}

}  // namespace

void check_progress_pattern(const std::string& pattern) {
  // The default is known good (a unit test compiles it); compiling a std::regex is ~1.1 M
  // instructions, a quarter of a no-op launch's, so a launch that names none compiles none.
  if (pattern == k_default_progress) return;
  try {
    std::regex{pattern};
  } catch (const std::regex_error& e) {
    throw Error(
        fmt::format("--progress-pattern {}: invalid regular expression: {}", pattern, e.what()));
  }
}

namespace {

// The signal ezpz forwarded (USR1, USR2, QUIT: not a stop signal, those are `interrupted`), or
// --signal's warning when a rank or the launcher died of it: the job ended of ezpz's doing.
const SentSignal* sent_ending(const AttemptFacts& f, const std::vector<FailedRank>& failed) {
  for (const SentSignal& sent : f.sent) {
    if (sent.why == "forwarded") return &sent;
    const bool died_of_it = f.exit_status == 128 + sent.signal ||
                            std::any_of(failed.begin(), failed.end(), [&](auto& r) {
                              return r.died_of_signal && signal_of(r.what) == sent.signal;
                            });
    if (sent.why == "warning" && died_of_it) return &sent;
  }
  return nullptr;
}

Classification sent_signal_ending(const SentSignal& sent, std::vector<FailedRank> failed) {
  const std::string who = sent.why == "warning" ? "--signal's" : "ezpz forwarded";
  return {.ending = Ending::interrupted,
          .bad_hosts = {},
          .failed = std::move(failed),
          .reason = fmt::format("{} {} ({:.1f} s in) and the job ended: the signal's doing, not "
                                "a node's",
                                who, signal_name(sent.signal), sent.at_s),
          .rule = sent.why == "warning" ? "warning_signal" : "forwarded_signal"};
}

// What a batch system prints when the allocation's time ran out and it ends the job itself: the
// walltime, never a node's. Slurm's slurmstepd ("*** STEP 42.0 ON n01 CANCELLED AT
// 2026-12-07T10:00:00 DUE TO TIME LIMIT ***"), PBS's MoM ("=>> PBS: job killed: walltime 3630
// exceeded limit 3600"), Flux's job-exec ("3600.012s: job.exception f3Fv type=timeout
// severity=0 resource allocation expired", flux-core src/modules/job-exec/job-exec.c).
constexpr std::array<std::string_view, 3> k_allocation_expired = {
    "DUE TO TIME LIMIT ***", "PBS: job killed: walltime",
    "type=timeout severity=0 resource allocation expired"};

std::optional<Classification> allocation_expired(const AttemptFacts& f, std::string_view lines) {
  for (std::string_view line : lines_of(lines)) {
    for (std::string_view words : k_allocation_expired) {
      if (line.find(words) == std::string_view::npos) continue;
      return Classification{.ending = Ending::walltime,
                            .bad_hosts = {},
                            .failed = {},
                            .reason = fmt::format("exit status {}: the batch system ended the job "
                                                  "at its time limit",
                                                  f.exit_status),
                            .rule = "allocation_expired",
                            .line = std::string(line)};
    }
  }
  return std::nullopt;
}

Classification cwd_gone(const AttemptFacts& f) {
  return {.ending = Ending::application_error,
          .bad_hosts = {},
          .failed = {},
          .reason = fmt::format("exit status {}: the working directory was deleted under the job: "
                                "no launch can start there again",
                                f.exit_status),
          .rule = "cwd_missing"};
}

Classification decide(const AttemptFacts& f, const std::vector<BadNodePattern>& patterns) {
  if (f.interrupted) return signal_ending(f);
  if (f.watchdog == Watchdog::stdout_closed) {
    return {Ending::interrupted, {}, {}, "ezpz's stdout was closed by its reader (SIGPIPE)"};
  }
  const bool clean = f.exit_status == 0 && f.watchdog == Watchdog::none;
  if (f.cwd_missing && !clean) return cwd_gone(f);
  // The job's own fault is read from every line, the ranks' included: that is where it shows.
  // A rank that reported its own failure is never hidden by the launcher's 0.
  if (clean && !f.failed_rank_status) {
    JobFaultHit fault = find_job_fault(f.output, world_size_of(f), true);
    if (fault.fault) return job_fault(f, std::move(fault), {});
    return {Ending::success, {}, {}, "exit status 0"};
  }
  const std::vector<PeerLost> peers = peers_lost(f.output);
  JobFaultHit fault = find_job_fault(f.output, world_size_of(f), false, peers.size());
  // Failure reports and bad-node lines are the launcher's, never a rank's (when they are known).
  const std::string_view launcher_lines = f.launcher_output ? *f.launcher_output : f.output;
  std::vector<FailedRank> failed = complete(failed_ranks(launcher_lines), f);
  if (auto expired = allocation_expired(f, launcher_lines)) return *expired;
  if (fault.fault) return job_fault(f, std::move(fault), std::move(failed));
  // A named bad node explains a hang or a timeout too: it comes next.
  std::vector<BadNodeHit> hits = scraped_hits(f, launcher_lines, patterns);
  if (!hits.empty()) return scraped(f, std::move(hits), std::move(failed));
  if (f.watchdog == Watchdog::timeout) {
    return {Ending::timeout, {}, std::move(failed), "the --time-limit passed"};
  }
  if (f.watchdog == Watchdog::idle) return idle_ending(f, std::move(failed));
  if (const SentSignal* sent = sent_ending(f, failed)) {
    return sent_signal_ending(*sent, std::move(failed));
  }
  return by_failed_ranks(f, std::move(failed), lost_peer_hosts(f, peers));
}

// The first failed rank's own status: ezpz-rankenv's report to ezpz, else that of the rank the
// verdict blames (srun's "task 1: Exited with exit code 6" when srun ended the step before the
// report reached ezpz); none after a signal of the user's, when the launcher itself died, or
// when that rank was only stopped.
std::optional<int> own_status(const AttemptFacts& f, const Classification& c) {
  if (f.failed_rank_status) return f.failed_rank_status;
  if (f.interrupted || c.ending == Ending::launcher_died || c.failed.empty() ||
      stopped_rank(f, c.failed.front()))
    return std::nullopt;
  return rank_status(c.failed.front());
}

int attempt_status(const AttemptFacts& f, const Classification& c) {
  if (f.watchdog == Watchdog::stdout_closed) return 128 + SIGPIPE;  // as the pipeline's writer
  if (f.watchdog == Watchdog::timeout || f.watchdog == Watchdog::idle) return 124;
  // A rank that caught the signal and exited on its own gives its status; else the signal's.
  if (c.rule == "forwarded_signal" || c.rule == "warning_signal") {
    return own_status(f, c).value_or(128 + sent_ending(f, c.failed)->signal);
  }
  const bool rank_first = f.watchdog == Watchdog::none || f.watchdog == Watchdog::rank_failed;
  const std::optional<int> rank = rank_first ? own_status(f, c) : std::nullopt;
  if (rank && *rank != 0) return *rank;
  // A fatal line in the output fails the attempt whatever the launcher's status.
  return c.ending != Ending::success && f.exit_status == 0 ? 1 : f.exit_status;
}

}  // namespace

Classification classify_attempt(const AttemptFacts& f,
                                const std::vector<BadNodePattern>& patterns) {
  Classification c = decide(f, patterns);
  c.exit_code = attempt_status(f, c);
  for (const FailedRank& rank : c.failed) {
    if (stopped_rank(f, rank)) c.innocent.push_back(rank);
  }
  return c;
}

bool worth_retrying(Ending ending) {
  return ending == Ending::bad_node || ending == Ending::launcher_died || ending == Ending::hang ||
         ending == Ending::never_started || ending == Ending::timeout;
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
  for (const std::string& name : bad) {
    auto host = std::find_if(pool.active.begin(), pool.active.end(), [&](const std::string& h) {
      return short_host_name(h) == short_host_name(name);
    });
    if (host == pool.active.end() || pool.spares.empty()) continue;
    std::string spare = pool.spares.front();
    pool.spares.erase(pool.spares.begin());
    swaps.push_back(fmt::format("{} -> {}", *host, spare));
    pool.retired.push_back(*host);
    *host = spare;
  }
  return swaps;
}

}  // namespace ezpz
