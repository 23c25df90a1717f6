#include "ezpz/sys/paths.hpp"

#include <limits.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

namespace ezpz::sys {
namespace fs = std::filesystem;
namespace {

std::optional<fs::path> real_path(const fs::path& path) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) return std::nullopt;
  return fs::path(resolved);
}

// realpath() of the longest existing prefix of `path`, the rest appended as named.
fs::path resolve_existing(const fs::path& path) {
  fs::path head = path;
  fs::path tail;
  std::optional<fs::path> real;
  while (!(real = real_path(head))) {
    if (!head.has_relative_path()) return path;  // even "/" failed: nothing to resolve
    tail = head.filename() / tail;
    head = head.parent_path();
  }
  return (*real / tail).lexically_normal();
}

std::optional<yeet::FileId> identity(const fs::path& path, bool follow) {
  struct stat st {};
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return std::nullopt;
  return yeet::FileId{st.st_dev, st.st_ino};
}

// The path the kernel will walk: what exists resolved, the last component
// followed only when asked.
std::string resolved_text(const fs::path& given, bool follow_last) {
  fs::path resolved = follow_last || !given.has_relative_path()
                          ? resolve_existing(given)
                          : resolve_existing(given.parent_path()) / given.filename();
  std::string text = resolved.string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

// "/", "/a", "/a/b" for "/a/b".
std::vector<fs::path> prefixes(const fs::path& path) {
  std::vector<fs::path> all = {"/"};
  for (const fs::path& part : path.relative_path()) all.push_back(all.back() / part);
  return all;
}

}  // namespace

yeet::ResolvedPath resolve_path(const std::string& path, bool follow_last) {
  yeet::ResolvedPath result{resolved_text(path, follow_last), {}, false};
  // Each prefix but the last is a real directory (no symlinks) where it exists.
  std::vector<fs::path> chain = prefixes(result.path);
  for (std::size_t i = 0; i < chain.size(); ++i) {
    bool follow = follow_last || i == 0 || i + 1 < chain.size();
    std::optional<yeet::FileId> id = identity(chain[i], follow);
    if (!id) return result;
    result.chain.push_back(*id);
  }
  result.exists = true;
  return result;
}

}  // namespace ezpz::sys
