#include "ezpz/profile/profile_cache.hpp"
#include "tests/catch.hpp"
#include "tests/support/every_key.hpp"
#include "tests/support/files.hpp"

using namespace ezpz;

using ezpz::testing::bundled_profile_files;

// Parsed, written to the cache, read back: the same profiles.
void check_round_trip(const std::vector<ProfileFile>& files) {
  std::vector<MachineProfile> profiles = load_profiles(files);
  std::string key = profile_cache_key(files);
  auto restored = deserialize_profiles(serialize_profiles(key, profiles), key);
  REQUIRE(restored);
  CHECK(*restored == profiles);
}

TEST_CASE("every bundled profile survives the cache unchanged", "[profile_cache]") {
  std::vector<ProfileFile> files = bundled_profile_files();
  REQUIRE(files.size() >= 10);
  check_round_trip(files);
}

// The cache is derived from the reader's key tables: every key, set, comes back.
TEST_CASE("a profile with every key set survives the cache unchanged", "[profile_cache]") {
  std::vector<ProfileFile> files = {{"/m/every.yaml", testing::k_every_key_profile}};
  testing::check_every_key_set(load_profiles(files).at(0));
  check_round_trip(files);
}

TEST_CASE("a cache of another shape is a miss, never an error", "[profile_cache]") {
  std::vector<ProfileFile> files = {{"/m/every.yaml", testing::k_every_key_profile}};
  std::string key = profile_cache_key(files);
  std::string cache = serialize_profiles(key, load_profiles(files));
  REQUIRE(deserialize_profiles(cache, key));
  // Cut anywhere, or one byte more: every field is length-prefixed, so none decodes.
  for (std::size_t size = 0; size < cache.size(); ++size)
    CHECK_FALSE(deserialize_profiles(std::string_view(cache).substr(0, size), key));
  CHECK_FALSE(deserialize_profiles(cache + "x", key));
  // A profile count far beyond what the text holds is refused before anything is allocated.
  const std::size_t count = cache.find(key) + key.size();
  std::string huge = cache.substr(0, count) + "\xff\xff\xff\xff\x0f" + cache.substr(count + 1);
  CHECK_FALSE(deserialize_profiles(huge, key));
}

TEST_CASE("any change to any profile file misses the cache", "[profile_cache]") {
  std::vector<ProfileFile> files = {{"/m/a.yaml", "launcher: pals\n"}};
  std::string key = profile_cache_key(files);
  std::string cache = serialize_profiles(key, load_profiles(files));
  files[0].text = "launcher: hydra\n";
  CHECK_FALSE(deserialize_profiles(cache, profile_cache_key(files)));
  files[0].text = "launcher: pals\n";
  CHECK(deserialize_profiles(cache, profile_cache_key(files)));
  files.push_back({"/m/b.yaml", "launcher: srun\n"});
  CHECK_FALSE(deserialize_profiles(cache, profile_cache_key(files)));
}

TEST_CASE("a damaged cache is a miss, never an error", "[profile_cache]") {
  std::vector<ProfileFile> files = {{"/m/a.yaml", "launcher: pals\n"}};
  std::string key = profile_cache_key(files);
  std::string cache = serialize_profiles(key, load_profiles(files));
  CHECK_FALSE(deserialize_profiles(cache.substr(0, cache.size() / 2), key));
  CHECK_FALSE(deserialize_profiles("", key));
  CHECK_FALSE(deserialize_profiles("{\"key\":\"" + key + "\",\"profiles\":[{}]}", key));
  CHECK_FALSE(deserialize_profiles("ezpz-profile-cache\n\xff\xff", key));
}
