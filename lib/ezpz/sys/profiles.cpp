// Machine profiles from the search path, through a per-user cache of the
// parsed result (see lib/ezpz/profile/profile_cache.hpp for why).
#include <sys/stat.h>

#include <ctime>

#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/profile/profile_cache.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {

namespace {

std::int64_t nanoseconds(const timespec& time) {
  return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

// The cache's key from the files' stat fields (profile_cache.hpp); nullopt when one cannot be
// stat'ed or changed too lately for its fields to tell.
std::optional<std::string> stamp_key(const std::vector<std::string>& paths) {
  std::vector<ProfileStamp> stamps;
  for (const std::string& path : paths) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) return std::nullopt;
    stamps.push_back({.path = path,
                      .device = info.st_dev,
                      .inode = info.st_ino,
                      .size = static_cast<std::uint64_t>(info.st_size),
                      .mtime_ns = nanoseconds(info.st_mtim),
                      .ctime_ns = nanoseconds(info.st_ctim)});
  }
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return profile_stamp_key(stamps, nanoseconds(now));
}

}  // namespace

// Keyed by the files' stat fields where they tell (a hit reads no profile file), else by their
// paths and texts.
LoadedProfiles load_machine_profiles(const Env& env) {
  std::optional<std::string> cache_dir = ezpz_cache_dir(env);
  if (!cache_dir) return load_each_profile(read_profile_files(env));
  const std::string path = *cache_dir + "/profiles.cache";
  const std::optional<std::string> stamped = stamp_key(profile_paths(env));
  std::optional<std::vector<ProfileFile>> files;
  if (!stamped) files = read_profile_files(env);
  const std::string key = stamped ? *stamped : profile_cache_key(*files);
  const char* keyed_by = stamped ? "stat fields" : "texts";
  if (auto cache = read_own_cache(path)) {
    if (auto hit = deserialize_profiles(*cache, key)) {
      log::debug("machine profiles: from the cache (keyed by the files' {})", keyed_by);
      return {std::move(*hit), {}};
    }
  }
  log::debug("machine profiles: parsed (no cache keyed by the files' {})", keyed_by);
  if (!files) files = read_profile_files(env);
  LoadedProfiles loaded = load_each_profile(*files);
  if (!loaded.broken.empty()) return loaded;  // cached only whole: a cache hit has none to report
  try {
    write_files({{path, serialize_profiles(key, loaded.profiles)}});
  } catch (const Error& error) {
    log::debug("profile cache not written: {}", error.what());
  }
  return loaded;
}

void warn_skipped_profiles(const LoadedProfiles& loaded) {
  for (const BrokenProfile& broken : loaded.broken) {
    log::warn("machine profile {} skipped: {}", broken.name, broken.error);
  }
}

}  // namespace ezpz::sys
