#include "ezpz/supervise/explain.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ezpz {

Explanation explain(const ExplainInput& in) {
  AttemptFacts facts{
      .exit_status = in.exit_status,
      .output = in.output,
      .hosts = in.hosts,
      .ppn = in.ppn,
      .world_size = in.world_size,
      .ranks_started = in.ranks_started,
      // Named, though empty: GCC 12 at -O2 warns (wrongly) it may be used uninitialised.
      .previous_death = SignalDeath{},
      .address_hosts = in.address_hosts};
  Explanation e{
      .classification = classify_attempt(facts, in.patterns), .victims = {}, .innocent = {}};
  for (const FailedRank& rank : e.classification.failed) {
    (teardown_report(rank) ? e.innocent : e.victims).push_back(rank);
  }
  return e;
}

std::string explanation_text(const Explanation& e) {
  const Classification& c = e.classification;
  std::string text = fmt::format("verdict: {}\nreason: {}\n", to_string(c.ending), c.reason);
  if (!c.rule.empty()) text += fmt::format("rule: {}\n", c.rule);
  if (!c.line.empty()) text += fmt::format("line: {}\n", c.line);
  if (!c.bad_hosts.empty()) text += fmt::format("bad hosts: {}\n", fmt::join(c.bad_hosts, " "));
  for (const FailedRank& rank : e.victims) text += fmt::format("victim: {}\n", describe(rank));
  for (const FailedRank& rank : e.innocent) text += fmt::format("innocent: {}\n", describe(rank));
  return text;
}

}  // namespace ezpz
