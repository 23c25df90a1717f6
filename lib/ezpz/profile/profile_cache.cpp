#include "ezpz/profile/profile_cache.hpp"

#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/content_hash.hpp"

namespace ezpz {

// Field by field, so the struct and the cache cannot drift apart unnoticed:
// a round-trip test compares every bundled profile with ==.
void to_json(nlohmann::json& json, const CpuBind& bind) {
  json = {{"style", static_cast<int>(bind.style)},
          {"depth", bind.depth},
          {"sockets", bind.sockets},
          {"cores_per_socket", bind.cores_per_socket},
          {"reserved_cores", bind.reserved_cores}};
}

void from_json(const nlohmann::json& json, CpuBind& bind) {
  bind.style = static_cast<CpuBind::Style>(json.at("style").get<int>());
  json.at("depth").get_to(bind.depth);
  json.at("sockets").get_to(bind.sockets);
  json.at("cores_per_socket").get_to(bind.cores_per_socket);
  json.at("reserved_cores").get_to(bind.reserved_cores);
}

void to_json(nlohmann::json& json, const MachineProfile& p) {
  json = {{"name", p.name},
          {"source", p.source},
          {"description", p.description},
          {"match_hostnames", p.match.hostnames},
          {"match_env", p.match.env},
          {"scheduler", p.scheduler ? std::string(to_string(*p.scheduler)) : ""},
          {"launcher", p.launcher},
          {"launcher_program", p.launcher_program},
          {"gpus_per_node", p.gpus_per_node},
          {"device", p.device},
          {"backend", p.backend},
          {"cpu_bind", p.cpu_bind},
          {"env", p.env},
          {"launcher_args", p.launcher_args},
          {"mpi_launcher_args", p.mpi_launcher_args},
          {"network_suffix", p.network_suffix},
          {"master_addr", p.master_addr},
          {"bad_node_patterns", nlohmann::json::array()},
          {"batch_filesystems", p.batch.filesystems},
          {"batch_directives", p.batch.directives},
          {"batch_required", p.batch.required}};
  for (const BadNodePattern& pattern : p.bad_node_patterns) {
    json["bad_node_patterns"].push_back({pattern.name, pattern.regex});
  }
}

void from_json(const nlohmann::json& json, MachineProfile& p) {
  json.at("name").get_to(p.name);
  json.at("source").get_to(p.source);
  json.at("description").get_to(p.description);
  json.at("match_hostnames").get_to(p.match.hostnames);
  json.at("match_env").get_to(p.match.env);
  p.scheduler = scheduler_from_string(json.at("scheduler").get<std::string>());
  json.at("launcher").get_to(p.launcher);
  json.at("launcher_program").get_to(p.launcher_program);
  json.at("gpus_per_node").get_to(p.gpus_per_node);
  json.at("device").get_to(p.device);
  json.at("backend").get_to(p.backend);
  json.at("cpu_bind").get_to(p.cpu_bind);
  json.at("env").get_to(p.env);
  json.at("launcher_args").get_to(p.launcher_args);
  json.at("mpi_launcher_args").get_to(p.mpi_launcher_args);
  json.at("network_suffix").get_to(p.network_suffix);
  json.at("master_addr").get_to(p.master_addr);
  json.at("batch_filesystems").get_to(p.batch.filesystems);
  json.at("batch_directives").get_to(p.batch.directives);
  json.at("batch_required").get_to(p.batch.required);
  for (const auto& pattern : json.at("bad_node_patterns")) {
    p.bad_node_patterns.push_back(
        {pattern.at(0).get<std::string>(), pattern.at(1).get<std::string>()});
  }
}

std::string profile_cache_key(const std::vector<ProfileFile>& files) {
  // Over "path\0text\0" for each file, with the format version first.
  ContentHash hash;
  auto mix = [&hash](std::string_view bytes) {
    hash.add(bytes);
    hash.add_separator();
  };
  // v2: mpi_launcher_args; v3: bad_node_patterns; v4: batch; v5: batch.required;
  // v6: launcher_program
  mix("ezpz-profile-cache-v6");
  for (const ProfileFile& file : files) {
    mix(file.path);
    mix(file.text);
  }
  return fmt::format("{:016x}-{}", hash.value(), files.size());
}

std::string serialize_profiles(std::string_view key, const std::vector<MachineProfile>& profiles) {
  return nlohmann::json{{"key", key}, {"profiles", profiles}}.dump();
}

std::optional<std::vector<MachineProfile>> deserialize_profiles(std::string_view text,
                                                                std::string_view key) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || json.value("key", "") != key) return std::nullopt;
  try {
    return json.at("profiles").get<std::vector<MachineProfile>>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace ezpz
