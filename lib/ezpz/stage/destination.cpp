#include "ezpz/stage/destination.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ezpz/core/error.hpp"

namespace ezpz::stage {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> read_small_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// ".<name>.ezpz-yeet-<host>-<pid>-": what this host's staging directories start with.
std::string staging_prefix(const fs::path& destination, std::string_view host) {
  return fmt::format(".{}.ezpz-yeet-{}-", destination.filename().string(), host);
}

fs::path parent_of(const std::string& destination) {
  fs::path path(destination);
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

// Takes the staging directory's lock; true when it is ours now. The fd stays
// open (and the lock held) until the process exits.
bool lock_directory(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
  ::close(fd);
  return false;
}

// Waits up to `patience` seconds for nobody to hold the lock on `path`.
bool unlocked(const std::string& path, double patience) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(patience);
  for (;;) {
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    if (free) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Replaces `path` (a regular file) with `content`, keeping its mode.
void rewrite_file(const fs::path& path, const std::string& content) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  fs::path temporary = path.string() + ".ezpz-tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) throw Error(fmt::format("{}: cannot rewrite", path.string()));
  }
  ::chmod(temporary.c_str(), st.st_mode & 07777);
  fs::rename(temporary, path);
}

void patch_text_files(const fs::path& root, std::string_view from, std::string_view to,
                      const std::set<fs::path>& done) {
  for (const std::string& name : yeet::venv_text_files()) {
    fs::path path = root / name;
    if (done.count(path) || !fs::is_regular_file(fs::symlink_status(path))) continue;
    auto text = read_small_file(path);
    if (!text) continue;
    if (auto patched = yeet::replace_prefix(*text, from, to)) rewrite_file(path, *patched);
  }
}

// The files conda itself recorded as holding the prefix (conda-meta/*.json):
// activation hooks, pkg-config and sysconfig data, kernel specs, binaries.
// Text files get every occurrence replaced; binaries conda's NUL-padded
// rewrite, which cannot fit a longer prefix: those are named in `warnings`.
// Returns the files it rewrote, which no later pass may touch: a new prefix
// that contains the old one would be replaced twice.
std::set<fs::path> patch_conda_records(const fs::path& root, std::string_view from,
                                       std::string_view to, std::vector<std::string>& warnings) {
  std::set<fs::path> done;
  std::error_code error;
  std::size_t too_long = 0;
  for (const fs::directory_entry& record : fs::directory_iterator(root / "conda-meta", error)) {
    if (record.path().extension() != ".json") continue;
    std::vector<yeet::CondaPrefixFile> files;
    try {
      files = yeet::conda_prefix_files(read_small_file(record.path()).value_or(""));
    } catch (const Error& e) {
      warnings.push_back(fmt::format("{}: {}; its files keep the old prefix",
                                     record.path().lexically_relative(root).string(), e.what()));
      continue;
    }
    for (const yeet::CondaPrefixFile& file : files) {
      fs::path path = root / file.path;
      if (done.count(path) || !fs::is_regular_file(fs::symlink_status(path))) continue;
      auto content = read_small_file(path);
      if (!content) continue;
      auto patched = file.binary ? yeet::replace_prefix_padded(*content, from, to)
                                 : yeet::replace_prefix(*content, from, to);
      if (file.binary && !patched && to.size() > from.size() &&
          content->find(from) != std::string::npos) {
        ++too_long;
      }
      if (!patched) continue;
      rewrite_file(path, *patched);
      done.insert(path);
    }
  }
  if (too_long > 0) {
    warnings.push_back(fmt::format(
        "{} binary {} the old prefix {}: the new one ({} bytes) is longer than it ({} "
        "bytes) and cannot be written over it; choose a --dst no longer than the source path",
        too_long, too_long == 1 ? "file keeps" : "files keep", from, to.size(), from.size()));
  }
  return done;
}

// Scripts in bin/ (pip, console entry points) name the interpreter by path.
void patch_bin(const fs::path& root, std::string_view from, std::string_view to,
               const std::set<fs::path>& done) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(root / "bin", error)) {
    fs::file_status status = entry.symlink_status();
    if (fs::is_symlink(status)) {
      std::string target = fs::read_symlink(entry.path()).string();
      if (auto patched = yeet::replace_prefix(target, from, to); patched && target.rfind(from, 0) == 0) {
        fs::remove(entry.path());
        fs::create_symlink(*patched, entry.path());
      }
      continue;
    }
    if (!fs::is_regular_file(status) || entry.file_size(error) > (1 << 20) ||
        done.count(entry.path())) {
      continue;
    }
    auto content = read_small_file(entry.path());
    if (!content) continue;
    if (auto patched = yeet::rewrite_shebang(*content, from, to)) rewrite_file(entry.path(), *patched);
  }
}

std::string file_head(const fs::path& path, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string head(bytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(bytes));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head;
}

