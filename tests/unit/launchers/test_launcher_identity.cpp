#include "ezpz/launchers/launcher_identity.hpp"
#include "ezpz/launchers/launchers.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

namespace {

const LauncherIdentity k_hydra{"MPICH Hydra", "4.0.2"};
const LauncherIdentity k_ompi{"Open MPI", "4.1.4"};
const LauncherIdentity k_unknown{};

ProgramSeen at(std::string name, std::string path, LauncherIdentity identity) {
  return {std::move(name), std::move(path), std::move(identity)};
}
ProgramSeen missing(std::string name) {
  return {std::move(name), std::nullopt, {}};
}

IdentityEntry entry(std::string path, std::uint64_t inode, LauncherIdentity identity) {
  return {std::move(path),
          {.device = 2049,
           .inode = inode,
           .size = 1234,
           .mtime_ns = 1700000000123456789,
           .ctime_ns = 1700000001000000000},
          std::move(identity)};
}

}  // namespace

TEST_CASE("--version output names the implementation and its version", "[launcher_identity]") {
  struct Row {
    std::string output;
    LauncherIdentity identity;
  };
  const std::vector<Row> rows = {
      {"HYDRA build details:\n    Version:   4.0.2\n    Launchers available: ssh slurm\n", k_hydra},
      {"mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n",
       k_ompi},
      // Debian's other names for Open MPI's launcher (orterun) call it OpenRTE.
      {"mpirun.openmpi (OpenRTE) 4.1.4\n\nReport bugs to http://www.open-mpi.org/\n", k_ompi},
      {"Intel(R) MPI Library for Linux* OS, Version 2021.10\n", {"Intel MPI", "2021.10"}},
      {"slurm 23.02.7\n", {"Slurm", "23.02.7"}},
      // `flux --version` runs `flux version` (flux-core's src/cmd/builtin/version.c).
      {"commands:    \t\t0.60.0\nlibflux-core:\t\t0.60.0\nbroker:  \t\t0.60.0\n"
       "FLUX_URI:\t\tlocal:///tmp/flux-x/local-0\nbuild-options:\t\t+hwloc.api==2.8.0"
       "+zmq==4.3.4\n",
       {"Flux", "0.60.0"}},
      {"mpiexec 9.9 (acme)\n", k_unknown},
      {"", k_unknown},
  };
  for (const Row& row : rows) {
    INFO(row.output);
    CHECK(identify_launcher(row.output) == row.identity);
  }
}

TEST_CASE("the identity cache round-trips and refuses anything else whole", "[launcher_identity]") {
  const std::vector<IdentityEntry> entries = {entry("/usr/bin/mpirun", 11, k_ompi),
                                              entry("/usr/bin/mpiexec", 12, k_unknown)};
  const std::string text = encode_identity_cache(entries);
  CHECK(
      text ==
      "ezpz-launcher-identity-v1\n"
      "/usr/bin/mpirun\t2049\t11\t1234\t1700000000123456789\t1700000001000000000\tOpen MPI\t4.1.4\n"
      "/usr/bin/mpiexec\t2049\t12\t1234\t1700000000123456789\t1700000001000000000\t\t\n");
  CHECK(decode_identity_cache(text) == entries);
  CHECK(decode_identity_cache("ezpz-launcher-identity-v1\n") == std::vector<IdentityEntry>{});

  const std::vector<std::string> corrupt = {
      "",
      text.substr(0, text.size() - 1),                      // truncated: no final newline
      text.substr(0, text.size() - 20),                     // cut mid-line
      "ezpz-launcher-identity-v0\n",                        // another version
      "ezpz-launcher-identity-v1\n/a\t1\t2\t3\t4\t5\tx\n",  // a field short
      "ezpz-launcher-identity-v1\n/a\t1\t2\t3\t4\t5\tx\ty\tz\n",
      "ezpz-launcher-identity-v1\n/a\t1\tinode\t3\t4\t5\tx\ty\n",
      "ezpz-launcher-identity-v1\n/a\t-1\t2\t3\t4\t5\tx\ty\n",
      "ezpz-launcher-identity-v1\n\t1\t2\t3\t4\t5\tx\ty\n",  // no path
      "ezpz-launcher-identity-v1\n\n",
  };
  for (const std::string& bad : corrupt) {
    INFO(bad);
    CHECK_FALSE(decode_identity_cache(bad));
  }
}

TEST_CASE("a path the format cannot hold is left out of the cache", "[launcher_identity]") {
  const std::vector<IdentityEntry> entries = {entry("/odd\tdir/mpirun", 1, k_ompi),
                                              entry("/new\nline", 2, k_ompi),
                                              entry("/usr/bin/mpirun", 3, k_ompi)};
  CHECK(decode_identity_cache(encode_identity_cache(entries)) ==
        std::vector<IdentityEntry>{entries[2]});
}

TEST_CASE("a new identity replaces the path's old one; the oldest go past the limit",
          "[launcher_identity]") {
  std::vector<IdentityEntry> entries = {entry("/a", 1, k_hydra), entry("/b", 2, k_hydra)};
  entries = with_identity(entries, entry("/a", 3, k_ompi));
  CHECK(entries == std::vector<IdentityEntry>{entry("/b", 2, k_hydra), entry("/a", 3, k_ompi)});
  for (std::uint64_t i = 0; i < k_identity_cache_entries; ++i) {
    entries = with_identity(entries, entry("/p" + std::to_string(i), i, k_ompi));
  }
  REQUIRE(entries.size() == k_identity_cache_entries);
  CHECK(entries.front().path == "/p0");
  CHECK(entries.back().path == "/p" + std::to_string(k_identity_cache_entries - 1));
}

