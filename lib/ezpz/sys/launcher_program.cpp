#include "ezpz/sys/launcher_program.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "ezpz/sys/spawn.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {
namespace {

std::optional<FileStamp> stamp_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  auto ns = [](const timespec& t) { return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; };
  return FileStamp{static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
                   static_cast<std::uint64_t>(info.st_size), ns(info.st_mtim), ns(info.st_ctim)};
}

// The identities already known, read once; written back only when one was added.
class IdentityCache {
 public:
  explicit IdentityCache(const Env& env) {
    if (auto dir = ezpz_cache_dir(env)) path_ = *dir + "/launcher-identity";
    if (path_.empty()) return;
    if (auto text = read_own_cache(path_)) {
      entries_ = decode_identity_cache(*text).value_or(std::vector<IdentityEntry>{});
    }
  }

  LauncherIdentity identity(const std::string& program, const Env& env) {
    std::optional<FileStamp> stamp = stamp_of(program);
    if (!stamp) return {};
    auto known = std::find_if(entries_.begin(), entries_.end(), [&](const IdentityEntry& e) {
      return e.path == program && e.stamp == *stamp;
    });
    if (known != entries_.end()) return known->identity;
    // A --version that fails says nothing either way: cached as unknown like any other answer.
    LauncherIdentity found =
        identify_launcher(run_captured({program, "--version"}, env).value_or(""));
    entries_ = with_identity(std::move(entries_), {program, *stamp, found});
    changed_ = true;
    return found;
  }

  void save() const {
    if (!changed_ || path_.empty()) return;
    try {
      write_files({{path_, encode_identity_cache(entries_)}});
    } catch (const Error& error) {
      log::debug("launcher identity cache not written: {}", error.what());
    }
  }

 private:
  std::string path_;
  std::vector<IdentityEntry> entries_;
  bool changed_ = false;
};

}  // namespace

LauncherProgramChoice resolve_launcher_program(std::string_view dialect,
                                               const std::optional<NamedProgram>& named,
                                               const Env& env) {
  std::vector<std::string> names;
  if (named) {
    names.push_back(named->program);
  } else {
    for (std::string_view name : launcher_programs(dialect)) names.emplace_back(name);
  }
  const bool checked = !expected_flavour(dialect).empty();
  std::optional<IdentityCache> cache;
  std::vector<ProgramSeen> seen;
  for (const std::string& name : names) {
    ProgramSeen& program = seen.emplace_back(ProgramSeen{name, find_program(name, env), {}});
    if (!program.path || !checked) continue;
    if (!cache) cache.emplace(env);
    program.identity = cache->identity(*program.path, env);
    if (may_run_dialect(program.identity, dialect)) break;  // the first that may, runs
  }
  if (cache) cache->save();
  return choose_launcher_program(dialect, seen, named ? named->named_by : "");
}

}  // namespace ezpz::sys
