#include "ezpz/profile/profile_view.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "ezpz/core/env.hpp"

namespace ezpz {

std::string match_summary(const MachineProfile& p) {
  if (auto scheduler = fallback_for(p))
    return fmt::format("fallback for {} jobs", to_string(*scheduler));
  if (p.match.hostnames.empty()) return "only by name";
  std::string text = fmt::format("hostname {}", fmt::join(p.match.hostnames, " or "));
  for (const auto& [name, pattern] : p.match.env) text += fmt::format(" and {}={}", name, pattern);
  return text;
}

std::string profiles_table(const LoadedProfiles& loaded) {
  const std::array<std::string, 5> header = {"NAME", "SCHEDULER", "LAUNCHER", "MATCH", "FILE"};
  std::vector<std::array<std::string, 5>> rows = {header};
  for (const MachineProfile& p : loaded.profiles) {
    rows.push_back({p.name, p.scheduler ? std::string(to_string(*p.scheduler)) : "-", p.launcher,
                    match_summary(p), p.source});
  }
  // A broken file's error starts with its file:line, where the FILE column is.
  for (const BrokenProfile& b : loaded.broken)
    rows.push_back({b.name, "-", "-", "BROKEN", b.error});
  std::array<size_t, 5> width{};
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", row[0], width[0], row[1], width[1],
                       row[2], width[2], row[3], width[3], row[4]);
  }
  return out;
}

namespace {

constexpr std::array<const char*, 3> k_bind_styles = {"none", "depth", "list"};

void emit_env(YAML::Emitter& out, const char* key, const EnvList& env) {
  if (env.empty()) return;
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  for (const auto& [name, value] : env) {
    out << YAML::Key << name << YAML::Value << std::string(shown_value(name, value));
  }
  out << YAML::EndMap;
}

void emit_list(YAML::Emitter& out, const char* key, const std::vector<std::string>& words) {
  if (words.empty()) return;
  out << YAML::Key << key << YAML::Value << YAML::Flow << words;
}

void emit_text(YAML::Emitter& out, const char* key, const std::string& text) {
  if (!text.empty()) out << YAML::Key << key << YAML::Value << text;
}

void emit_match(YAML::Emitter& out, const MachineMatch& match) {
  if (match.hostnames.empty() && match.env.empty()) return;
  out << YAML::Key << "match" << YAML::Value << YAML::BeginMap;
  emit_list(out, "hostnames", match.hostnames);
  emit_env(out, "env", match.env);
  out << YAML::EndMap;
}

void emit_cpu_bind(YAML::Emitter& out, const CpuBind& bind) {
  out << YAML::Key << "cpu_bind" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "style" << YAML::Value << k_bind_styles[static_cast<size_t>(bind.style)];
  if (bind.style == CpuBind::Style::depth) out << YAML::Key << "depth" << YAML::Value << bind.depth;
  if (bind.style == CpuBind::Style::list) {
    out << YAML::Key << "sockets" << YAML::Value << bind.sockets;
    out << YAML::Key << "cores_per_socket" << YAML::Value << bind.cores_per_socket;
    if (!bind.reserved_cores.empty())
      out << YAML::Key << "reserved_cores" << YAML::Value << YAML::Flow << bind.reserved_cores;
  }
  out << YAML::EndMap;
}

void emit_bad_node_patterns(YAML::Emitter& out, const std::vector<BadNodePattern>& patterns) {
  if (patterns.empty()) return;
  out << YAML::Key << "bad_node_patterns" << YAML::Value << YAML::BeginMap;
  for (const BadNodePattern& p : patterns)
    out << YAML::Key << p.name << YAML::Value << YAML::SingleQuoted << p.regex;
  out << YAML::EndMap;
}

void emit_batch(YAML::Emitter& out, const BatchDefaults& batch) {
  if (batch == BatchDefaults{}) return;
  out << YAML::Key << "batch" << YAML::Value << YAML::BeginMap;
  emit_text(out, "filesystems", batch.filesystems);
  emit_list(out, "directives", batch.directives);
  emit_list(out, "required", batch.required);
  out << YAML::EndMap;
}

}  // namespace

std::string profile_yaml(const MachineProfile& p) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  emit_text(out, "description", p.description);
  emit_match(out, p.match);
  if (p.scheduler)
    out << YAML::Key << "scheduler" << YAML::Value << std::string(to_string(*p.scheduler));
  out << YAML::Key << "launcher" << YAML::Value << p.launcher;
  emit_text(out, "launcher_program", p.launcher_program);
  out << YAML::Key << "gpus_per_node" << YAML::Value << p.gpus_per_node;
  emit_text(out, "device", p.device);
  emit_text(out, "backend", p.backend);
  emit_cpu_bind(out, p.cpu_bind);
  emit_env(out, "env", p.env);
  emit_list(out, "launcher_args", p.launcher_args);
  emit_list(out, "mpi_launcher_args", p.mpi_launcher_args);
  emit_text(out, "network_suffix", p.network_suffix);
  emit_text(out, "master_addr", p.master_addr);
  emit_bad_node_patterns(out, p.bad_node_patterns);
  emit_batch(out, p.batch);
  out << YAML::EndMap;
  return fmt::format("# {}: {}\n{}\n", p.name, p.source, out.c_str());
}

}  // namespace ezpz
