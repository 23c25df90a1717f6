#include "ezpz/profile/profile_view.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <concepts>
#include <type_traits>
#include <variant>

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

// How `show` writes each type a key can hold, walking the reader's key tables
// (profile_keys), so a new key is shown with no code here. A key left at its
// default is left out (cpu_bind, launcher and gpus_per_node are always written).

constexpr std::array<const char*, 3> k_bind_styles = {"none", "depth", "list"};

template <typename T>
concept Keyed =
    std::same_as<T, MachineMatch> || std::same_as<T, GpuBind> || std::same_as<T, BatchDefaults>;

YAML::Emitter& key(YAML::Emitter& out, std::string_view name) {
  return out << YAML::Key << std::string(name) << YAML::Value;
}

void emit(YAML::Emitter& out, std::string_view name, const std::string& text) {
  if (!text.empty()) key(out, name) << text;
}

void emit(YAML::Emitter& out, std::string_view name, int number) {
  key(out, name) << number;
}

template <typename Item>
void emit(YAML::Emitter& out, std::string_view name, const std::vector<Item>& items) {
  if (!items.empty()) key(out, name) << YAML::Flow << items;
}

void emit(YAML::Emitter& out, std::string_view name, const EnvList& env) {
  if (env.empty()) return;
  key(out, name) << YAML::BeginMap;
  for (const auto& [variable, value] : env) {
    out << YAML::Key << variable << YAML::Value << std::string(shown_value(variable, value));
  }
  out << YAML::EndMap;
}

void emit(YAML::Emitter& out, std::string_view name, const std::optional<SchedulerKind>& kind) {
  if (kind) key(out, name) << std::string(to_string(*kind));
}

void emit(YAML::Emitter& out, std::string_view name, CpuBind::Style style) {
  key(out, name) << k_bind_styles[static_cast<size_t>(style)];
}

// Always, with the numbers its style uses.
void emit(YAML::Emitter& out, std::string_view name, const CpuBind& bind) {
  key(out, name) << YAML::BeginMap;
  emit(out, "style", bind.style);
  if (bind.style == CpuBind::Style::depth) emit(out, "depth", bind.depth);
  if (bind.style == CpuBind::Style::list) {
    emit(out, "sockets", bind.sockets);
    emit(out, "cores_per_socket", bind.cores_per_socket);
    emit(out, "reserved_cores", bind.reserved_cores);
  }
  out << YAML::EndMap;
}

// Quoted: a regular expression is full of characters YAML would read.
void emit(YAML::Emitter& out, std::string_view name, const std::vector<BadNodePattern>& patterns) {
  if (patterns.empty()) return;
  key(out, name) << YAML::BeginMap;
  for (const BadNodePattern& p : patterns)
    out << YAML::Key << p.name << YAML::Value << YAML::SingleQuoted << p.regex;
  out << YAML::EndMap;
}

template <Keyed T>
void emit(YAML::Emitter& out, std::string_view name, const T& value);

// Each key of T that is set, in the reader's order.
template <typename T>
void emit_keys(YAML::Emitter& out, const T& value) {
  for (const ProfileKey<T>& row : profile_keys<T>()) {
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::monostate>)
            emit(out, row.key, value.*member);
        },
        row.member);
  }
}

template <Keyed T>
void emit(YAML::Emitter& out, std::string_view name, const T& value) {
  if (value == T{}) return;
  key(out, name) << YAML::BeginMap;
  emit_keys(out, value);
  out << YAML::EndMap;
}

}  // namespace

std::string profile_yaml(const MachineProfile& p) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  emit_keys(out, p);
  out << YAML::EndMap;
  return fmt::format("# {}: {}\n{}\n", p.name, p.source, out.c_str());
}

}  // namespace ezpz
