#include "ezpz/output/startup.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ezpz::output {
namespace {

using Json = nlohmann::ordered_json;

// To the microsecond: the file is for people and scripts.
double us(double seconds) {
  return std::round(seconds * 1e6) / 1e6;
}

// Nearest-rank percentile of sorted `values` (not empty).
double percentile(const std::vector<double>& values, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

// Counts in k_histogram_buckets buckets from the first to the last of sorted `values`, each a
// character from ' ' (none) to '#' (the fullest bucket).
std::string histogram(const std::vector<double>& values) {
  static constexpr std::string_view k_levels = " .:-=+*#";
  std::vector<std::size_t> counts(k_histogram_buckets, 0);
  const double span = values.back() - values.front();
  for (double value : values) {
    const double at = span > 0 ? (value - values.front()) / span : 0;
    ++counts[std::min(k_histogram_buckets - 1, static_cast<std::size_t>(at * k_histogram_buckets))];
  }
  const std::size_t fullest = *std::max_element(counts.begin(), counts.end());
  std::string out;
  for (std::size_t count : counts) {
    const std::size_t top = k_levels.size() - 1;
    out += k_levels[count == 0 ? 0 : std::max<std::size_t>(1, count * top / fullest)];
  }
  return out;
}

// Each phase's first stamp per rank, and each rank's host.
struct ByPhase {
  std::map<std::string, std::map<long, double>> phases;
  std::map<long, std::string> hosts;
};

ByPhase by_phase(const std::vector<Stamp>& stamps) {
  ByPhase by;
  for (const Stamp& stamp : stamps) {
    by.phases[stamp.phase].try_emplace(stamp.rank, stamp.at_s);
    if (!stamp.host.empty()) by.hosts.try_emplace(stamp.rank, stamp.host);
  }
  return by;
}

PhaseSummary summary_of(const std::string& phase, const std::map<long, double>& ranks,
                        const std::map<long, std::string>& hosts) {
  std::vector<double> values;
  for (const auto& [rank, at] : ranks) values.push_back(at);
  std::sort(values.begin(), values.end());
  const auto slowest = std::max_element(
      ranks.begin(), ranks.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto host = hosts.find(slowest->first);
  return {.phase = phase,
          .ranks = values.size(),
          .min = values.front(),
          .p50 = percentile(values, 0.5),
          .p90 = percentile(values, 0.9),
          .max = values.back(),
          .slowest_rank = slowest->first,
          .slowest_host = host == hosts.end() ? "" : host->second,
          .histogram = histogram(values)};
}

std::size_t rank_count(const ByPhase& by) {
  std::set<long> ranks;
  for (const auto& [phase, at_by_rank] : by.phases) {
    for (const auto& [rank, at] : at_by_rank) ranks.insert(rank);
  }
  return ranks.size();
}

std::string on_host(long rank, const std::map<long, std::string>& hosts) {
  const auto host = hosts.find(rank);
  return host == hosts.end() ? fmt::format("rank {}", rank)
                             : fmt::format("rank {} on {}", rank, host->second);
}

// The ranks slowest to `phase` (at most three), and the host whose slowest rank is slowest.
std::string slowest_lines(const std::string& phase, const ByPhase& by) {
  std::vector<std::pair<long, double>> ranks(by.phases.at(phase).begin(),
                                             by.phases.at(phase).end());
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out = fmt::format("slowest to {}:", phase);
  for (std::size_t i = 0; i < std::min<std::size_t>(3, ranks.size()); ++i) {
    out += fmt::format("{} {} ({:.3f} s)", i == 0 ? "" : ",", on_host(ranks[i].first, by.hosts),
                       ranks[i].second);
  }
  out += '\n';
  std::map<std::string, double> hosts;  // each host's slowest rank
  for (const auto& [rank, at] : ranks) {
    const auto host = by.hosts.find(rank);
    if (host != by.hosts.end()) hosts[host->second] = std::max(hosts[host->second], at);
  }
  if (hosts.size() < 2) return out;
  const auto host = std::max_element(
      hosts.begin(), hosts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return out + fmt::format("slowest host: {} ({:.3f} s to {})\n", host->first, host->second, phase);
}

}  // namespace

std::vector<PhaseSummary> summarize(const std::vector<Stamp>& stamps) {
  const ByPhase by = by_phase(stamps);
  std::vector<PhaseSummary> out;
  for (const auto& [phase, ranks] : by.phases) out.push_back(summary_of(phase, ranks, by.hosts));
  std::stable_sort(out.begin(), out.end(),
                   [](const PhaseSummary& a, const PhaseSummary& b) { return a.p50 < b.p50; });
  return out;
}

std::string startup_table(const std::vector<Stamp>& stamps) {
  const std::vector<PhaseSummary> phases = summarize(stamps);
  if (phases.empty()) return "";
  const ByPhase by = by_phase(stamps);
  std::string out = fmt::format(
      "start-up, seconds from the launch ({} ranks):\n  {:<16} {:>5} {:>8} {:>8} {:>8} {:>8}  "
      "{:<{}}  slowest\n",
      rank_count(by), "phase", "ranks", "min", "p50", "p90", "max", "histogram",
      k_histogram_buckets + 2);
  for (const PhaseSummary& p : phases) {
    out += fmt::format("  {:<16} {:>5} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f}  [{}]  {}\n", p.phase,
                       p.ranks, p.min, p.p50, p.p90, p.max, p.histogram,
                       on_host(p.slowest_rank, by.hosts));
  }
  return out + slowest_lines(phases.back().phase, by);
}

nlohmann::ordered_json startup_json(const std::vector<Stamp>& stamps) {
  Json phases = Json::array();
  for (const PhaseSummary& p : summarize(stamps)) {
    phases.push_back({{"phase", p.phase},
                      {"ranks", p.ranks},
                      {"min_s", us(p.min)},
                      {"p50_s", us(p.p50)},
                      {"p90_s", us(p.p90)},
                      {"max_s", us(p.max)},
                      {"slowest_rank", p.slowest_rank},
                      {"slowest_host", p.slowest_host}});
  }
  const ByPhase by = by_phase(stamps);
  std::map<long, Json> ranks;
  for (const auto& [phase, at_by_rank] : by.phases) {
    for (const auto& [rank, at] : at_by_rank) ranks[rank]["phases"][phase] = us(at);
  }
  Json list = Json::array();
  for (auto& [rank, entry] : ranks) {
    const auto host = by.hosts.find(rank);
    list.push_back({{"rank", rank},
                    {"host", host == by.hosts.end() ? "" : host->second},
                    {"phases", entry["phases"]}});
  }
  return {{"phases", phases}, {"ranks", list}};
}

std::vector<Stamp> stamps_from_json(const nlohmann::ordered_json& startup) {
  std::vector<Stamp> stamps;
  if (!startup.is_object() || !startup.contains("ranks") || !startup["ranks"].is_array()) {
    return stamps;
  }
  for (const Json& rank : startup["ranks"]) {
    if (!rank.is_object() || !rank.value("rank", Json()).is_number_integer()) continue;
    const Json phases = rank.value("phases", Json::object());
    if (!phases.is_object()) continue;
    std::string host = rank.value("host", Json("")).is_string() ? rank.value("host", "") : "";
    for (const auto& [phase, at] : phases.items()) {
      if (!at.is_number()) continue;
      stamps.push_back({.rank = rank["rank"].get<long>(),
                        .phase = phase,
                        .at_s = at.get<double>(),
                        .host = std::exchange(host, "")});
    }
  }
  return stamps;
}

}  // namespace ezpz::output
