#pragma once
// `ezpz yeet`: the pure decisions. What the source is, where it goes on each
// node, how many nodes must succeed, what a destination already holds and
// what to do about it, how a moved Python environment is patched, and how
// progress is shown. The MPI stager (apps/stager/) and `ezpz yeet`
// (apps/ezpz/cmd_yeet.cpp) do the side effects.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/content_hash.hpp"
#include "ezpz/core/env.hpp"

namespace ezpz::yeet {

// The environment to stage when no SRC is given: the active venv, else conda.
std::optional<std::string> default_source(const Env& env);

// True for the tarball names yeet accepts (.tar, .tar.gz, .tgz, .tar.zst, ...).
bool is_tarball_name(std::string_view path);

// The source's name without a tarball suffix: /p/venv/ and /p/venv.tar.gz -> "venv".
std::string source_name(std::string_view source);

// Where the nodes that failed are listed unless --failed-file says: beside doctor's
// (run_file_path): yeet-failed-nodes-<job>.txt in $EZPZ_RUN_DIR, else in <ezpz cache dir>/yeet;
// nullopt when neither is known. `job_id` is empty outside a job ("local").
std::optional<std::string> default_failed_file(const Env& env, std::string_view job_id);

// /tmp/<source name>: node-local on every machine we know.
std::string default_destination(std::string_view source);

// DST may name the node, so one shared filesystem can hold a copy per node:
// "{host}" becomes the node's short name and "{index}" its index in the job.
std::string expand_destination(std::string_view pattern, std::string_view host, int index);

// The name of the node a rank runs on, as the job's hostfile names it:
// Slurm's node name, Hydra's per-host name (one machine can simulate many),
// else the short host name.
std::string node_name(const Env& env, std::string_view hostname);

// --min-success N (a count) or FRACTION in (0, 1]; nodes_required(total) is
// how many of `total` nodes must succeed.
struct MinSuccess {
  std::optional<long> count;
  std::optional<double> fraction;
  long nodes_required(long total) const;
};
// Throws Error("--min-success: ...") for anything else.
MinSuccess parse_min_success(std::string_view text);

// What a destination holds before a transfer, as seen on one node.
enum class Holding {
  absent,   // nothing there (or an empty directory)
  current,  // ezpz's stamp with the source's fingerprint: nothing to do
  stale,    // ezpz's stamp for another fingerprint: replace it
  foreign,  // a non-empty directory or a file ezpz did not make
};
enum class Action { transfer, skip, refuse };
// ezpz replaces only its own copies: foreign content is refused even with
// --force (which copies again over an up-to-date copy), so a mistyped --dst
// can never swap out and delete someone's directory.
Action decide(Holding holding, bool force);

// --- Where a copy may go -------------------------------------------------------
// DST as yeet uses it: "." and ".." taken lexically (as `cd` does) and trailing
// slashes dropped, so that no guard can be walked around with "/tmp/../tmp".
std::string normal_destination(std::string_view destination);

// A file's identity (st_dev, st_ino): the same directory reached through a
// symlink or a bind mount has the same one.
struct FileId {
  unsigned long long device = 0;
  unsigned long long inode = 0;
  bool operator==(const FileId&) const = default;
};
// A path with what exists of it resolved (symlinks, mounts): the identity of
// "/" and of each existing ancestor below it, in order, down to the path
// itself when `exists`.
struct ResolvedPath {
  std::string path;
  std::vector<FileId> chain;
  bool exists = false;
};
// Why no copy may go to `destination` (lexically normal, resolved as
// `resolved`): a relative path, a top-level directory, the source itself, a
// place inside it, or a directory that holds it (its swap would delete the
// source). `source` is nullopt where the source cannot be seen. nullopt: fine.
std::optional<std::string> destination_problem(std::string_view destination,
                                               const ResolvedPath& resolved,
                                               const std::optional<ResolvedPath>& source,
                                               std::string_view source_name);
// How an error names --dst: as given (without trailing slashes), and what that
// is once normal when it differs: "/tmp/../tmp (/tmp)".
std::string destination_label(std::string_view given, std::string_view normal);

// --- What a copy may hold ------------------------------------------------------
// Why an entry of this type (st_mode) is refused: a device node, FIFO or socket
// has no place in a Python environment, and a device recreated by a yeet run
// as root (/dev/mem, mode 0666) would open the machine to every user. nullopt
// for files, directories, symlinks.
std::optional<std::string> refused_entry_type(unsigned mode);
// The mode a copied entry gets: setuid and setgid dropped unless asked for
// (--keep-setuid); a Python environment needs neither.
unsigned staged_mode(unsigned mode, bool keep_setuid);

// The stamp yeet leaves in DST (DST/.ezpz-yeet.json).
inline constexpr std::string_view k_stamp_name = ".ezpz-yeet.json";
struct Stamp {
  std::string fingerprint;  // of the source (see Fingerprint)
  std::string source;       // where it came from, for people reading it
  std::string stream_hash;  // crc32 of the bytes broadcast, as verified
  std::uint64_t bytes = 0;  // archive bytes broadcast
  std::uint64_t entries = 0;
};
std::string stamp_json(const Stamp& stamp);
// nullopt when `text` is not a stamp ezpz wrote.
std::optional<Stamp> parse_stamp(std::string_view text);
Holding classify(const std::optional<std::string>& stamp_text, bool exists, bool empty,
                 std::string_view fingerprint);

// The source's fingerprint: every entry's path, type, mode, size, mtime and
// link target (rsync's quick check), plus file contents with --checksum.
class Fingerprint {
 public:
  void add_entry(std::string_view path, std::string_view type, unsigned mode, std::uint64_t size,
                 std::int64_t mtime_ns, std::string_view link_target);
  void add_content(std::uint32_t crc);
  std::string value() const;

