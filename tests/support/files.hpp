#pragma once
// Real files for tests that need them: a scratch directory, whole-file reads,
// and the profiles bundled in machines/.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ezpz/profile/machine_profile.hpp"

namespace ezpz::testing {

// A fresh directory, removed with everything in it at the end of the test.
// Canonical, so that it compares equal to real paths the library reports.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ezpz-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = std::filesystem::canonical(pattern).string();
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string operator/(const std::string& name) const { return file(name); }

 private:
  std::string path_;
};

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The names in `dir`, sorted.
inline std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

#ifdef EZPZ_SOURCE_DIR
// Every machines/*.yaml of the source tree, as load_profiles takes them.
inline std::vector<ProfileFile> bundled_profile_files() {
  std::vector<ProfileFile> files;
  for (const auto& entry : std::filesystem::directory_iterator(EZPZ_SOURCE_DIR "/machines")) {
    if (entry.path().extension() != ".yaml") continue;
    files.push_back({entry.path().string(), read_text_file(entry.path().string())});
  }
  return files;
}
#endif

}  // namespace ezpz::testing
