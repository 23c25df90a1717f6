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
  // One value too few, and a list where a string goes.
  std::string::size_type last = cache.rfind(",[");
  REQUIRE(last != std::string::npos);
  CHECK_FALSE(deserialize_profiles(cache.substr(0, last) + "]]]}", key));
  std::string::size_type name = cache.find("\"every\"");
  REQUIRE(name != std::string::npos);
  CHECK_FALSE(deserialize_profiles(cache.replace(name, 7, "[]"), key));
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
  CHECK_FALSE(deserialize_profiles("{\"key\":1}", key));  // once an uncaught type_error
}