TEST_CASE("the launcher's program: the first that is not known to be another implementation",
          "[launcher_identity]") {
  struct Row {
    const char* why;
    std::string dialect;
    std::vector<ProgramSeen> seen;
    LauncherProgramChoice choice;
  };
  const std::vector<Row> rows = {
      {"the first name is Open MPI",
       "openmpi",
       {at("mpirun", "/usr/bin/mpirun", k_ompi)},
       {"mpirun", "/usr/bin/mpirun", ""}},
      {"mpirun is MPICH's: Debian's mpirun.openmpi",
       "openmpi",
       {at("mpirun", "/usr/bin/mpirun", k_hydra),
        at("mpirun.openmpi", "/usr/bin/mpirun.openmpi", k_ompi)},
       {"mpirun.openmpi", "/usr/bin/mpirun.openmpi", ""}},
      {"mpiexec is Open MPI's (Debian's alternatives): mpiexec.hydra",
       "hydra",
       {at("mpiexec", "/usr/bin/mpiexec", k_ompi), missing("mpiexec.hydra"),
        at("mpiexec.mpich", "/usr/bin/mpiexec.mpich", k_hydra)},
       {"mpiexec.mpich", "/usr/bin/mpiexec.mpich", ""}},
      {"Intel MPI's mpiexec speaks Hydra",
       "hydra",
       {at("mpiexec", "/opt/intel/bin/mpiexec", {"Intel MPI", "2021.10"})},
       {"mpiexec", "/opt/intel/bin/mpiexec", ""}},
      {"one that names no implementation runs (doctor warns)",
       "pals",
       {at("mpiexec", "/opt/cray/pals/bin/mpiexec", k_unknown)},
       {"mpiexec", "/opt/cray/pals/bin/mpiexec", ""}},
      {"a wrapper first on PATH that ezpz cannot tell is the user's choice: it runs",
       "openmpi",
       {at("mpirun", "/w/mpirun", k_unknown), at("mpirun.openmpi", "/u/mpirun.openmpi", k_ompi)},
       {"mpirun", "/w/mpirun", ""}},
      {"another implementation is passed over for an unknown one",
       "hydra",
       {at("mpiexec", "/usr/bin/mpiexec", k_ompi),
        at("mpiexec.hydra", "/w/mpiexec.hydra", k_unknown)},
       {"mpiexec.hydra", "/w/mpiexec.hydra", ""}},
      {"torchrun's identity is not checked",
       "torchrun",
       {at("torchrun", "/usr/bin/torchrun", k_unknown)},
       {"torchrun", "/usr/bin/torchrun", ""}},
      {"none found: the default name, for the executor's not-found error",
       "openmpi",
       {missing("mpirun"), missing("mpirun.openmpi"), missing("mpiexec.openmpi")},
       {"mpirun", "", ""}},
  };
  for (const Row& row : rows) {
    INFO(row.why);
    CHECK(choose_launcher_program(row.dialect, row.seen, "") == row.choice);
  }
}

TEST_CASE("another implementation is refused, in one line naming what was found",
          "[launcher_identity]") {
  CHECK(choose_launcher_program("openmpi",
                                {at("mpirun", "/usr/bin/mpirun", k_hydra),
                                 missing("mpirun.openmpi"), missing("mpiexec.openmpi")},
                                "")
            .refusal ==
        "the openmpi launcher needs Open MPI's mpirun: /usr/bin/mpirun is MPICH Hydra 4.0.2 "
        "(install Open MPI or load its module, or name Open MPI's mpirun with "
        "--launcher-program PATH, or pass --launcher hydra)");
  CHECK(
      choose_launcher_program("hydra",
                              {at("mpiexec", "/usr/bin/mpiexec", k_ompi), missing("mpiexec.hydra"),
                               at("mpiexec.mpich", "/opt/mpiexec.mpich", k_ompi)},
                              "")
          .refusal ==
      "the hydra launcher needs MPICH Hydra's mpiexec: /usr/bin/mpiexec is Open MPI 4.1.4, "
      "/opt/mpiexec.mpich is Open MPI 4.1.4 (install MPICH (apt-get install mpich) or load its "
      "module, or name MPICH Hydra's mpiexec with --launcher-program PATH, or pass --launcher "
      "openmpi)");
  const LauncherProgramChoice named = choose_launcher_program(
      "openmpi", {at("mpiexec.hydra", "/usr/bin/mpiexec.hydra", k_hydra)}, "--launcher-program");
  CHECK(named.program == "mpiexec.hydra");
  CHECK(named.refusal ==
        "the openmpi launcher needs Open MPI's mpirun: /usr/bin/mpiexec.hydra "
        "(--launcher-program) is MPICH Hydra 4.0.2 (name Open MPI's mpirun instead, or pass "
        "--launcher hydra)");
}

TEST_CASE("a program named by option, else by the profile for its own launcher",
          "[launcher_identity]") {
  MachineProfile profile;
  profile.name = "sophia";
  profile.launcher = "openmpi";
  profile.launcher_program = "/opt/ompi/bin/mpirun";
  auto named = named_launcher_program(std::nullopt, profile, "openmpi");
  REQUIRE(named);
  CHECK(named->program == "/opt/ompi/bin/mpirun");
  CHECK(named->named_by == "launcher_program of profile sophia");
  CHECK_FALSE(named_launcher_program(std::nullopt, profile, "hydra"));  // --launcher hydra
  named = named_launcher_program("mpirun.openmpi", profile, "hydra");
  REQUIRE(named);
  CHECK(named->program == "mpirun.openmpi");
  CHECK(named->named_by == "--launcher-program");
  profile.launcher_program.clear();
  CHECK_FALSE(named_launcher_program(std::nullopt, profile, "openmpi"));
}
