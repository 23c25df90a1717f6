#pragma once
// `ezpz runs explain`: the attempt classifier run again, told as a ticket wants it: the verdict,
// the rule and line that decided, the victims and the innocent. On a recorded attempt it reads
// the facts the live supervisor judged (attempt-N/facts.json) and so says what the run said; on
// any saved job log (a PBS .OU/.ER file, a Slurm slurm-JOBID.out) it has the log alone. Pure:
// the caller reads the files.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ezpz/profile/machine_profile.hpp"
#include "ezpz/supervise/attempts.hpp"

namespace ezpz {

// A saved log and what is known of its job.
struct ExplainInput {
  std::string output;                // the log, or the attempt's output.log
  int exit_status = 1;               // the launcher's; a saved log is taken for a failed job's
  std::vector<std::string> hosts{};  // the attempt's hosts; empty: not known (any host counts)
  int world_size = 0;  // ranks in all; 0: not known (a rule needing a share of them is quiet)
  std::vector<BadNodePattern> patterns{};
  int ppn = 0;  // ranks per host (a report naming only the host is given its ranks); 0: not known
  AddressHosts address_hosts{};  // the job's hosts at the lost peers' addresses (peer_lost.hpp)
  std::optional<std::size_t> ranks_started{};  // verdict.json's; nullopt: not known
};

// The facts a saved log gives: its output, its status, and what else is known.
AttemptFacts facts_of_log(const ExplainInput& input);

struct Explanation {
  Classification classification;
  std::vector<FailedRank> victims;   // the cause first, then other ranks that failed on their own
  std::vector<FailedRank> innocent;  // ranks stopped in the teardown that followed
};

// Throws Error naming a pattern that does not compile.
Explanation explain(const AttemptFacts& facts, const std::vector<BadNodePattern>& patterns);
// A saved log's: explain(facts_of_log(input), input.patterns).
Explanation explain(const ExplainInput& input);

// The explanation in lines, "verdict: ...", "rule: ...", one per victim and innocent rank.
std::string explanation_text(const Explanation& explanation);

}  // namespace ezpz
