#pragma once
// The job's own faults: lines of output that say the job itself failed (a full disk, memory
// run out, a Python traceback in most ranks), whatever the launcher reported. Such a failure
// is no node's: it burns no spare and is not retried, and the verdict quotes the line. Rows of
// data, each with the real line it was taken from. Pure.
#include <span>
#include <string>
#include <string_view>

namespace ezpz {

struct JobFault {
  std::string_view name;  // "no-space": the rule a verdict names ("job_faults no-space")
  std::string_view what;  // the verdict's words: "out of disk space"
  // Pieces of a line, matched as plain text (case-sensitive); any one is the fault's line.
  std::span<const std::string_view> texts;
  // How many ranks must print it, as a share of the world size: 0, one line is enough; 1,
  // every rank (a fault on one rank may be its node's; on all of them it is the program's).
  double share = 0;
  // The line fails the job even when every status was 0 (a launcher that reports a rank's
  // fatal error in words and still exits 0).
  bool fails_success = false;
  // A rank that lost its peer (gloo's "Connection closed by peer") raises a traceback too: those
  // are the teardown after the peer's death, not the job's fault, and are not counted.
  bool less_lost_peers = false;
};

// Every row, in the order they are tried.
std::span<const JobFault> job_faults();

struct JobFaultHit {
  const JobFault* fault = nullptr;  // nullptr: none
  std::string line;                 // the first line that matched
};

// The first row whose text `output` holds, in enough lines for its share of `world_size`
// ranks (a row with a share never matches when the world size is not known: 0).
// `success_only`: only the rows that fail a job whose statuses were all 0 (a clean exit's
// output is not read for the others: the launch path's end stays short). `lost_peer_lines`:
// how many lines named a lost peer (peer_lost.hpp), taken off a less_lost_peers row's count.
JobFaultHit find_job_fault(std::string_view output, int world_size, bool success_only = false,
                           std::size_t lost_peer_lines = 0);

}  // namespace ezpz