// The prefix most of bin/'s scripts run their Python from, counting only a
// Python this environment holds itself (bin/pythonX.Y is here): a stray
// script for the system's /usr/bin/python3 must not name /usr as the prefix.
std::optional<std::string> prefix_from_scripts(const fs::path& root) {
  std::map<std::string, int> votes;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(root / "bin", error)) {
    if (!fs::is_regular_file(entry.symlink_status(error))) continue;
    auto python = yeet::python_of_script(file_head(entry.path(), 4096));
    if (python && fs::exists(root / "bin" / python->program, error)) ++votes[python->prefix];
  }
  auto most = std::max_element(votes.begin(), votes.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most == votes.end()) return std::nullopt;
  return most->first;
}

}  // namespace

yeet::Holding inspect_destination(const std::string& destination, std::string_view fingerprint) {
  std::error_code error;
  fs::file_status status = fs::symlink_status(destination, error);
  if (!fs::exists(status)) return yeet::Holding::absent;
  bool empty = fs::is_directory(status) && fs::is_empty(destination, error);
  std::optional<std::string> stamp =
      fs::is_directory(status) ? read_small_file(fs::path(destination) / yeet::k_stamp_name)
                               : std::nullopt;
  return yeet::classify(stamp, true, empty, fingerprint);
}

int remove_stale_staging(const std::string& destination, std::string_view host,
                         double patience) {
  std::string prefix = staging_prefix(destination, host);
  int removed = 0;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent_of(destination), error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    if (!unlocked(entry.path().string(), patience)) continue;  // a run in progress
    fs::remove_all(entry.path(), error);
    if (!error) ++removed;
  }
  return removed;
}

std::string make_staging_dir(const std::string& destination, std::string_view host) {
  fs::path parent = parent_of(destination);
  std::error_code error;
  fs::create_directories(parent, error);
  if (error) throw Error(fmt::format("{}: {}", parent.string(), error.message()));
  std::string templ = (parent / (staging_prefix(destination, host) +
                                 fmt::format("{}-XXXXXX", ::getpid())))
                          .string();
  if (::mkdtemp(templ.data()) == nullptr) {
    throw Error(fmt::format("{}: {}", parent.string(), std::strerror(errno)));
  }
  if (!lock_directory(templ)) throw Error(fmt::format("{}: cannot lock it", templ));
  return templ;
}

std::optional<std::string> python_env_prefix(const std::string& directory) {
  if (auto activate = read_small_file(fs::path(directory) / "bin/activate")) {
    if (auto prefix = yeet::venv_prefix_from_activate(*activate)) return prefix;
  }
  return prefix_from_scripts(directory);
}

EnvPatch patch_python_env(const std::string& directory, std::string_view old_prefix,
                          std::string_view new_prefix) {
  fs::path root(directory);
  EnvPatch result;
  result.kind = fs::exists(root / "conda-meta")   ? yeet::EnvKind::conda
                : fs::exists(root / "pyvenv.cfg") ? yeet::EnvKind::venv
                                                  : yeet::EnvKind::other;
  if (result.kind == yeet::EnvKind::other) return result;
  if (old_prefix.empty()) {
    result.warnings.push_back(fmt::format(
        "cannot tell where this {} was made (no bin/activate or bin/ script names its Python): "
        "files that name that path are left as they were",
        result.kind == yeet::EnvKind::conda ? "conda env" : "venv"));
    return result;
  }
  std::set<fs::path> done;
  if (result.kind == yeet::EnvKind::conda) {
    done = patch_conda_records(root, old_prefix, new_prefix, result.warnings);
  }
  patch_text_files(root, old_prefix, new_prefix, done);
  patch_bin(root, old_prefix, new_prefix, done);
  return result;
}

void write_stamp(const std::string& directory, const yeet::Stamp& stamp) {
  fs::path path = fs::path(directory) / yeet::k_stamp_name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << yeet::stamp_json(stamp);
  out.close();
  if (!out) throw Error(fmt::format("{}: cannot write the stamp", path.string()));
}

void commit_staging(const std::string& staging, const std::string& destination) {
  // The staging directory was made 0700 by mkdtemp; the copy takes the
  // source root's mode from the archive when it has one, else 0755.
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, destination.c_str(), RENAME_EXCHANGE) == 0) {
    discard_staging(staging);  // now holds the old content
    return;
  }
  if (errno != ENOENT) {
    throw Error(fmt::format("{}: cannot replace: {}", destination, std::strerror(errno)));
  }
  if (::rename(staging.c_str(), destination.c_str()) != 0) {
    throw Error(fmt::format("{}: {}", destination, std::strerror(errno)));
  }
}

void discard_staging(const std::string& staging) noexcept {
  std::error_code error;
  fs::remove_all(staging, error);
}

}  // namespace ezpz::stage
