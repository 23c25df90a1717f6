// `ezpz doctor --deep`: reading ezpz-probe's lines and judging every node.
#include "ezpz/doctor/doctor_deep.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/doctor/doctor_checks.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/stage/yeet.hpp"

namespace ezpz::doctor {
namespace {

constexpr std::string_view k_nodes = "nodes";

std::string bytes(std::uint64_t count) {
  return yeet::format_bytes(static_cast<double>(count));
}

void read_node_line(const nlohmann::json& j, NodeReport& r) {
  r.hostname = j.value("hostname", "");
  r.nvidia = j.value("nvidia", 0);
  r.dri = j.value("dri", 0);
  r.target = j.value("target", "");
  r.writable = j.value("writable", false);
  r.free_bytes = j.value("free_bytes", std::uint64_t{0});
  r.target_error = j.value("target_error", "");
  r.load1 = j.value("load1", 0.0);
  r.cores = j.value("cores", 0);
}

void read_allreduce_line(const nlohmann::json& j, NodeReport& r) {
  r.joined = true;
  r.size = j.value("size", 0);
  r.sum = j.value("sum", 0);
}

using ReportIndex = std::map<std::string, std::size_t, std::less<>>;  // short host -> reports[i]

// One probe line into its host's report. A line with a field of another type than this
// version's probe writes (another version's probe on a node, two ranks' lines run together)
// changes nothing: nlohmann's value() throws on it.
void read_probe_line(const nlohmann::json& j, std::vector<NodeReport>& reports,
                     ReportIndex& index) {
  try {
    const std::string host = j.value("host", "");
    const std::string kind = j.value("ezpz_probe", "");
    const auto found = index.find(short_host_name(host));
    const bool fresh = found == index.end();
    NodeReport report = fresh ? NodeReport() : reports[found->second];  // a copy: kept if read
    if (fresh) report.host = host;
    if (kind == "node") read_node_line(j, report);
    if (kind == "allreduce") read_allreduce_line(j, report);
    if (!fresh) {
      reports[found->second] = std::move(report);
    } else {
      index.emplace(std::string(short_host_name(host)), reports.size());
      reports.push_back(std::move(report));
    }
  } catch (const nlohmann::json::exception&) {
  }
}

}  // namespace

std::vector<NodeReport> parse_probe_output(std::string_view text) {
  std::vector<NodeReport> reports;
  ReportIndex index;
  for (std::string_view line : split_lines(text)) {
    std::size_t at = line.find('{');
    if (at == std::string_view::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line.substr(at), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("ezpz_probe") || !j.contains("host")) {
      continue;
    }
    read_probe_line(j, reports, index);
  }
  return reports;
}

// ---- Judging ------------------------------------------------------------------

namespace {

// What the launch as a whole says about the nodes that did report.
struct Picture {
  std::size_t launched = 0;
  std::size_t missing = 0;
  std::size_t joined = 0;
  int usual_gpus = 0;  // the most common count (the larger on a tie)
};

Picture picture_of(const DeepRun& run, const std::map<std::string, const NodeReport*>& by_host) {
  Picture p;
  p.launched = run.hosts.size();
  std::map<int, int> gpu_counts;
  for (const std::string& host : run.hosts) {
    auto it = by_host.find(std::string(short_host_name(host)));
    if (it == by_host.end()) {
      ++p.missing;
      continue;
    }
    if (it->second->joined) ++p.joined;
    ++gpu_counts[it->second->gpus()];
  }
  int best = 0;
  for (const auto& [gpus, count] : gpu_counts) {
    if (count >= best) std::tie(p.usual_gpus, best) = std::pair{gpus, count};
  }
  return p;
}

std::string why_missing(const DeepRun& run) {
  if (run.timed_out)
    return fmt::format("no report: the launch was stopped after {:g} s", run.timeout_s);
  return fmt::format("no report: the launcher exited with status {}", run.exit_status);
}

// The node's own faults: storage, devices. Each makes it a node to leave out.
std::vector<std::string> node_faults(const DeepRun& run, const NodeReport& r, const Picture& p) {
  std::vector<std::string> faults;
  if (!r.target_error.empty()) {
    faults.push_back(r.target_error);
  } else if (!r.writable) {
    faults.push_back(fmt::format("{} is not writable", r.target));
  } else if (run.needed_bytes > r.free_bytes) {
    faults.push_back(fmt::format("{} has {} free, the environment needs {}", r.target,
                                 bytes(r.free_bytes), bytes(run.needed_bytes)));
  }
  if (r.gpus() < p.usual_gpus) {
    faults.push_back(fmt::format("{}, most nodes have {}", plural(r.gpus(), "GPU"), p.usual_gpus));
  }
  // Peers were all there and others finished the all-reduce: this node failed it.
  if (!r.joined && p.missing == 0 && p.joined > 0) faults.push_back("did not join the all-reduce");
  return faults;
}

std::string describe_node(const NodeReport& r) {
  std::string reduce = !r.joined ? "all-reduce not done"
                       : r.sum == r.size
                           ? fmt::format("all-reduce ok (size {})", r.size)
                           : fmt::format("all-reduce sum {} of size {}", r.sum, r.size);
  return fmt::format("{}, {} {} free, load {:.2f} on {}, {}", plural(r.gpus(), "GPU"), r.target,
                     bytes(r.free_bytes), r.load1, plural(r.cores, "core"), reduce);
}

NodeVerdict judge_node(const DeepRun& run, const std::string& host, const NodeReport* r,
                       const Picture& p) {
  if (r == nullptr) return {host, Status::error, why_missing(run), std::nullopt};
  std::vector<std::string> faults = node_faults(run, *r, p);
  if (!faults.empty()) {
    return {host, Status::error, fmt::format("{}", fmt::join(faults, "; ")), *r};
  }
  // Not joined while peers were missing: they are to blame, not this node.
  if (!r->joined) return {host, Status::warn, describe_node(*r), *r};
  if (r->cores > 0 && r->load1 > 2.0 * r->cores) {
    return {host, Status::warn, "busy: " + describe_node(*r), *r};
  }
  return {host, Status::ok, describe_node(*r), *r};
}

// A fault of the launch as a whole, which no node can be blamed for.
std::optional<CheckResult> launch_fault(const DeepRun& run, const Picture& p,
                                        const std::vector<NodeVerdict>& nodes) {
  const LauncherRow* row = launcher_row(run.launcher);
  std::string pmi =
      row && !row->pmi_hint.empty() ? fmt::format(" ({}: {})", row->name, row->pmi_hint) : "";
  if (p.missing == p.launched) {
    return result(
        k_nodes, Status::error,
        fmt::format("no node answered: the probe launch {}",
                    run.timed_out ? fmt::format("was stopped after {:g} s", run.timeout_s)
                                  : fmt::format("exited with status {}", run.exit_status)),
        "run ezpz doctor --deep --dry-run, then that command by hand, to see why");
  }
  if (p.missing == 0 && p.joined == 0) {
    return result(k_nodes, Status::error,
                  "every node answered, but the all-reduce never completed: MPI could not "
                  "connect the nodes",
                  "check that the launcher gives ezpz-probe's MPI its process manager" + pmi +
                      ", and that the nodes reach each other");
  }
  // With nodes missing the rest cannot have met: those nodes are the fault.
  for (const NodeVerdict& node : p.missing == 0 ? nodes : std::vector<NodeVerdict>{}) {
    const auto& r = node.report;
    if (r && r->joined && (r->size != static_cast<int>(p.launched) || r->sum != r->size)) {
      return result(k_nodes, Status::error,
                    fmt::format("the probes did not form one MPI job: {} saw size {} and sum {}, "
                                "expected {}",
                                node.host, r->size, r->sum, p.launched),
                    "the launcher and ezpz-probe's MPI disagree on the process manager" + pmi);
    }
  }
  return std::nullopt;
}

CheckResult summarize(const DeepRun& run, const Picture& p, const std::vector<std::string>& failed,
                      const std::vector<NodeVerdict>& nodes) {
  if (!failed.empty()) {
    return result(
        k_nodes, Status::error,
        fmt::format("{} of {} failed: {}", failed.size(), plural(p.launched, "node"),
                    list_some(failed)),
        fmt::format("leave them out: ezpz launch --exclude-file {} ...", run.failed_nodes_file));
  }
  std::string message =
      fmt::format("{} of {} answered and joined the all-reduce; {} each", p.launched - p.missing,
                  plural(p.launched, "node"), plural(p.usual_gpus, "GPU"));
  std::vector<std::string> busy;
  for (const NodeVerdict& node : nodes) {
    if (node.status == Status::warn) busy.push_back(node.host);
  }
  if (!busy.empty()) {
    return result(k_nodes, Status::warn, fmt::format("{}; busy: {}", message, list_some(busy)),
                  "something else runs there: check with top or ps on those nodes");
  }
  if (run.exit_status != 0) {
    return result(
        k_nodes, Status::warn,
        fmt::format("{}; but the launcher exited with status {}", message, run.exit_status),
        "read the launcher's messages above");
  }
  return result(k_nodes, Status::ok, message);
}

}  // namespace

DeepVerdict judge_nodes(const DeepRun& run, const std::vector<NodeReport>& reports) {
  std::map<std::string, const NodeReport*> by_host;
  for (const NodeReport& r : reports) by_host.emplace(short_host_name(r.host), &r);
  Picture p = picture_of(run, by_host);
  DeepVerdict verdict;
  for (const std::string& host : run.hosts) {
    auto it = by_host.find(std::string(short_host_name(host)));
    verdict.nodes.push_back(judge_node(run, host, it == by_host.end() ? nullptr : it->second, p));
  }
  if (auto fault = launch_fault(run, p, verdict.nodes)) {
    verdict.check = *fault;
    return verdict;
  }
  for (const NodeVerdict& node : verdict.nodes) {
    if (node.status == Status::error) verdict.failed.push_back(node.host);
  }
  verdict.check = summarize(run, p, verdict.failed, verdict.nodes);
  return verdict;
}

std::string failed_nodes_text(const std::vector<std::string>& failed, std::string_view job_id) {
  std::string text = fmt::format(
      "# ezpz doctor --deep: nodes that failed ({}); for ezpz launch "
      "--exclude-file\n",
      job_id.empty() ? "no job" : fmt::format("job {}", job_id));
  for (const std::string& host : failed) text += host + "\n";
  return text;
}

std::optional<std::string> default_failed_nodes_path(const Env& env, std::string_view job_id) {
  return run_file_path(env, "doctor",
                       fmt::format("failed-nodes-{}.txt", job_id.empty() ? "local" : job_id));
}

}  // namespace ezpz::doctor
