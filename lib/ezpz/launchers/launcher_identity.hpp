#pragma once
// Which program runs a launcher dialect: the candidates of launchers.cpp, each known by what
// its `--version` says. The decision and the on-disk cache's format are here (pure); the PATH
// search, the stat and the cache file are lib/ezpz/sys/launcher_program.cpp's.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/profile/machine_profile.hpp"

namespace ezpz {

// What `--version` said: the implementation's name ("Open MPI") and its version; an empty
// flavour is an implementation ezpz does not know, or a --version that failed.
struct LauncherIdentity {
  std::string flavour;
  std::string version;
  bool operator==(const LauncherIdentity&) const = default;
};

LauncherIdentity identify_launcher(std::string_view version_output);

// A program file as stat(2) sees it: any change to it (a package upgrade, an alternatives
// switch, a rewrite in place) changes one of these.
struct FileStamp {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

struct IdentityEntry {
  std::string path;  // as found on PATH
  FileStamp stamp;   // of the file it resolves to
  LauncherIdentity identity;
  bool operator==(const IdentityEntry&) const = default;
};

// The cache file: a version line, then one tab-separated line per entry, newest last, at most
// k_identity_cache_entries of them. Entries whose path holds a tab or newline are left out.
inline constexpr std::size_t k_identity_cache_entries = 64;
std::string encode_identity_cache(const std::vector<IdentityEntry>& entries);
// nullopt for anything but a whole cache of this version (truncated, corrupt, another
// version's): the caller starts afresh. Never throws.
std::optional<std::vector<IdentityEntry>> decode_identity_cache(std::string_view text);

// `entries` with `entry` added as the newest (replacing one for the same path), the oldest
// dropped past the limit.
std::vector<IdentityEntry> with_identity(std::vector<IdentityEntry> entries, IdentityEntry entry);

// Whether a program of this identity may run the dialect: it is the dialect's implementation,
// or one ezpz cannot tell (an unverified marker, a site's wrapper script, a --version that
// failed: doctor warns about those), or the dialect's identity is not checked (torchrun).
// Only a program known to be another implementation may not.
bool may_run_dialect(const LauncherIdentity& identity, std::string_view dialect);

// One candidate program as the resolver saw it.
struct ProgramSeen {
  std::string name;                 // as tried: "mpirun.openmpi", or as the user named it
  std::optional<std::string> path;  // where it was found; nullopt: not found
  LauncherIdentity identity;        // of the file at `path`
};

// A program the user named for the launcher, and where they named it, for messages.
struct NamedProgram {
  std::string program;   // a name on PATH or a path
  std::string named_by;  // "--launcher-program", "launcher_program of profile NAME"
};

// --launcher-program, else the profile's launcher_program when `dialect` is the profile's own
// launcher (a --launcher for another dialect leaves it out); nullopt: none named.
std::optional<NamedProgram> named_launcher_program(const std::optional<std::string>& option,
                                                   const MachineProfile& profile,
                                                   std::string_view dialect);

struct LauncherProgramChoice {
  std::string program;  // what to run: a candidate's name, or the name the user gave
  std::string path;     // where it is; empty when none was found (the executor says so)
  std::string refusal;  // why none of those found may run the dialect; empty when one may
  bool operator==(const LauncherProgramChoice&) const = default;
};

// The first program found, in the candidates' order, that may run the dialect; else a refusal
// naming what was found. None found: the first name, for the executor's not-found error.
// `named_by` is empty when the candidates are the dialect's own.
LauncherProgramChoice choose_launcher_program(std::string_view dialect,
                                              const std::vector<ProgramSeen>& seen,
                                              std::string_view named_by);

}  // namespace ezpz
