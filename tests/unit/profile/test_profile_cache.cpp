#include "ezpz/profile/profile_cache.hpp"

#include <functional>
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

TEST_CASE("the stat key: every field counts, and only files left alone 2 s", "[profile_cache]") {
  constexpr std::int64_t now = 1'000'000'000'000;
  const std::int64_t settled = now - k_settled_ns;
  const std::vector<ProfileStamp> stamps = {
      {.path = "/m/a.yaml", .device = 1, .inode = 2, .size = 3, .mtime_ns = 10, .ctime_ns = 11},
      {.path = "/m/b.yaml", .device = 1, .inode = 4, .size = 5, .mtime_ns = 12, .ctime_ns = 13}};
  const auto key = profile_stamp_key(stamps, now);
  REQUIRE(key);
  CHECK(key->starts_with("stat-"));
  CHECK(key->ends_with("-2"));
  CHECK(profile_stamp_key(stamps, now) == key);
  using Field = std::function<void(ProfileStamp&)>;
  const std::vector<std::pair<std::string, Field>> changes = {
      {"path", [](ProfileStamp& s) { s.path = "/m/c.yaml"; }},
      {"device", [](ProfileStamp& s) { s.device = 9; }},
      {"inode", [](ProfileStamp& s) { s.inode = 9; }},
      {"size", [](ProfileStamp& s) { s.size = 9; }},
      {"mtime", [](ProfileStamp& s) { s.mtime_ns = 9; }},
      {"ctime", [](ProfileStamp& s) { s.ctime_ns = 9; }}};
  for (const auto& [name, change] : changes) {
    CAPTURE(name);
    std::vector<ProfileStamp> changed = stamps;
    change(changed[1]);
    CHECK(profile_stamp_key(changed, now) != key);
  }
  std::vector<ProfileStamp> reordered = {stamps[1], stamps[0]};
  CHECK(profile_stamp_key(reordered, now) != key);
  CHECK(profile_stamp_key({}, now) != key);
  // A file changed within 2 s of now, or after it (a clock set back): its text must tell.
  std::vector<ProfileStamp> recent = stamps;
  recent[0].ctime_ns = settled;
  CHECK(profile_stamp_key(recent, now));
  recent[0].ctime_ns = settled + 1;
  CHECK_FALSE(profile_stamp_key(recent, now));
  recent[0].ctime_ns = 11;
  recent[0].mtime_ns = now + 5;
  CHECK_FALSE(profile_stamp_key(recent, now));
  // Never the key of the texts.
  CHECK(*key != profile_cache_key({{"/m/a.yaml", "launcher: hydra\n"}}));
}

// Before: any byte of the cache could change what a launch ran (issue 45). Now one byte changed
// anywhere misses, and a cache rewritten whole, its checksum made good, still cannot name a
// variable or a machine the YAML reader would refuse.
TEST_CASE("a cache changed on disk or written by someone else is a miss", "[profile_cache]") {
  std::vector<ProfileFile> files = {{"/m/a.yaml", "launcher: pals\nenv: {X: '1'}\n"}};
  std::string key = profile_cache_key(files);
  const std::vector<MachineProfile> profiles = load_profiles(files);
  const std::string cache = serialize_profiles(key, profiles);
  REQUIRE(deserialize_profiles(cache, key));
  for (std::size_t at = 0; at < cache.size(); ++at) {
    std::string flipped = cache;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x20);
    INFO("byte " << at);
    CHECK_FALSE(deserialize_profiles(flipped, key));
  }
  std::vector<MachineProfile> planted = profiles;
  planted[0].env = {{"X;id>/tmp/q", "1"}};
  CHECK_FALSE(deserialize_profiles(serialize_profiles(key, planted), key));
  planted = profiles;
  planted[0].name = "`id`";
  CHECK_FALSE(deserialize_profiles(serialize_profiles(key, planted), key));
}
