#include "ezpz/profile/profile_cache.hpp"

#include <concepts>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/content_hash.hpp"

namespace ezpz {
namespace {

using nlohmann::json;

// The cache is derived from the YAML reader's key tables (profile_keys): each type a
// key can hold is encoded once below, and a keyed struct is the array of its members
// in key order, without the names (less to parse at every start-up). The tables
// themselves are part of the cache key (cache_layout), so a cache written before a
// key was added, moved or retyped is never read by position.

template <typename T>
concept Keyed = std::same_as<T, MachineMatch> || std::same_as<T, CpuBind> ||
    std::same_as<T, GpuBind> || std::same_as<T, BatchDefaults>;

void encode(json& out, const std::string& value) {
  out = value;
}
void encode(json& out, int value) {
  out = value;
}
void encode(json& out, CpuBind::Style style) {
  out = static_cast<int>(style);
}
void encode(json& out, const std::optional<SchedulerKind>& scheduler) {
  out = scheduler ? std::string(to_string(*scheduler)) : "";
}
void encode(json& out, const std::pair<std::string, std::string>& pair) {
  out = {pair.first, pair.second};
}
void encode(json& out, const BadNodePattern& pattern) {
  out = {pattern.name, pattern.regex};
}
template <typename T>
void encode(json& out, const std::vector<T>& items);
template <Keyed T>
void encode(json& out, const T& value);

// Appends each member that a key of T fills to the array `out`.
template <typename T>
void encode_members(json& out, const T& value) {
  for (const ProfileKey<T>& key : profile_keys<T>()) {
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::monostate>)
            encode(out.emplace_back(), value.*member);
        },
        key.member);
  }
}

template <typename T>
void encode(json& out, const std::vector<T>& items) {
  out = json::array();
  for (const T& item : items) encode(out.emplace_back(), item);
}
template <Keyed T>
void encode(json& out, const T& value) {
  out = json::array();
  encode_members(out, value);
}

// Each decode throws json::exception for a value of the wrong shape: the cache misses.
void decode(const json& in, std::string& value) {
  value = in.get_ref<const std::string&>();
}
void decode(const json& in, int& value) {
  in.get_to(value);
}
void decode(const json& in, CpuBind::Style& style) {
  style = static_cast<CpuBind::Style>(in.get<int>());
}
void decode(const json& in, std::optional<SchedulerKind>& scheduler) {
  scheduler = scheduler_from_string(in.get_ref<const std::string&>());
}
void decode(const json& in, std::pair<std::string, std::string>& pair) {
  decode(in.at(0), pair.first);
  decode(in.at(1), pair.second);
}
void decode(const json& in, BadNodePattern& pattern) {
  decode(in.at(0), pattern.name);
  decode(in.at(1), pattern.regex);
}
template <typename T>
void decode(const json& in, std::vector<T>& items);
template <Keyed T>
void decode(const json& in, T& value);

// Reads the members that the keys of T fill from the array `in`, from position `at`.
template <typename T>
void decode_members(const json& in, std::size_t at, T& value) {
  for (const ProfileKey<T>& key : profile_keys<T>()) {
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::monostate>)
            decode(in.at(at++), value.*member);
        },
        key.member);
  }
}

template <typename T>
void decode(const json& in, std::vector<T>& items) {
  const json::array_t& array = in.get_ref<const json::array_t&>();
  items.resize(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) decode(array[i], items[i]);
}
template <Keyed T>
void decode(const json& in, T& value) {
  decode_members(in, 0, value);
}

// A profile: its file's name and path, then its keys.
json encode_profile(const MachineProfile& profile) {
  json out = {profile.name, profile.source};
  encode_members(out, profile);
  return out;
}

MachineProfile decode_profile(const json& in) {
  MachineProfile profile;
  decode(in.at(0), profile.name);
  decode(in.at(1), profile.source);
  decode_members(in, 2, profile);
  return profile;
}

template <typename T>
void describe_keys(std::string& out) {
  for (const ProfileKey<T>& key : profile_keys<T>())
    out += fmt::format("{}:{};", key.key, key.member.index());
}

// Every key of every keyed struct, in order, with its type.
const std::string& cache_layout() {
  static const std::string layout = [] {
    std::string text;
    describe_keys<MachineProfile>(text);
    describe_keys<MachineMatch>(text);
    describe_keys<CpuBind>(text);
    describe_keys<GpuBind>(text);
    describe_keys<BatchDefaults>(text);
    return text;
  }();
  return layout;
}

}  // namespace

std::string profile_cache_key(const std::vector<ProfileFile>& files) {
  // Over "path\0text\0" for each file, after the encoding and the key tables.
  ContentHash hash;
  auto mix = [&hash](std::string_view bytes) {
    hash.add(bytes);
    hash.add_separator();
  };
  // The encoding of each type above: bump it when one changes. A new key needs no bump.
  mix("ezpz-profile-cache-v7");
  mix(cache_layout());
  for (const ProfileFile& file : files) {
    mix(file.path);
    mix(file.text);
  }
  return fmt::format("{:016x}-{}", hash.value(), files.size());
}

std::string serialize_profiles(std::string_view key, const std::vector<MachineProfile>& profiles) {
  json cached = {{"key", key}, {"profiles", json::array()}};
  for (const MachineProfile& profile : profiles)
    cached["profiles"].push_back(encode_profile(profile));
  return cached.dump();
}

std::optional<std::vector<MachineProfile>> deserialize_profiles(std::string_view text,
                                                                std::string_view key) {
  json cached = json::parse(text, nullptr, /*allow_exceptions=*/false);
  try {
    if (!cached.is_object() || cached.value("key", "") != key) return std::nullopt;
    std::vector<MachineProfile> profiles;
    for (const json& profile : cached.at("profiles").get_ref<const json::array_t&>())
      profiles.push_back(decode_profile(profile));
    return profiles;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace ezpz
