#pragma once
// The destination side of yeet on one node: what DST holds now, a staging
// directory beside it (same filesystem, so the final rename is atomic),
// patching a moved Python environment, and the swap into place. ezpz only
// ever deletes what it made: staging directories and copies with its stamp.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/stage/yeet.hpp"

namespace ezpz::stage {

// What `destination` holds, judged against the source's fingerprint.
yeet::Holding inspect_destination(const std::string& destination, std::string_view fingerprint);

// Removes staging directories beside `destination` that this host's earlier
// runs left behind: a directory is stale when no process holds its lock (the
// kernel drops a dead process's lock, so pid reuse cannot fool this). Locks
// still held are waited for up to `patience` seconds (a killed run's ranks
// may still be exiting). Returns how many were removed.
int remove_stale_staging(const std::string& destination, std::string_view host,
                         double patience = 0);

// Creates an empty staging directory beside `destination` (making its parent
// when needed) and locks it for the life of this process. Throws Error
// naming the path on failure.
std::string make_staging_dir(const std::string& destination, std::string_view host);

// What patching a moved environment found, and what it had to leave as it was.
struct EnvPatch {
  yeet::EnvKind kind = yeet::EnvKind::other;
  std::vector<std::string> warnings;  // one line each, for the user
};

// Rewrites what names `old_prefix` in a moved venv or conda env: activation
// scripts, pyvenv.cfg, "#!" lines and symlinks under bin/, and in a conda env
// every file its conda-meta records say holds the prefix. An empty
// `old_prefix` (unknown) changes nothing and says so in a warning.
EnvPatch patch_python_env(const std::string& directory, std::string_view old_prefix,
                          std::string_view new_prefix);

// The prefix the environment in `directory` was made for: a venv's
// bin/activate, else (conda) the Python that bin/'s scripts name in "#!".
std::optional<std::string> python_env_prefix(const std::string& directory);

void write_stamp(const std::string& directory, const yeet::Stamp& stamp);

// Puts `staging` at `destination` in one step (exchanging with what is there)
// and removes the old content. Throws Error on failure; nothing is lost then.
void commit_staging(const std::string& staging, const std::string& destination);

// Removes a staging directory (best effort, never throws).
void discard_staging(const std::string& staging) noexcept;

}  // namespace ezpz::stage
