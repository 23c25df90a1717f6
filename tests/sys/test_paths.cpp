// lib/ezpz/sys/paths.cpp against real directories and symlinks: what yeet's
// guards on DST see.
#include "ezpz/sys/paths.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "tests/catch.hpp"
#include "tests/support/files.hpp"

namespace fs = std::filesystem;
using ezpz::sys::resolve_path;
using ezpz::testing::TempDir;
using ezpz::yeet::FileId;

namespace {

FileId id_of(const std::string& path, bool follow = true) {
  struct stat st {};
  follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
  return {st.st_dev, st.st_ino};
}

}  // namespace

TEST_CASE("resolve_path: what exists is resolved, the rest taken as named", "[paths]") {
  TempDir dir;
  fs::create_directories(dir / "p/src");
  fs::create_directory_symlink(dir / "p/src", dir / "link-to-src");
  fs::create_directory_symlink("/", dir / "to-root");

  auto copy = resolve_path(dir / "link-to-src/copy", false);
  CHECK(copy.path == dir / "p/src/copy");
  CHECK_FALSE(copy.exists);
  REQUIRE_FALSE(copy.chain.empty());
  CHECK(copy.chain.front() == id_of("/"));
  CHECK(copy.chain.back() == id_of(dir / "p/src"));  // the source is an ancestor

  auto root_tmp = resolve_path(dir / "to-root/tmp", false);
  CHECK(root_tmp.path == "/tmp");
  CHECK(root_tmp.exists);

  auto missing = resolve_path(dir / "p/a/b/c", false);
  CHECK(missing.path == dir / "p/a/b/c");
  CHECK(missing.chain.back() == id_of(dir / "p"));
}

TEST_CASE("resolve_path: a symlink at the end is followed only when asked", "[paths]") {
  TempDir dir;
  fs::create_directories(dir / "p/src");
  fs::create_directory_symlink(dir / "p/src", dir / "link");

  auto named = resolve_path(dir / "link", false);
  CHECK(named.path == dir / "link");
  CHECK(named.exists);
  CHECK(named.chain.back() == id_of(dir / "link", false));

  auto followed = resolve_path(dir / "link", true);
  CHECK(followed.path == dir / "p/src");
  CHECK(followed.exists);
  CHECK(followed.chain.back() == id_of(dir / "p/src"));
  CHECK(followed.chain.size() == named.chain.size() + 1);  // /.../p/src is one deeper

  auto root = resolve_path("/", false);
  CHECK(root.path == "/");
  CHECK(root.exists);
  CHECK(root.chain.size() == 1);
}
