#pragma once
// Machine profiles: one YAML file per machine under machines/. Pure: parsing
// works on text, selection on values; lib/ezpz/sys/ finds and reads files.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ezpz/core/allocation.hpp"
#include "ezpz/core/env.hpp"

namespace ezpz {

// How ranks are pinned to cores. Rendered by the launcher dialect.
struct CpuBind {
  enum class Style { none, depth, list };
  Style style = Style::none;
  int depth = 0;                    // style depth: cores per rank
  int sockets = 0;                  // style list: the node's shape ...
  int cores_per_socket = 0;         //   physical cores per socket
  std::vector<int> reserved_cores;  //   cores left to the OS (e.g. 0 and 52 on Aurora)
  bool operator==(const CpuBind&) const = default;
};

// How each local rank is given its own accelerators (machines/README.md, "gpu_bind"). A
// profile without this block leaves devices alone.
struct GpuBind {
  // The devices in local-rank order, as the mask variables spell them: local rank i gets
  // order[i], so that it sits on the NUMA domain of the cores it is bound to (Polaris: 3,2,1,0).
  std::vector<std::string> order{};
  // The variables that mask devices for a rank (empty: the device's own, CUDA_VISIBLE_DEVICES
  // for cuda); ezpz-rankenv sets each to the rank's devices.
  std::vector<std::string> variables{};
  // The launcher's own GPU binding (srun --gpu-bind=closest), used where the launcher's row
  // has a GPU flag; empty, or another launcher: the masks above.
  std::string launcher_bind{};
  int ranks_per_gpu = 1;  // the most ranks the site lets share one GPU
  bool operator==(const GpuBind&) const = default;
};

struct MachineMatch {
  std::vector<std::string> hostnames;  // glob patterns (fnmatch), any may match
  EnvList env;                         // all must hold: NAME -> glob on its value
  bool operator==(const MachineMatch&) const = default;
};

// A machine's bad-node signature: a regular expression (ECMAScript) over the
// launcher's output whose first capture group is the bad host.
struct BadNodePattern {
  std::string name;
  std::string regex;
  bool operator==(const BadNodePattern&) const = default;
};

// What `ezpz submit` puts in this machine's batch scripts beyond its options.
struct BatchDefaults {
  std::string filesystems;              // PBS -l filesystems=, unless --filesystems is given
  std::vector<std::string> directives;  // more lines ("-l place=scatter"), after ezpz's own
  std::vector<std::string> required{};  // "account", "walltime", "queue": submit warns if missing
  bool operator==(const BatchDefaults&) const = default;
};

struct MachineProfile {
  std::string name;         // file stem: "aurora"
  std::string source;       // the file it came from, for errors and doctor
  std::string description;  // one line
  MachineMatch match;
  std::optional<SchedulerKind> scheduler;  // the scheduler this machine runs
  std::string launcher;                    // a dialect name: a row of launcher_table.hpp
  // The launcher's program, a name on PATH or a path (mpirun.openmpi); empty: the first of the
  // dialect's names that is its implementation. Used only when `launcher` is.
  std::string launcher_program;
  int gpus_per_node = 0;  // accelerators per node; 0 = unknown (probe)
  std::string device;     // cuda, xpu, rocm, cpu; empty = let the trainer decide
  std::string backend;    // nccl, xccl, gloo ...; empty = let the trainer decide
  CpuBind cpu_bind;
  GpuBind gpu_bind;
  EnvList env;                             // set for every rank, in order
  std::vector<std::string> launcher_args;  // appended after the dialect's own flags
  // Also appended when ezpz starts its own MPI programs (the yeet stager, the
  // doctor probe): what this launcher needs to start an MPI program, such as
  // srun's --mpi=pmi2 for MPICH.
  std::vector<std::string> mpi_launcher_args;
  std::string network_suffix;  // appended to the first host's short name for MASTER_ADDR
  std::string master_addr;     // a fixed MASTER_ADDR (local: 127.0.0.1); wins over the suffix
  // Output that names a failed node: `ezpz launch --spares` swaps it out.
  std::vector<BadNodePattern> bad_node_patterns;
  // Libraries the site's documentation puts on LD_LIBRARY_PATH, each with the directory it
  // names (libnccl-net.so: NCCL's network plugin). ezpz doctor warns when one is not there.
  EnvList libraries;
  BatchDefaults batch;
  bool operator==(const MachineProfile&) const = default;
};

// The keys of a profile file, for code that stores or shows profiles: each with the
// member it fills, typed. The cache (profile_cache.cpp) encodes each type once and walks
// these tables, so a new key needs no code there. Projected from the YAML reader's own
// field tables, so the two cannot disagree.
template <typename T>
using KeyMember =
    std::variant<std::monostate, std::string T::*, int T::*, std::vector<std::string> T::*,
                 std::vector<int> T::*, EnvList T::*, std::optional<SchedulerKind> T::*,
                 CpuBind::Style T::*, CpuBind T::*, GpuBind T::*, MachineMatch T::*,
                 std::vector<BadNodePattern> T::*, BatchDefaults T::*>;

template <typename T>
struct ProfileKey {
  std::string_view key;
  KeyMember<T> member;  // monostate: a key that fills no member ("name" is refused)
};

// The keys of each keyed struct, in the reader's order. MachineProfile's name and
// source come from the file, not from a key.
template <typename T>
std::span<const ProfileKey<T>> profile_keys();
template <>
std::span<const ProfileKey<MachineProfile>> profile_keys();
template <>
std::span<const ProfileKey<MachineMatch>> profile_keys();
template <>
std::span<const ProfileKey<CpuBind>> profile_keys();
template <>
std::span<const ProfileKey<GpuBind>> profile_keys();
template <>
std::span<const ProfileKey<BatchDefaults>> profile_keys();

// Parses one profile. `source` names the file in errors:
// "machines/x.yaml:7: gpus_per_node: expected an integer, got \"four\"".
// Unknown keys are errors that suggest the closest known key.
MachineProfile parse_machine_profile(std::string_view yaml_text, std::string_view source);

// A profile file found on the search path.
struct ProfileFile {
  std::string path;  // full path
  std::string text;
  std::string refused{};  // why it is not read (profile_refusal); empty: read
};

// What stat(2) says of a profile file and of its directory, and who ezpz runs as.
struct ProfileFileFacts {
  std::string path;
  unsigned owner = 0, mode = 0;          // the file's
  unsigned dir_owner = 0, dir_mode = 0;  // its directory's
  std::uint64_t size = 0;
  unsigned user = 0;  // the effective uid
};

// The most a profile file may hold: the bundled ones are under 8 KiB; a 50 MB file on the
// path made every launch take 15 s and 1 GB.
inline constexpr std::uint64_t k_max_profile_bytes = 1 << 20;

// Why a profile file must not be used, or "" when it may: its name is not a machine name
// (it reaches completion scripts and error lines), it or its directory is owned by someone
// other than the user or root, or can be written by others (anyone could then choose the
// ranks' launcher and LD_PRELOAD), or it is too large. Each reason says the fix.
std::string profile_refusal(const ProfileFileFacts& facts);

// A machine name: letters, digits, '.', '_', '-', not starting with '.' or '-'.
bool is_machine_name(std::string_view name);

// Parses every file; a later file with the same stem as an earlier one
// replaces it (the search path lists user directories first, so callers pass
// files in reverse search order: bundled first, user last). Sorted by name.
// Throws the first file's Error.
std::vector<MachineProfile> load_profiles(const std::vector<ProfileFile>& files);

// A profile file that did not load.
struct BrokenProfile {
  std::string name;   // its file's stem: the name it would have had
  std::string error;  // "<file>:<line>: <what>"
  bool operator==(const BrokenProfile&) const = default;
};

// What the search path holds: a draft or broken file in a user's directory
// must not stop every launch, so it is set aside (and reported) rather than
// thrown; it replaces an earlier file of the same stem all the same, so a
// broken override never silently falls back to the bundled profile.
struct LoadedProfiles {
  std::vector<MachineProfile> profiles{};  // sorted by name
  std::vector<BrokenProfile> broken{};     // sorted by name
};
LoadedProfiles load_each_profile(const std::vector<ProfileFile>& files);

// Throws the broken profile's own error when `name` is one; else as
// profile_named below.
const MachineProfile& loaded_profile_named(const LoadedProfiles& loaded, std::string_view name,
                                           std::string_view origin);

struct ProfileChoice {
  const MachineProfile* profile = nullptr;
  std::string rule;  // why: "--machine aurora", "hostname x4102c5s2b0n0 matches x4*", ...
};

// The profile called `name`; else Error "unknown machine "x" (from ORIGIN); known: ...".
const MachineProfile& profile_named(const std::vector<MachineProfile>& profiles,
                                    std::string_view name, std::string_view origin);

// The scheduler whose jobs fall back to `profile` when no hostname matches
// (generic-pbs: pbs), or nullopt.
std::optional<SchedulerKind> fallback_for(const MachineProfile& profile);

// --machine > EZPZ_MACHINE > hostname match (first in name order, env
// conditions must hold) > the scheduler's generic profile (generic-pbs,
// generic-slurm, generic-flux, local). Throws Error for an unknown name.
ProfileChoice select_profile(const std::vector<MachineProfile>& profiles,
                             const std::optional<std::string>& flag, const Env& env,
                             std::string_view hostname, SchedulerKind scheduler);
// The same, refusing with its own error a broken profile that --machine or
// EZPZ_MACHINE names; broken profiles are never matched by hostname.
ProfileChoice select_profile(const LoadedProfiles& loaded, const std::optional<std::string>& flag,
                             const Env& env, std::string_view hostname, SchedulerKind scheduler);

}  // namespace ezpz
