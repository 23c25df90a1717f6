// The key tables the cache and `ezpz machines show` walk (profile_keys): the same keys
// the reader knows, each documented.
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ezpz/core/error.hpp"
#include "ezpz/profile/machine_profile.hpp"
#include "tests/catch.hpp"
#include "tests/support/every_key.hpp"
#include "tests/support/files.hpp"

namespace ezpz {
namespace {

// "description", "match.hostnames", ...: every key a file can set, nested ones by path.
template <typename T>
void key_paths(const std::string& prefix, std::vector<std::string>& paths) {
  for (const ProfileKey<T>& row : profile_keys<T>()) {
    std::visit(
        [&](auto member) {
          using Member = decltype(member);
          if constexpr (!std::is_same_v<Member, std::monostate>) {
            using Value = std::remove_cvref_t<decltype(std::declval<T>().*member)>;
            if constexpr (testing::k_keyed<Value>)
              key_paths<Value>(prefix + std::string(row.key) + ".", paths);
            else
              paths.push_back(prefix + std::string(row.key));
          }
        },
        row.member);
  }
}

std::vector<std::string> every_key_path() {
  std::vector<std::string> paths;
  key_paths<MachineProfile>("", paths);
  return paths;
}

TEST_CASE("the key tables hold every key the reader takes", "[profile]") {
  for (const std::string& path : every_key_path()) {
    INFO(path);
    std::string::size_type dot = path.find('.');
    // Each key, misspelt by one letter, is an unknown key that suggests it.
    std::string typo = path.substr(dot == std::string::npos ? 0 : dot + 1) + "x";
    std::string yaml = dot == std::string::npos
                           ? "launcher: pals\n" + typo + ": 1\n"
                           : "launcher: pals\n" + path.substr(0, dot) + ":\n  " + typo + ": 1\n";
    CHECK_THROWS_WITH(parse_machine_profile(yaml, "m/x.yaml"),
                      Catch::Contains("did you mean \"" + typo.substr(0, typo.size() - 1) + "\""));
  }
}

TEST_CASE("machines/README.md documents every key", "[profile]") {
  const std::string readme = testing::read_text_file(EZPZ_SOURCE_DIR "/machines/README.md");
  for (const std::string& path : every_key_path()) {
    INFO(path);
    CHECK(readme.find("| `" + path + "` |") != std::string::npos);
  }
}

}  // namespace
}  // namespace ezpz
