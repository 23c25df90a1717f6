#pragma once
// An attempt's facts as the run record keeps them (attempt-N/facts.json): everything
// classify_attempt decides from, so `ezpz runs explain` decides again from exactly what the live
// supervisor saw: the same function on the same facts gives the same verdict. Pure: a codec.
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/profile/machine_profile.hpp"
#include "ezpz/supervise/attempts.hpp"

namespace ezpz {

// The file, in the attempt's directory.
inline constexpr std::string_view k_facts_file = "facts.json";

// The facts and the bad-node patterns they were judged with, as one JSON object (version 1).
std::string facts_json(const AttemptFacts& facts, const std::vector<BadNodePattern>& patterns);

struct RecordedFacts {
  AttemptFacts facts;
  std::vector<BadNodePattern> patterns;
};

// Reads facts_json's text back. Throws Error "SOURCE: not an attempt's facts (...)" when it is
// not one: another version's, damaged, or of the wrong types.
RecordedFacts parse_facts(std::string_view text, std::string_view source);

}  // namespace ezpz
