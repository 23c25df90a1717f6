#pragma once
// `ezpz doctor --deep`: one ezpz-probe rank per node, launched through the
// normal launch plan; what each node reported, judged. Pure: the launch is
// apps/ezpz/cmd_doctor.cpp's, the probe is apps/probe/main.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/env.hpp"
#include "ezpz/doctor/doctor.hpp"

namespace ezpz::doctor {

// What one node's probe printed. Each rank prints a "node" line before it
// joins MPI, and an "allreduce" line once a tiny all-reduce over every rank
// is done: a node whose peers never arrive still reports the first.
struct NodeReport {
  std::string host;      // the name the launcher placed the rank on
  std::string hostname;  // gethostname() there
  int nvidia = 0;        // /dev/nvidia<N>
  int dri = 0;           // /dev/dri/renderD<N> (Intel and AMD GPUs)
  std::string target;    // the directory whose free space it measured (yeet's destination)
  bool writable = false;
  std::uint64_t free_bytes = 0;
  std::string target_error;  // statvfs() failed: "<dir>: <why>"
  double load1 = 0;          // 1-minute load average
  int cores = 0;
  bool joined = false;  // its "allreduce" line arrived
  int size = 0;         // MPI_COMM_WORLD's size, as that rank saw it
  int sum = 0;          // the all-reduce of 1 from every rank: equals size when all took part
  int gpus() const { return nvidia > 0 ? nvidia : dri; }
  bool operator==(const NodeReport&) const = default;
};

// The probe's lines anywhere in `text` (the launcher may interleave ranks'
// lines and prefix them); other lines are ignored. One report per host, in
// the order hosts first appear.
std::vector<NodeReport> parse_probe_output(std::string_view text);

struct DeepRun {
  std::vector<std::string> hosts;  // the hosts the probe was launched on
  std::string launcher;            // the dialect, for remedies
  int exit_status = 0;             // the launcher's
  bool timed_out = false;          // stopped at the timeout
  double timeout_s = 0;
  std::uint64_t needed_bytes = 0;  // what yeet would stage on each node; 0 for nothing
  std::string failed_nodes_file;   // where the failed nodes are written
};

struct NodeVerdict {
  std::string host;
  Status status = Status::ok;
  std::string message;
  std::optional<NodeReport> report;
  bool operator==(const NodeVerdict&) const = default;
};

struct DeepVerdict {
  CheckResult check;                // "nodes"
  std::vector<NodeVerdict> nodes;   // every host launched on, in launch order
  std::vector<std::string> failed;  // the hosts to leave out: ezpz launch --exclude-file
};

DeepVerdict judge_nodes(const DeepRun& run, const std::vector<NodeReport>& reports);

// The failed-nodes file: a comment line, then one host per line, as
// `ezpz launch --exclude-file` reads it.
std::string failed_nodes_text(const std::vector<std::string>& failed, std::string_view job_id);

// Where it goes unless --failed-nodes says: $EZPZ_RUN_DIR, else <ezpz cache
// dir>/doctor, named by the job; nullopt when neither is known.
std::optional<std::string> default_failed_nodes_path(const Env& env, std::string_view job_id);

}  // namespace ezpz::doctor
