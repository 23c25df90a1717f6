#include "ezpz/profile/profile_cache.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

using namespace ezpz;

using ezpz::testing::bundled_profile_files;

TEST_CASE("every bundled profile survives the cache unchanged", "[profile_cache]") {
  std::vector<ProfileFile> files = bundled_profile_files();
  REQUIRE(files.size() >= 10);
  std::vector<MachineProfile> profiles = load_profiles(files);
  std::string key = profile_cache_key(files);
  auto restored = deserialize_profiles(serialize_profiles(key, profiles), key);
  REQUIRE(restored);
  CHECK(*restored == profiles);
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
}
