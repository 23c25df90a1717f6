#pragma once
// A cache of parsed machine profiles. yaml-cpp spends ~1 ms parsing the
// bundled profiles, which is most of ezpz's start-up; the cache turns that
// into one small read and a decode of length-prefixed fields. Keyed by every
// profile file on the search path, so any edit, added or removed file misses:
// by each file's stat fields (device, inode, size, mtime and ctime, to the
// nanosecond) when every file last changed 2 s or more ago, so a launch reads no
// profile file; else by their paths and texts. (A key of stat fields alone could
// miss an edit made within the file system's timestamp granularity after the
// cache was written; one made 2 s later moves ctime, which nobody can set back.)
// Only successfully parsed sets are cached: a broken profile is always reported. The encoding
// follows the reader's key tables (profile_keys), which are part of the key: a new key needs no
// code here and misses every cache written before it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/profile/machine_profile.hpp"

namespace ezpz {

// A digest of every file's path and text, in order.
std::string profile_cache_key(const std::vector<ProfileFile>& files);

// What stat(2) says of one profile file.
struct ProfileStamp {
  std::string path;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
};

// How long a file must have been left alone for its stat fields to key the cache.
inline constexpr std::int64_t k_settled_ns = 2'000'000'000;

// A digest of every file's path and stat fields, in order; nullopt when one changed less than
// k_settled_ns before `now_ns` (or after it: a clock set back), when only its text can tell.
std::optional<std::string> profile_stamp_key(const std::vector<ProfileStamp>& stamps,
                                             std::int64_t now_ns);

std::string serialize_profiles(std::string_view key, const std::vector<MachineProfile>& profiles);

// The profiles stored under `key`; nullopt when the text is not a cache for
// that key (stale, truncated, written by another version). Never throws.
std::optional<std::vector<MachineProfile>> deserialize_profiles(std::string_view text,
                                                                std::string_view key);

}  // namespace ezpz
