#pragma once
// What the benchmarks run (the built binaries, mpiexec, the Python with torch) and the
// clean environment they run it in.
#include <string>
#include <vector>

#include "ezpz/core/env.hpp"
#include "options.hpp"

namespace ezpz::bench {

inline constexpr const char* k_path = "/usr/local/bin:/usr/bin:/bin";

struct Setup {
  std::string ezpz;
  std::string rankenv;
  std::string smoke;       // ezpz-smoke beside ezpz; empty when not built
  std::string python;      // for python_ddp.py
  std::string ddp_script;  // bench/python_ddp.py
  std::string mpiexec;
  std::string scratch;  // removed at exit unless --keep-tmp
};

// Finds the binaries and mpiexec (dies when they are missing) and makes the scratch
// directory (under $TMPDIR of `caller`, else /tmp) with mpiexec pinned in it.
Setup make_setup(const Options& o, const Env& caller);

// A clean environment: no PBS_*, SLURM_*, EZPZ_* or MASTER_* from the caller.
std::vector<std::string> base_env(const Setup& s);

// `env` with each NAME=VALUE of `extra` in place of what it had for NAME (appended last).
std::vector<std::string> with(std::vector<std::string> env, const std::vector<std::string>& extra);

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b);

// `text` without trailing newlines and spaces.
std::string trim(std::string text);

}  // namespace ezpz::bench
