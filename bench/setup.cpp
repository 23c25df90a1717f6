#include "setup.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "ezpz/sys/world.hpp"
#include "spawn.hpp"

#ifndef EZPZ_BENCH_BIN_DIR
#define EZPZ_BENCH_BIN_DIR ""
#endif
#ifndef EZPZ_BENCH_SOURCE_DIR
#define EZPZ_BENCH_SOURCE_DIR ""
#endif

namespace ezpz::bench {
namespace {

namespace fs = std::filesystem;

const Env k_search_path{{"PATH", k_path}};

// Where ezpz and ezpz-rankenv may be: --bin-dir, else the build tree, the harness's own
// directory and the one above it.
std::vector<std::string> bin_dirs(const Options& o) {
  if (!o.bin_dir.empty()) return {o.bin_dir};
  std::vector<std::string> dirs;
  if (*EZPZ_BENCH_BIN_DIR) dirs.emplace_back(EZPZ_BENCH_BIN_DIR);
  const std::string self = sys::self_directory();
  dirs.push_back(self);
  dirs.push_back(self + "/..");
  return dirs;
}

void find_binaries(Setup& s, const Options& o) {
  for (const auto& dir : bin_dirs(o)) {
    if (is_executable(dir + "/ezpz") && is_executable(dir + "/ezpz-rankenv")) {
      s.ezpz = fs::weakly_canonical(dir + "/ezpz").string();
      s.rankenv = fs::weakly_canonical(dir + "/ezpz-rankenv").string();
      break;
    }
  }
  if (s.ezpz.empty()) die("ezpz and ezpz-rankenv not found; pass --bin-dir BUILD_DIR");
  std::string smoke = fs::path(s.ezpz).parent_path().string() + "/ezpz-smoke";
  if (is_executable(smoke)) s.smoke = smoke;
}

std::string ddp_script(const Options& o) {
  if (!o.ddp_script.empty()) return fs::weakly_canonical(o.ddp_script).string();
  std::string script = *EZPZ_BENCH_SOURCE_DIR
                           ? std::string(EZPZ_BENCH_SOURCE_DIR) + "/python_ddp.py"
                           : sys::self_directory() + "/../../bench/python_ddp.py";
  return fs::weakly_canonical(script).string();
}

// MPICH's Hydra by its own name: with Open MPI also installed, Debian's `mpiexec`
// alternative may be Open MPI's.
std::string find_mpiexec(const Options& o) {
  auto mpiexec = sys::find_program(o.mpiexec.empty() ? "mpiexec.hydra" : o.mpiexec, k_search_path);
  if (!mpiexec && o.mpiexec.empty()) mpiexec = sys::find_program("mpiexec", k_search_path);
  if (!mpiexec) die("mpiexec not found on " + std::string(k_path) + "; pass --mpiexec PATH");
  return *mpiexec;
}

// ezpz runs `mpiexec` from PATH: base_env puts this link to s.mpiexec first. Hydra starts
// the hydra_pmi_proxy beside the mpiexec it was run as, so that is linked too.
void pin_mpiexec(const Setup& s) {
  const fs::path dir = s.scratch + "/mpi-bin";
  fs::create_directories(dir);
  fs::create_symlink(s.mpiexec, dir / "mpiexec");
  const fs::path proxy = fs::path(s.mpiexec).parent_path() / "hydra_pmi_proxy";
  if (is_executable(proxy.string())) fs::create_symlink(proxy, dir / "hydra_pmi_proxy");
}

std::string make_scratch(const Options& o, const Env& caller) {
  std::string pattern = get_nonempty(caller, "TMPDIR").value_or("/tmp") + "/ezpz-bench.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) die("mkdtemp: " + std::string(std::strerror(errno)));
  if (!o.keep_tmp) remove_on_exit(pattern);
  fs::create_directories(pattern + "/home");
  fs::create_directories(pattern + "/run");
  return pattern;
}

}  // namespace

Setup make_setup(const Options& o, const Env& caller) {
  Setup s;
  find_binaries(s, o);
  s.python = o.python;
  s.ddp_script = ddp_script(o);
  s.mpiexec = find_mpiexec(o);
  s.scratch = make_scratch(o, caller);
  pin_mpiexec(s);
  return s;
}

std::vector<std::string> base_env(const Setup& s) {
  return {"PATH=" + s.scratch + "/mpi-bin:" + k_path, "HOME=" + s.scratch + "/home",
          "EZPZ_RUN_DIR=" + s.scratch + "/run", "EZPZ_RUNS_DIR=" + s.scratch + "/runs"};
}

std::vector<std::string> with(std::vector<std::string> env, const std::vector<std::string>& extra) {
  for (const std::string& assignment : extra) {
    std::string name = assignment.substr(0, assignment.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.starts_with(name); });
    env.push_back(assignment);
  }
  return env;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace ezpz::bench
