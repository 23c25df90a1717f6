// `ezpz doctor`'s report: text for people, JSON for programs.
#include "ezpz/doctor/doctor_report.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/color.hpp"
#include "ezpz/core/json_text.hpp"
#include "ezpz/doctor/doctor_checks.hpp"

namespace ezpz::doctor {

ContextList context_of(const Snapshot& s, const Derived& d) {
  std::string job = "-";
  if (s.scheduler && *s.scheduler == SchedulerKind::local) {
    job = "none (local)";
  } else if (s.scheduler) {
    std::string id = s.allocation ? s.allocation->job_id : "";
    job = fmt::format("{} {}", to_string(*s.scheduler), id.empty() ? "?" : id);
  }
  std::string libtorch = libtorch_version(s.trainer_probe);
  std::string torch = torch_version(s);
  auto active = first_nonempty(s.env, {"VIRTUAL_ENV", "CONDA_PREFIX"});
  return {
      {"user", s.user.empty() ? "-" : s.user},
      {"host", s.hostname},
      {"machine", d.profile ? d.profile->name : "-"},
      {"job", job},
      {"ezpz", s.ezpz_version},
      {"libtorch", libtorch.empty() ? "-" : libtorch},
      {"torch", torch.empty() ? "-" : torch},
      {"launcher", describe_launcher(s)},
      {"python", active ? active->second : (s.python.python3.empty() ? "-" : s.python.python3)},
  };
}

// ---- Text ---------------------------------------------------------------------

namespace {

struct Style {
  std::string_view label;  // fixed width, so columns line up without the colour codes
  Paint colour;
};
constexpr std::array<Style, 3> k_styles = {{
    {"ok   ", Paint::green},
    {"WARN ", Paint::yellow},
    {"ERROR", Paint::bold_red},
}};

std::string status_word(Status status, bool color) {
  const Style& style = k_styles[static_cast<std::size_t>(status)];
  return paint(style.label, style.colour, color);
}

void append_context(std::string& out, const ContextList& context) {
  out += "ezpz doctor\n";
  for (const auto& [label, value] : context) out += fmt::format("  {:<9} {}\n", label, value);
  out += "\n";
}

void append_checks(std::string& out, const std::vector<CheckResult>& checks, bool color) {
  std::size_t width = 0;
  for (const CheckResult& c : checks) width = std::max(width, c.name.size());
  for (const CheckResult& c : checks) {
    out +=
        fmt::format("  {}  {:<{}}  {}\n", status_word(c.status, color), c.name, width, c.message);
    if (c.status != Status::ok && !c.remedy.empty()) {
      out += fmt::format("  {:<5}  {:<{}}  -> {}\n", "", "", width, c.remedy);
    }
  }
}

// Every node when there are few; past that, only those with something to say.
void append_nodes(std::string& out, const Report& report, bool color) {
  const DeepVerdict& deep = *report.deep;
  constexpr std::size_t k_all_up_to = 32;
  std::size_t width = 0;
  for (const NodeVerdict& node : deep.nodes) width = std::max(width, node.host.size());
  out += fmt::format("\nnodes ({} launched)\n", deep.nodes.size());
  for (const NodeVerdict& node : deep.nodes) {
    if (deep.nodes.size() > k_all_up_to && node.status == Status::ok) continue;
    out += fmt::format("  {}  {:<{}}  {}\n", status_word(node.status, color), node.host, width,
                       node.message);
  }
  if (!report.failed_nodes_file.empty()) {
    out += fmt::format("failed nodes ({}) written to {}\n", deep.failed.size(),
                       report.failed_nodes_file);
  }
}

std::string plural(std::size_t count, std::string_view word) {
  return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
}

void append_summary(std::string& out, const Report& report) {
  std::array<std::size_t, 3> counts{};
  for (const CheckResult& c : report.checks) ++counts[static_cast<std::size_t>(c.status)];
  out += fmt::format("\n{}: {} ok, {}, {} ({:.2f} s)\n", plural(report.checks.size(), "check"),
                     counts[0], plural(counts[1], "warning"), plural(counts[2], "error"),
                     report.elapsed_s);
}

}  // namespace

std::string render_text(const Report& report, bool color) {
  std::string out;
  append_context(out, report.context);
  append_checks(out, report.checks, color);
  if (report.deep) append_nodes(out, report, color);
  append_summary(out, report);
  return out;
}

// ---- JSON ---------------------------------------------------------------------

namespace {

nlohmann::ordered_json node_json(const NodeVerdict& node) {
  nlohmann::ordered_json j = {{"host", node.host},
                              {"status", to_string(node.status)},
                              {"message", node.message},
                              {"report", nullptr}};
  if (const auto& r = node.report) {
    j["report"] = {{"hostname", r->hostname},
                   {"gpus", r->gpus()},
                   {"target", r->target},
                   {"writable", r->writable},
                   {"free_bytes", r->free_bytes},
                   {"load1", r->load1},
                   {"cores", r->cores},
                   {"joined", r->joined},
                   {"size", r->size},
                   {"sum", r->sum}};
  }
  return j;
}

}  // namespace

std::string render_json(const Report& report) {
  nlohmann::ordered_json j;
  j["checks"] = nlohmann::ordered_json::array();
  for (const CheckResult& c : report.checks) {
    j["checks"].push_back({{"name", c.name},
                           {"status", to_string(c.status)},
                           {"message", c.message},
                           {"remedy", c.remedy.empty() ? nlohmann::ordered_json(nullptr)
                                                       : nlohmann::ordered_json(c.remedy)}});
  }
  j["context"] = nlohmann::ordered_json::object();
  for (const auto& [label, value] : report.context) j["context"][label] = value;
  j["elapsed_s"] = report.elapsed_s;
  if (report.deep) {
    j["nodes"] = nlohmann::ordered_json::array();
    for (const NodeVerdict& node : report.deep->nodes) j["nodes"].push_back(node_json(node));
    j["failed_nodes"] = report.deep->failed;
    j["failed_nodes_file"] = report.failed_nodes_file;
  }
  return json_text(j, 2);
}

}  // namespace ezpz::doctor
