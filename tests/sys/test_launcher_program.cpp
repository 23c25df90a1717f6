// lib/ezpz/sys/launcher_program.cpp against real programs on a real PATH, and its cache on
// disk, all inside a fresh mkdtemp directory. The "launchers" are scripts printing what each
// implementation's --version prints, and counting how often they were asked.
#include "ezpz/sys/launcher_program.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/catch.hpp"
#include "tests/support/files.hpp"

namespace fs = std::filesystem;
using ezpz::Env;
using ezpz::LauncherProgramChoice;
using ezpz::NamedProgram;
using ezpz::sys::resolve_launcher_program;
using ezpz::testing::read_text_file;
using ezpz::testing::TempDir;

namespace {

const char* const k_hydra = "HYDRA build details:\n    Version:   4.0.2\n";
const char* const k_ompi = "mpirun (Open MPI) 4.1.4\n";

// A script answering --version with `version`, appending a line to `count` each time it does.
void put_launcher(const std::string& path, const std::string& version, const std::string& count) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << "#!/bin/sh\n[ \"$1\" = --version ] || exit 9\necho >>'" << count
                      << "'\nprintf '%s' '" << version << "'\n";
  fs::permissions(path, fs::perms(0755));
}

std::size_t lines_in(const std::string& path) {
  std::string text = read_text_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("the first candidate that is the dialect's implementation is chosen",
          "[launcher_program]") {
  TempDir dir;
  const std::string count = dir / "count";
  put_launcher(dir / "mpich/mpirun", k_hydra, count);
  put_launcher(dir / "ompi/mpirun.openmpi", k_ompi, count);
  Env env{{"PATH", dir / "mpich" + ":" + dir / "ompi"}, {"XDG_CACHE_HOME", dir / "cache"}};

  CHECK(resolve_launcher_program("openmpi", std::nullopt, env) ==
        LauncherProgramChoice{"mpirun.openmpi", dir / "ompi/mpirun.openmpi", ""});
  // None of hydra's names on PATH: the default name, for the executor's not-found error.
  CHECK(resolve_launcher_program("hydra", std::nullopt, env) ==
        LauncherProgramChoice{"mpiexec", "", ""});
  // mpirun is MPICH's and nothing else is Open MPI: refused, naming what was found.
  env["PATH"] = dir / "mpich";
  CHECK(resolve_launcher_program("ompi", std::nullopt, env).refusal ==
        "the openmpi launcher needs Open MPI's mpirun: " + dir / "mpich/mpirun" +
            " is MPICH Hydra 4.0.2 (install Open MPI or load its module, or name Open MPI's "
            "mpirun with --launcher-program PATH, or pass --launcher hydra)");
  // A named program is the only candidate, by name or by path, and still checked.
  CHECK(resolve_launcher_program("openmpi", NamedProgram{dir / "ompi/mpirun.openmpi", "x"}, env) ==
        LauncherProgramChoice{dir / "ompi/mpirun.openmpi", dir / "ompi/mpirun.openmpi", ""});
  CHECK(resolve_launcher_program("hydra", NamedProgram{"mpirun", "--launcher-program"}, env) ==
        LauncherProgramChoice{"mpirun", dir / "mpich/mpirun", ""});
  CHECK(resolve_launcher_program("openmpi", NamedProgram{"mpirun", "--launcher-program"}, env)
            .refusal ==
        "the openmpi launcher needs Open MPI's mpirun: " + dir / "mpich/mpirun" +
            " (--launcher-program) is MPICH Hydra 4.0.2 (name Open MPI's mpirun instead, or pass "
            "--launcher hydra)");
  CHECK(resolve_launcher_program("openmpi", NamedProgram{"nope", "--launcher-program"}, env) ==
        LauncherProgramChoice{"nope", "", ""});
}

TEST_CASE("each program's --version is asked once, until the file changes", "[launcher_program]") {
  TempDir dir;
  const std::string count = dir / "count";
  put_launcher(dir / "bin/mpirun", k_ompi, count);
  Env env{{"PATH", dir / "bin"}, {"HOME", dir / "home"}};
  const std::string cache = dir / "home/.cache/ezpz/launcher-identity";
  const LauncherProgramChoice chosen{"mpirun", dir / "bin/mpirun", ""};

  CHECK(resolve_launcher_program("openmpi", std::nullopt, env) == chosen);
  CHECK(lines_in(count) == 1);
  CHECK(resolve_launcher_program("openmpi", std::nullopt, env) == chosen);
  CHECK(lines_in(count) == 1);  // from the cache
  struct stat info {};
  REQUIRE(::stat(cache.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);

  SECTION("a rewritten program is asked again") {
    put_launcher(dir / "bin/mpirun", k_hydra, count);
    CHECK(resolve_launcher_program("openmpi", std::nullopt, env)
              .refusal.starts_with("the openmpi launcher needs Open MPI's mpirun: " +
                                   dir / "bin/mpirun" + " is MPICH Hydra"));
    CHECK(lines_in(count) == 2);
  }
  SECTION("a corrupt cache is ignored, then replaced") {
    std::ofstream(cache, std::ios::trunc) << "ezpz-launcher-identity-v1\ngarbage\n";
    CHECK(resolve_launcher_program("openmpi", std::nullopt, env) == chosen);
    CHECK(lines_in(count) == 2);
    CHECK(read_text_file(cache).find("\tOpen MPI\t4.1.4\n") != std::string::npos);
    CHECK(resolve_launcher_program("openmpi", std::nullopt, env) == chosen);
    CHECK(lines_in(count) == 2);
  }
  SECTION("a cache that cannot be written costs nothing but the --version") {
    Env unwritable = env;
    unwritable["XDG_CACHE_HOME"] = "/proc/ezpz-no-such-dir";
    CHECK(resolve_launcher_program("openmpi", std::nullopt, unwritable) == chosen);
    CHECK(resolve_launcher_program("openmpi", std::nullopt, unwritable) == chosen);
    CHECK(lines_in(count) == 3);
  }
}

TEST_CASE("a launcher whose identity is not checked is only looked up", "[launcher_program]") {
  TempDir dir;
  const std::string count = dir / "count";
  put_launcher(dir / "bin/torchrun", "", count);
  Env env{{"PATH", dir / "bin"}, {"HOME", dir / "home"}};
  CHECK(resolve_launcher_program("torchrun", std::nullopt, env) ==
        LauncherProgramChoice{"torchrun", dir / "bin/torchrun", ""});
  CHECK(lines_in(count) == 0);
  CHECK_FALSE(fs::exists(dir / "home/.cache/ezpz/launcher-identity"));
}
