#pragma once
// What happened to one launch attempt and what to do next: classify how it
// ended (from its exit status, the watchdog and its output), back off between
// retries, and swap named bad nodes for spares. Pure: the executor and
// `ezpz launch --retries/--spares` do the side effects.
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace ezpz {

enum class Ending {
  success,
  application_error,  // the job's own failure: retrying will not help
  bad_node,           // a node failed (named by a profile signature, when one matched)
  hang,               // --idle-timeout: no output from any rank
  timeout,            // --timeout: the wall-clock limit
  walltime,           // SIGTERM from the scheduler: never retried
  interrupted,        // the user's Ctrl-C / SIGTERM to ezpz
};
std::string_view to_string(Ending ending);

// Why the watchdog stopped the attempt, if it did.
enum class Watchdog { none, timeout, idle };

struct AttemptFacts {
  int exit_status = 0;       // as ezpz reports it: 128+N for signal N
  bool interrupted = false;  // ezpz forwarded a signal the user sent it
  int forwarded_signal = 0;  // which one (SIGTERM at walltime is its own case)
  bool scheduler_job = false;  // inside a PBS/Slurm job: SIGTERM means walltime
  Watchdog watchdog = Watchdog::none;
  std::string output;        // the attempt's combined output (or its tail)
};

// A machine's bad-node signature: a regular expression over the job's output
// whose first capture group is the host (machine profiles: bad_node_patterns).
struct BadNodePattern {
  std::string name;
  std::string regex;
};

struct Classification {
  Ending ending = Ending::success;
  std::vector<std::string> bad_hosts;  // first-seen order, deduplicated
  std::string reason;                  // one line, for logs and verdict.json
};

// Throws Error naming the pattern when a regex does not compile.
Classification classify_attempt(const AttemptFacts& facts,
                                const std::vector<BadNodePattern>& patterns);

// Whether another attempt can help.
bool worth_retrying(Ending ending);

// Seconds to wait before attempt `attempt` (2, 3, ...): 5, 10, 20, ... capped.
double backoff_seconds(int attempt, double first = 5, double cap = 60);

// The allocation split into the nodes a job runs on and its spares.
struct NodePool {
  std::vector<std::string> active;
  std::vector<std::string> spares;
  std::vector<std::string> retired;  // swapped out as bad
};

// The first `active` hosts run the job; the next `spares` wait. Throws Error
// when the allocation is too small.
NodePool split_pool(const std::vector<std::string>& hosts, int spares);

// Swaps each named bad host that is active for the next spare; with no host
// named (or none of them active), rotates the first active host out. Returns
// the swaps made ("bad -> spare"); empty when no spare is left.
std::vector<std::string> replace_bad_nodes(NodePool& pool, const std::vector<std::string>& bad);

}  // namespace ezpz
