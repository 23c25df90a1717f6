#pragma once
// A cache of parsed machine profiles. yaml-cpp spends ~1 ms parsing the
// bundled profiles, which is most of ezpz's start-up; the cache turns that
// into one small read and a decode of length-prefixed fields. Keyed by the
// content of every profile file on the search path, so any edit, added or
// removed file misses (a key of stat fields could miss an edit made within the
// file system's timestamp granularity). Only successfully parsed sets are
// cached: a broken profile is always reported. The encoding follows the
// reader's key tables (profile_keys), which are part of the key: a new key needs
// no code here and misses every cache written before it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/profile/machine_profile.hpp"

namespace ezpz {

// A digest of every file's path and text, in order.
std::string profile_cache_key(const std::vector<ProfileFile>& files);

std::string serialize_profiles(std::string_view key, const std::vector<MachineProfile>& profiles);

// The profiles stored under `key`; nullopt when the text is not a cache for
// that key (stale, truncated, written by another version). Never throws.
std::optional<std::vector<MachineProfile>> deserialize_profiles(std::string_view text,
                                                                std::string_view key);

}  // namespace ezpz
