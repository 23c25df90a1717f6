// Machine profiles from the search path, through a per-user cache of the
// parsed result (see lib/ezpz/profile/profile_cache.hpp for why).
#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/profile/profile_cache.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {

LoadedProfiles load_machine_profiles(const Env& env) {
  std::vector<ProfileFile> files = read_profile_files(env);
  std::optional<std::string> cache_dir = ezpz_cache_dir(env);
  if (!cache_dir) return load_each_profile(files);
  const std::string key = profile_cache_key(files);
  const std::string path = *cache_dir + "/profiles.cache";
  if (auto text = read_file_if_present(path)) {
    if (auto cached = deserialize_profiles(*text, key)) return {*cached, {}};
  }
  LoadedProfiles loaded = load_each_profile(files);
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
