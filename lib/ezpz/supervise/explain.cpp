#include "ezpz/supervise/explain.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ezpz {

AttemptFacts facts_of_log(const ExplainInput& in) {
  return {.exit_status = in.exit_status,
          .output = in.output,
          .hosts = in.hosts,
          .ppn = in.ppn,
          .world_size = in.world_size,
          .ranks_started = in.ranks_started,
          // Named, though empty: GCC 12 at -O2 warns (wrongly) it may be used uninitialised.
          .previous_death = SignalDeath{},
          .address_hosts = in.address_hosts};
}

Explanation explain(const AttemptFacts& facts, const std::vector<BadNodePattern>& patterns) {
  Explanation e{.classification = classify_attempt(facts, patterns), .victims = {}, .innocent = {}};
  const Classification& c = e.classification;
  e.innocent = c.innocent;
  for (const FailedRank& rank : c.failed) {
    if (std::find(c.innocent.begin(), c.innocent.end(), rank) == c.innocent.end()) {
      e.victims.push_back(rank);
    }
  }
  return e;
}

Explanation explain(const ExplainInput& in) {
  return explain(facts_of_log(in), in.patterns);
}

std::string explanation_text(const Explanation& e) {
  const Classification& c = e.classification;
  std::string text = fmt::format("verdict: {}\nreason: {}\n", to_string(c.ending), c.reason);
  if (!c.rule.empty()) text += fmt::format("rule: {}\n", c.rule);
  if (!c.line.empty()) text += fmt::format("line: {}\n", c.line);
  for (std::size_t i = 0; i < c.bad_hosts.size(); ++i) {
    const std::string why = i < c.evidence.size() ? c.evidence[i] : "";
    text += fmt::format("bad host: {}{}\n", c.bad_hosts[i], why.empty() ? "" : ": " + why);
  }
  text += fmt::format("exit status: {}\n", c.exit_code);
  for (const FailedRank& rank : e.victims) text += fmt::format("victim: {}\n", describe(rank));
  for (const FailedRank& rank : e.innocent) text += fmt::format("innocent: {}\n", describe(rank));
  return text;
}

}  // namespace ezpz
