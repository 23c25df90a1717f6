#pragma once
// Reading the world: the environment, files, the hostname, PATH look-ups, GPU
// probes, free ports. Everything here is thin; the decisions are in lib/ezpz.
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/core/env.hpp"
#include "ezpz/core/files.hpp"
#include "ezpz/launch/command_check.hpp"
#include "ezpz/launch/plan.hpp"
#include "ezpz/profile/machine_profile.hpp"

namespace ezpz::sys {

// The process environment, captured once.
Env capture_environment();

class RealFileReader : public FileReader {
 public:
  // Throws Error("<path>: No such file or directory") and the like (strerror).
  std::string read(const std::string& path) const override;
};

// Runs a program on `env`'s PATH for its output (Flux's hosts), within run_captured's limits.
class RealCommandReader : public CommandReader {
 public:
  explicit RealCommandReader(const Env& env) : env_(env) {}
  // Throws Error("flux is not on PATH"), Error("it did not answer within 2 s") or
  // Error("it failed: WORDS"), WORDS its first line on stderr.
  std::string output(const std::vector<std::string>& argv) const override;

 private:
  const Env& env_;
};

// The whole file, or nullopt when it cannot be read, errno then saying why (for optional files:
// caches, summaries).
std::optional<std::string> read_file_if_present(const std::string& path);

// A cache file of ezpz's own, only when nobody else could have written it (trusted_cache_file:
// owned by the user, it and its directory writable by nobody else, not a link); else nullopt.
std::optional<std::string> read_own_cache(const std::string& path);

// A private directory (mode 0700) under $TMPDIR (else /tmp), named `<prefix>.XXXXXX`, removed
// with everything in it when this goes out of scope: where a submitted script waits for
// qsub/sbatch, or a node step's output for ezpz.
class ScratchDirectory {
 public:
  ScratchDirectory(const Env& env, std::string_view prefix);
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The current directory (getcwd).
std::string current_directory();

// What is at `path` (following symlinks).
enum class PathKind { missing, directory, file };
PathKind path_kind(const std::string& path);

// One entry of a directory listing: its name, and whether it is a directory (readdir's type,
// or a stat where the filesystem does not say).
struct DirEntry {
  std::string_view name;
  bool directory = false;
};

// The names in `dir` that `keep` accepts (never "." or ".."), in readdir's order; none when
// `dir` cannot be listed. readdir, not std::filesystem: the launch path lists directories.
std::vector<std::string> entry_names(const std::string& dir, bool (*keep)(const DirEntry&));

// Creates a directory that did not exist (mkdir, exclusive): `path`, or when another
// run took it, path-2, path-3 ... (run_id_choice), its parents as needed. Returns the one
// made. Throws Error naming `path` when it cannot (the first `most` names all taken).
std::string create_new_directory(const std::string& path, int most = 100);

// gethostname(), as the kernel reports it (no DNS look-up: that can take seconds).
std::string hostname();

// The one PATH search (launch, doctor, the command check): the path of `program` found on
// env's PATH as execvp() finds it (`program` itself when it contains a '/'), or nullopt. An
// empty entry is the current directory ("./program"), a relative one is relative to it, an
// unset PATH is confstr(_CS_PATH) (/bin:/usr/bin); only an executable regular file counts, so
// a directory or a non-executable file of that name is passed over.
std::optional<std::string> find_program(const std::string& program, const Env& env);

// What this node says about a command's first word for ranks whose environment is `env`
// (find_program's search: the one execvp does when a rank starts it).
CommandLookup look_up_command(const std::string& word, const Env& env);

// Directory of the running executable (/proc/self/exe), for finding helpers.
std::string self_directory();

// Accelerators on this node by asking nvidia-smi / rocm-smi / xpu-smi (first
// one on PATH that answers); nullopt when none is found.
std::optional<int> probe_local_accelerators(const Env& env);

// CPUs this process may run on (sched_getaffinity: a batch job's cgroup or
// taskset counts, not the whole node's), at least 1.
int online_cpus();

// A TCP port that is free on this host right now (bind to port 0).
int find_free_port();

// Profile files on the search path, lowest precedence first:
// the source tree's machines/, the installed share dir, ~/.config/ezpz/machines,
// then each directory of EZPZ_MACHINES_PATH (':'-separated, first wins).
std::vector<ProfileFile> read_profile_files(const Env& env);
// Their paths, in the same order, none read.
std::vector<std::string> profile_paths(const Env& env);

// The machine profiles on the search path, parsed, through the cache in
// ezpz_cache_dir() (a cache that cannot be read or written is simply skipped).
// A file that does not load is set aside in `broken`.
LoadedProfiles load_machine_profiles(const Env& env);

// One warning line per profile set aside, once a profile has been chosen: a
// command that stops on an error says that one line only.
void warn_skipped_profiles(const LoadedProfiles& loaded);

// Writes each file atomically (temp sibling + rename), leaving alone a file whose content is
// already in place, and creating parent directories with mode 0700. Throws Error naming the path on
// failure.
void write_files(const std::vector<FileToWrite>& files);

// Writes one file atomically whatever is in its place: for files only ezpz writes (a run
// record's), where looking first costs a system call or four on every launch.
void write_file(const FileToWrite& file);

// A file's next contents, written as write_file writes them, but with the temporary sibling
// created ahead, when it costs nothing: creating an inode is the slow part of a write on
// ext4 without a journal (0.3-0.5 ms here) and on Lustre (a metadata server's round trip), and
// a run record's last files are written while the user waits for ezpz's exit. Unlinked
// unless committed.
class PendingFile {
 public:
  explicit PendingFile(const std::string& path);  // throws Error naming the path
  ~PendingFile();
  PendingFile(PendingFile&& other) noexcept;
  PendingFile& operator=(PendingFile&&) = delete;
  // Writes `contents` and renames the temporary over the path: once; throws as write_file.
  void commit(std::string_view contents);

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
};

// Makes `path` and each missing directory above it, private (0700); one that exists is left as
// it is. False, with errno set, at the first that cannot be made.
bool make_directories(const std::string& path);

}  // namespace ezpz::sys