 private:
  ContentHash hash_;
  void add(std::string_view field);
};

// Moving a Python environment: texts that name the old prefix are rewritten.
// Files patched as text (venv activation scripts and pyvenv.cfg), relative to DST.
const std::vector<std::string>& venv_text_files();
// `text` with every `old_prefix` replaced by `new_prefix`; nullopt when unchanged.
std::optional<std::string> replace_prefix(std::string_view text, std::string_view old_prefix,
                                          std::string_view new_prefix);
// A script whose "#!" line names the old prefix, with that line rewritten;
// nullopt for anything else (binaries, other interpreters).
std::optional<std::string> rewrite_shebang(std::string_view content, std::string_view old_prefix,
                                           std::string_view new_prefix);
// A file of a conda package that holds the environment's prefix: conda wrote
// the prefix over the package's placeholder when it installed the file, and
// recorded it in conda-meta/PACKAGE.json (paths_data.paths[]: _path,
// prefix_placeholder, file_mode). `path` is relative to the environment.
struct CondaPrefixFile {
  std::string path;
  bool binary = false;  // file_mode "binary": the prefix sits in NUL-terminated strings
  bool operator==(const CondaPrefixFile&) const = default;
};
// The prefix-holding files one conda-meta record lists. Paths that would leave
// the environment (absolute, "..") are dropped. Throws Error when the text is
// not JSON; a record without paths_data (older conda) lists none.
std::vector<CondaPrefixFile> conda_prefix_files(std::string_view record_json);
// conda's rewrite of a binary file: in each NUL-terminated string holding
// `old_prefix`, every occurrence becomes `new_prefix` and the string is padded
// with NULs to its old length, so no offset in the file moves. nullopt when
// nothing changes, or when `new_prefix` is longer than `old_prefix` (it cannot fit).
std::optional<std::string> replace_prefix_padded(std::string_view data, std::string_view old_prefix,
                                                 std::string_view new_prefix);

// The prefix a venv was made for, from its bin/activate (VIRTUAL_ENV=...).
std::optional<std::string> venv_prefix_from_activate(std::string_view activate_text);

// The Python a script's "#!" runs when it is PREFIX/bin/pythonX.Y, split into
// PREFIX and the program's name: how a conda env (which has no bin/activate)
// says where it was made. Reads conda's form for long prefixes too:
// "#!/bin/sh", then "'''exec' "PREFIX/bin/python" "$0" "$@"".
struct ScriptPython {
  std::string prefix;
  std::string program;  // "python3.11"
  bool operator==(const ScriptPython&) const = default;
};
std::optional<ScriptPython> python_of_script(std::string_view head);

// How a shell names the node as node_name does, for a line a user pastes on a
// node: "${SLURMD_NODENAME:-$(hostname -s)}" under Slurm (`env` has
// SLURMD_NODENAME), else "$(hostname -s)". (Hydra's per-host name exists only
// in the processes it starts; on a real cluster it is the node's name too.)
std::string host_in_shell(const Env& env);

// DST as one shell word a user can paste on any node: "{host}" becomes
// `host_expression` inside double quotes; without "{host}", quoted only when needed.
std::string shell_destination(std::string_view destination, std::string_view host_expression);

// Where the copy is: "every node", or "7 of 8 nodes (the failed ones have no copy)" when some
// failed (--min-success).
std::string staged_nodes(int staged, int total);

// How to use the copy, printed at the end: commands a user can paste, with
// "{host}" in DST as `host_expression` (host_in_shell); `on_nodes` is staged_nodes'.
enum class EnvKind { venv, conda, other };
std::string usage_hint(EnvKind kind, std::string_view destination,
                       std::string_view host_expression = "$(hostname -s)",
                       std::string_view on_nodes = "every node");

// "1.2 GiB", "512 B".
std::string format_bytes(double bytes);
// One progress line: bytes, rate, nodes done, ETA.
struct Progress {
  std::uint64_t bytes = 0;
  std::uint64_t total_bytes = 0;  // 0 when unknown
  double seconds = 0;
  int nodes_done = 0;
  int nodes = 0;
};
std::string progress_line(const Progress& progress);

}  // namespace ezpz::yeet
