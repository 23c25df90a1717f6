// lib/ezpz/sys/doctor_*.cpp and the executor's timeout and stdout capture,
// against real processes, files and name look-ups.
#include "ezpz/sys/doctor_probes.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/world.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

using namespace ezpz;
using ezpz::testing::TempDir;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

Env base_env() {
  const char* path = std::getenv("PATH");
  return Env{{"PATH", path != nullptr ? path : "/usr/bin:/bin"}};
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void write_bytes(const std::string& path, std::size_t count) {
  std::ofstream(path) << std::string(count, 'x');
}

}  // namespace

TEST_CASE("start_program captures stdout, stderr and the exit code", "[doctor]") {
  doctor::ProgramRun run =
      sys::start_program({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, base_env(), 5s).get();
  CHECK(run.path == "/bin/sh");
  CHECK(run.start_error.empty());
  CHECK(run.exit_code == 3);
  CHECK(run.out == "out\n");
  CHECK(run.err == "err\n");
  CHECK_FALSE(run.timed_out);
}

TEST_CASE("start_program kills what outlasts its deadline, children included", "[doctor]") {
  auto start = Clock::now();
  doctor::ProgramRun run =
      sys::start_program({"/bin/sh", "-c", "echo early; sleep 30 & wait"}, base_env(), 300ms).get();
  CHECK(run.timed_out);
  CHECK(run.timeout_s == 0.3);
  CHECK_FALSE(run.exit_code);
  CHECK(run.out == "early\n");
  CHECK(seconds_since(start) < 3.0);
}

TEST_CASE("start_program reports a signal and a program that cannot start", "[doctor]") {
  doctor::ProgramRun killed =
      sys::start_program({"/bin/sh", "-c", "kill -SEGV $$"}, base_env(), 5s).get();
  CHECK(killed.signal == 11);
  CHECK_FALSE(killed.exit_code);
  doctor::ProgramRun missing = sys::start_program({"/nonexistent/probe"}, base_env(), 5s).get();
  CHECK(missing.start_error == "/nonexistent/probe: No such file or directory");
}

TEST_CASE("resolve_hosts answers every host, in order", "[doctor]") {
  std::vector<doctor::HostLookup> results =
      sys::resolve_hosts({"localhost", "nosuch-ezpz-host.invalid"}, 2s);
  REQUIRE(results.size() == 2);
  CHECK(results[0].host == "localhost");
  CHECK(results[0].result == doctor::HostLookup::Result::resolved);
  CHECK_FALSE(results[0].detail.empty());
  CHECK(results[1].host == "nosuch-ezpz-host.invalid");
  CHECK(results[1].result != doctor::HostLookup::Result::resolved);
  CHECK(sys::resolve_hosts({}, 1s).empty());
}

TEST_CASE("the executor stops a launcher at its timeout and captures its stdout", "[doctor]") {
  TempDir dir;
  sys::ProcessOptions options;
  options.grace = 2s;
  options.timeout = 300ms;
  options.stdout_path = dir.file("out");
  LaunchPlan plan{{"sh", "-c", "echo started; sleep 30"}, {}, {}};
  auto start = Clock::now();
  int code = sys::ProcessExecutor(base_env(), options).run(plan);
  CHECK(code == 128 + 15);
  CHECK(seconds_since(start) >= 0.3);
  CHECK(seconds_since(start) < 3.0);
  CHECK(ezpz::testing::read_text_file(dir.file("out")) == "started\n");
}

TEST_CASE("run_probe_launch returns the launch's stdout and removes its file", "[doctor]") {
  TempDir dir;
  std::string output = dir.file("sub/probe.out");
  LaunchPlan plan{{"sh", "-c", "echo one; echo two; exit 4"}, {}, {}};
  sys::ProbeLaunch launch = sys::run_probe_launch(plan, base_env(), 10s, output);
  CHECK(launch.status == 4);
  CHECK_FALSE(launch.timed_out);
  CHECK(launch.output == "one\ntwo\n");
  CHECK_FALSE(std::filesystem::exists(output));
}

// The probe's Python code itself, run by the python3 on PATH against stand-in torch and mpi4py
// packages (PYTHONPATH): what it prints, key for key. The stand-in MPI module refuses to load
// when importing it would call MPI_Init.
TEST_CASE("the Python probe reports torch, its backends and mpi4py's MPI", "[doctor]") {
  std::optional<std::string> python3 = sys::find_program("python3", base_env());
  if (!python3) {
    WARN("no python3 on PATH: the probe's code is not run");
    return;
  }
  TempDir dir;
  std::filesystem::create_directories(dir.file("lib/torch"));
  std::filesystem::create_directories(dir.file("lib/mpi4py"));
  std::ofstream(dir.file("lib/torch/__init__.py")) << "__version__ = '9.9.9'\n";
  std::ofstream(dir.file("lib/torch/distributed.py")) << "def is_available(): return True\n"
                                                         "def is_gloo_available(): return True\n"
                                                         "def is_nccl_available(): return False\n"
                                                         "def is_mpi_available(): return True\n";
  std::ofstream(dir.file("lib/mpi4py/__init__.py"))
      << "__version__ = '3.1.4'\nclass rc:\n    initialize = True\n    finalize = True\n";
  std::ofstream(dir.file("lib/mpi4py/MPI.py"))
      << "import mpi4py\n"
         "if mpi4py.rc.initialize: raise RuntimeError('MPI_Init at import')\n"
         "def Get_library_version(): return 'MPICH Version:\\t4.0.2\\n'\n";
  Env env = base_env();
  env["PYTHONPATH"] = dir.file("lib");
  doctor::ProgramRun run = sys::start_program(doctor::python_probe_argv(*python3), env, 20s).get();
  CHECK(run.exit_code == 0);
  CHECK(run.err.empty());
  const std::string rest =
      R"(", "torch": "9.9.9", "distributed": true, "backends": ["gloo", "mpi"], )"
      R"("mpi4py": "3.1.4", "mpi": "MPICH Version:\t4.0.2\n"})"
      "\n";
  CHECK(run.out.starts_with(R"({"python": "3.)"));
  CHECK(run.out.ends_with(rest));
}

TEST_CASE("probe_node measures this node: storage, limits, port, Python, look-ups", "[doctor]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("venv/bin"));
  write_bytes(dir.file("venv/bin/python"), 1000);
  write_bytes(dir.file("venv/pyvenv.cfg"), 234);
  ::symlink("python", dir.file("venv/bin/python3").c_str());
  std::ofstream(dir.file("netrc")) << "machine api.wandb.ai\n  login user\n  password s3cr3t\n";
  // The python3 the ranks would run: first on PATH, given the probe's code as `-c CODE`.
  std::filesystem::create_directories(dir.file("bin"));
  std::ofstream(dir.file("bin/python3")) << "#!/bin/sh\n[ \"$1\" = -c ] && echo \"{\\\"python\\\": "
                                            "\\\"0.0.0\\\", \\\"argc\\\": $#}\"\n";
  std::filesystem::permissions(dir.file("bin/python3"), std::filesystem::perms::owner_all);
  doctor::Snapshot s;
  s.env = base_env();
  s.env["PATH"] = dir.file("bin") + ":" + s.env["PATH"];
  s.env["VIRTUAL_ENV"] = dir.file("venv");
  s.env["NETRC"] = dir.file("netrc");
  s.env["MASTER_PORT"] = "0x";  // not a port: the check names it, the probe binds nothing
  s.hostname = "localhost";
  s.scheduler = SchedulerKind::local;
  s.allocation = Allocation{SchedulerKind::local, "", {"localhost"}, std::nullopt, "", ""};
  sys::probe_node(s);
  CHECK(s.storage.source == dir.file("venv"));
  CHECK(s.storage.destination == "/tmp/venv");
  CHECK(s.storage.directory == "/tmp");
  CHECK(s.storage.source_bytes ==
        1234 + std::string("python").size());  // the link: its target's name
  CHECK(s.storage.source_files == 3);
  CHECK_FALSE(s.storage.walk_capped);
  CHECK(s.storage.free_bytes > 0);
  CHECK(s.limits.size() == 3);
  CHECK(s.port.port == 0);
  CHECK(s.port.error.empty());
  CHECK(s.python.prefix == dir.file("venv"));
  CHECK(s.python.filesystem_magic != 0);
  CHECK(s.python.python3 == dir.file("bin/python3"));
  CHECK(s.python.imports.path == dir.file("bin/python3"));
  CHECK(s.python.imports.exit_code == 0);
  CHECK(s.python.imports.out == "{\"python\": \"0.0.0\", \"argc\": 2}\n");
  CHECK(s.netrc_has_wandb);
  REQUIRE(s.lookups.size() == 1);
  CHECK(s.lookups[0].result == doctor::HostLookup::Result::resolved);
  CHECK_FALSE(s.profile_files.empty());  // the source tree's machines/
  s.env.erase("MASTER_PORT");
  sys::probe_node(s);
  CHECK(s.port.port > 0);
  CHECK(sys::current_user({{"USER", "alice"}}) == "alice");
  CHECK_FALSE(sys::current_user({}).empty());
}

TEST_CASE("probe_node counts this node's GPUs and finds the profile's libraries", "[doctor]") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("bin"));
  std::filesystem::create_directories(dir.file("ofi/lib"));
  std::ofstream(dir.file("ofi/lib/libnccl-net.so")) << "";
  // A stand-in nvidia-smi listing 2 GPUs, and a python3 that answers at once.
  std::ofstream(dir.file("bin/nvidia-smi"))
      << "#!/bin/sh\n[ \"$1\" = -L ] || exit 2\necho 'GPU 0: A100 (UUID: GPU-a)'\n"
         "echo 'GPU 1: A100 (UUID: GPU-b)'\n";
  std::ofstream(dir.file("bin/python3")) << "#!/bin/sh\necho '{}'\n";
  for (const char* program : {"bin/nvidia-smi", "bin/python3"}) {
    std::filesystem::permissions(dir.file(program), std::filesystem::perms::owner_all);
  }
  doctor::Snapshot s;
  s.env = base_env();
  s.env["PATH"] = dir.file("bin") + ":" + s.env["PATH"];
  s.env["LD_LIBRARY_PATH"] = dir.file("nope") + "::" + dir.file("ofi/lib");
  s.machine_flag = "polaris";
  s.hostname = "localhost";
  s.scheduler = SchedulerKind::local;
  s.allocation = Allocation{SchedulerKind::local, "", {"localhost"}, std::nullopt, "", ""};
  sys::probe_node(s);
  CHECK(s.accelerators == 2);
  CHECK(s.libraries_found == EnvList{{"libnccl-net.so", dir.file("ofi/lib")}});
  s.env.erase("LD_LIBRARY_PATH");
  sys::probe_node(s);
  CHECK(s.libraries_found == EnvList{{"libnccl-net.so", ""}});
}
