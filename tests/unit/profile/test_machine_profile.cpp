// Machine profiles: the YAML schema, its error messages word for word, the
// choice of a profile for a job, and every bundled file under machines/.
#include "ezpz/profile/machine_profile.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "ezpz/core/error.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

namespace ezpz {
namespace {

constexpr const char* k_full_profile = R"(# a comment first, as every bundled file has
description: A test machine
match:
  hostnames: ["x9*", "test*"]
  env:
    PBS_O_HOST: "test*"
scheduler: pbs
launcher: pals
gpus_per_node: 12
device: xpu
backend: xccl
cpu_bind:
  style: list
  sockets: 2
  cores_per_socket: 52
  reserved_cores: [0, 52]
env:
  ZE_FLAT_DEVICE_HIERARCHY: FLAT
  CCL_OP_SYNC: 1
  QUOTED: "007"
  EMPTY: ""
launcher_args: ["--no-vni", "--label"]
network_suffix: .hsn.example.org
master_addr: 10.0.0.1
)";

TEST_CASE("a full profile parses into every field", "[profile]") {
  MachineProfile expected;
  expected.name = "test";
  expected.source = "machines/test.yaml";
  expected.description = "A test machine";
  expected.match = {{"x9*", "test*"}, {{"PBS_O_HOST", "test*"}}};
  expected.scheduler = SchedulerKind::pbs;
  expected.launcher = "pals";
  expected.gpus_per_node = 12;
  expected.device = "xpu";
  expected.backend = "xccl";
  expected.cpu_bind = {CpuBind::Style::list, 0, 2, 52, {0, 52}};
  // File order is kept, and numbers stay as written ("007", not 7).
  expected.env = {
      {"ZE_FLAT_DEVICE_HIERARCHY", "FLAT"}, {"CCL_OP_SYNC", "1"}, {"QUOTED", "007"}, {"EMPTY", ""}};
  expected.launcher_args = {"--no-vni", "--label"};
  expected.network_suffix = ".hsn.example.org";
  expected.master_addr = "10.0.0.1";
  CHECK(parse_machine_profile(k_full_profile, "machines/test.yaml") == expected);
}

TEST_CASE("a minimal profile takes the defaults", "[profile]") {
  MachineProfile expected;
  expected.name = "tiny";
  expected.source = "/home/u/.config/ezpz/machines/tiny.yaml";
  expected.launcher = "hydra";
  CHECK(parse_machine_profile("launcher: hydra\n", expected.source) == expected);
}

TEST_CASE("a profile's launcher may be named as users type it, and its program given",
          "[profile]") {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"mpich", "hydra"}, {"hydra", "hydra"}, {"ompi", "openmpi"}, {"openmpi", "openmpi"}};
  for (const auto& [typed, dialect] : rows) {
    INFO(typed);
    CHECK(parse_machine_profile("launcher: " + typed + "\n", "m/x.yaml").launcher == dialect);
  }
  MachineProfile profile =
      parse_machine_profile("launcher: ompi\nlauncher_program: mpirun.openmpi\n", "m/x.yaml");
  CHECK(profile.launcher_program == "mpirun.openmpi");
}

TEST_CASE("empty sections read as empty", "[profile]") {
  // A section whose every line is commented out is empty, not an error.
  MachineProfile p = parse_machine_profile(
      "launcher: srun\nenv:\n  # A: 1\nlauncher_args:\nmatch:\ncpu_bind:\n", "m/e.yaml");
  CHECK(p.env.empty());
  CHECK(p.launcher_args.empty());
  CHECK(p.match == MachineMatch{});
  CHECK(p.cpu_bind == CpuBind{});
}

TEST_CASE("depth binding and the scheduler names", "[profile]") {
  MachineProfile p = parse_machine_profile(
      "launcher: pals\nscheduler: local\ncpu_bind: {style: depth, depth: 8}\n", "m/d.yaml");
  CHECK(p.scheduler == SchedulerKind::local);
  CHECK(p.cpu_bind == CpuBind{CpuBind::Style::depth, 8, 0, 0, {}});
  CHECK(parse_machine_profile("launcher: srun\nscheduler: slurm\n", "m/s.yaml").scheduler ==
        SchedulerKind::slurm);
  CHECK(parse_machine_profile("launcher: flux\nscheduler: flux\n", "m/f.yaml").scheduler ==
        SchedulerKind::flux);
}

struct BadProfile {
  std::string text;
  std::string message;
};

TEST_CASE("malformed profiles fail with file, line, key and reason", "[profile]") {
  const std::string L = "launcher: pals\n";  // the one required key
  const std::vector<BadProfile> cases = {
      // Shape of the document.
      {"", "machines/x.yaml:1: expected a mapping of keys"},
      {"# only a comment\n", "machines/x.yaml:1: expected a mapping of keys"},
      {"- pals\n- srun\n", "machines/x.yaml:1: expected a mapping of keys"},
      {"pals\n", "machines/x.yaml:1: expected a mapping of keys"},
      {"description: x\n", "machines/x.yaml:1: launcher: required key is missing"},
      {L + "match: [x4*\n", "machines/x.yaml:3: invalid YAML: end of sequence flow not found"},
      {L + "env:\n  A: 1\n B: 2\n", "machines/x.yaml:4: invalid YAML: end of map not found"},
      {L + "a: b: c\n", "machines/x.yaml:2: invalid YAML: illegal map value"},
      {L + "launcher: srun\n", "machines/x.yaml:2: launcher: duplicate key (first on line 1)"},
      {L + "? [a]\n: b\n", "machines/x.yaml:2: expected a key name, got a list"},
      // Unknown keys, with a suggestion only for a plausible typo.
      {L + "\ngpus_per_nod: 4\n",
       "machines/x.yaml:3: gpus_per_nod: unknown key; did you mean \"gpus_per_node\"?"},
      {L + "Launcher_Args: []\n",
       "machines/x.yaml:2: Launcher_Args: unknown key; did you mean \"launcher_args\"?"},
      {L + "colour: red\n", "machines/x.yaml:2: colour: unknown key"},
      {L + "foo: 1\n", "machines/x.yaml:2: foo: unknown key"},
      {L + "match:\n  hostname: [x4*]\n",
       "machines/x.yaml:3: match.hostname: unknown key; did you mean \"hostnames\"?"},
      {L + "cpu_bind:\n  stlye: depth\n",
       "machines/x.yaml:3: cpu_bind.stlye: unknown key; did you mean \"style\"?"},
      {L + "name: aurora\n",
       "machines/x.yaml:2: name: not allowed: the name is the file name (\"x\")"},
      // Integers.
      {L + "gpus_per_node: four\n",
       "machines/x.yaml:2: gpus_per_node: expected an integer, got \"four\""},
      {L + "gpus_per_node: -1\n",
       "machines/x.yaml:2: gpus_per_node: expected an integer >= 0, got \"-1\""},
      {L + "gpus_per_node: -99999999999999999999\n",
       "machines/x.yaml:2: gpus_per_node: expected an integer >= 0, got "
       "\"-99999999999999999999\""},
      {L + "gpus_per_node: 99999999999\n",
       "machines/x.yaml:2: gpus_per_node: expected an integer <= 2147483647, got \"99999999999\""},
      {L + "gpus_per_node: 4.0\n",
       "machines/x.yaml:2: gpus_per_node: expected an integer, got \"4.0\""},
      {L + "gpus_per_node: 0x10\n",
       "machines/x.yaml:2: gpus_per_node: expected an integer, got \"0x10\""},
      {L + "gpus_per_node: \"\"\n",
       "machines/x.yaml:2: gpus_per_node: expected an integer, got \"\""},
      {L + "gpus_per_node: [4]\n",
       "machines/x.yaml:2: gpus_per_node: expected an integer, got a list"},
      {L + "gpus_per_node:\n",
       "machines/x.yaml:2: gpus_per_node: expected an integer, got nothing"},
      // Choices.
      {"launcher: mpirun\n",
       "machines/x.yaml:1: launcher: expected one of pals, hydra, openmpi, srun, flux, torchrun, "
       "aprun, "
       "got "
       "\"mpirun\""},
      {"launcher: PALS\n",
       "machines/x.yaml:1: launcher: expected one of pals, hydra, openmpi, srun, flux, torchrun, "
       "aprun, "
       "got "
       "\"PALS\""},
      {"launcher:\n",
       "machines/x.yaml:1: launcher: expected one of pals, hydra, openmpi, srun, flux, torchrun, "
       "aprun, "
       "got "
       "nothing"},
      {"launcher: Mpich\n",
       "machines/x.yaml:1: launcher: expected one of pals, hydra, openmpi, srun, flux, torchrun, "
       "aprun, "
       "got "
       "\"Mpich\""},
      {"launcher: [ompi]\n",
       "machines/x.yaml:1: launcher: expected one of pals, hydra, openmpi, srun, flux, torchrun, "
       "aprun, "
       "got "
       "a list"},
      {L + "launcher_program: \"\"\n",
       "machines/x.yaml:2: launcher_program: expected a program name or path, got an empty string"},
      {L + "launcher_program: [mpirun]\n",
       "machines/x.yaml:2: launcher_program: expected a string, got a list"},
      {L + "launcher_programs: mpirun\n",
       "machines/x.yaml:2: launcher_programs: unknown key; did you mean \"launcher_program\"?"},
      {L + "scheduler: lsf\n",
       "machines/x.yaml:2: scheduler: expected one of pbs, slurm, flux, local, got \"lsf\""},
      {L + "scheduler: none\n",
       "machines/x.yaml:2: scheduler: expected one of pbs, slurm, flux, local, got \"none\""},
      {L + "device: tpu\n",
       "machines/x.yaml:2: device: expected one of cuda, xpu, rocm, cpu, got \"tpu\""},
      {L + "backend: hccl\n",
       "machines/x.yaml:2: backend: expected one of nccl, rccl, xccl, ccl, gloo, mpi, got "
       "\"hccl\""},
      // GPU placement.
      {L + "gpus_per_node: 4\ngpu_bind:\n  variables: [CUDA_VISIBLE_DEVICES]\n",
       "machines/x.yaml:3: gpu_bind.order: expected the devices in local-rank order (\"order: [3, "
       "2, 1, 0]\")"},
      {L + "gpus_per_node: 4\ngpu_bind:\n  order: [3, 2, 1]\n",
       "machines/x.yaml:3: gpu_bind.order: names 3 devices, but gpus_per_node is 4"},
      {L + "gpu_bind:\n  order: [0]\n",
       "machines/x.yaml:2: gpu_bind.order: names 1 device, but gpus_per_node is 0"},
      {L + "gpus_per_node: 2\ngpu_bind:\n  order: [1, 1]\n",
       "machines/x.yaml:3: gpu_bind.order: names device \"1\" twice"},
      {L + "gpus_per_node: 2\ngpu_bind:\n  order: [\"0\", \"1,2\"]\n",
       "machines/x.yaml:4: gpu_bind.order[1]: expected a device id (\"3\", \"0.1\"), got \"1,2\""},
      {L + "gpus_per_node: 1\ngpu_bind:\n  order: [0]\n  variables: [CUDA-MASK]\n",
       "machines/x.yaml:5: gpu_bind.variables[0]: not a variable name (letters, digits and _, not "
       "starting with a digit)"},
      {L + "gpus_per_node: 1\ngpu_bind:\n  order: [0]\n  ranks_per_gpu: 0\n",
       "machines/x.yaml:5: gpu_bind.ranks_per_gpu: expected an integer >= 1, got \"0\""},
      {L + "gpus_per_node: 1\ngpu_bind:\n  order: [0]\n  launcher_bnd: closest\n",
       "machines/x.yaml:5: gpu_bind.launcher_bnd: unknown key; did you mean \"launcher_bind\"?"},
      // CPU binding.
      {L + "cpu_bind: depth\n", "machines/x.yaml:2: cpu_bind: expected a mapping, got \"depth\""},
      {L + "\ncpu_bind:\n\n  style: spread\n",
       "machines/x.yaml:5: cpu_bind.style: expected one of none, depth, list, got \"spread\""},
      {L + "cpu_bind:\n  style: depth\n",
       "machines/x.yaml:2: cpu_bind.depth: style depth needs depth > 0 (cores per rank)"},
      {L + "cpu_bind:\n  style: depth\n  depth: 0\n",
       "machines/x.yaml:4: cpu_bind.depth: style depth needs depth > 0 (cores per rank)"},
      {L + "cpu_bind:\n  style: list\n  cores_per_socket: 52\n",
       "machines/x.yaml:2: cpu_bind.sockets: style list needs sockets > 0"},
      {L + "cpu_bind:\n  style: list\n  sockets: 2\n",
       "machines/x.yaml:2: cpu_bind.cores_per_socket: style list needs cores_per_socket > 0"},
      {L + "cpu_bind:\n  style: list\n  sockets: 1\n  cores_per_socket: 4\n  reserved_cores: [0, "
           "4]\n",
       "machines/x.yaml:6: cpu_bind.reserved_cores[1]: core 4 is not on the node (cores 0-3)"},
      // Found by tests/fuzz (fuzz_machine_profile): the core count overflowed int.
      {L + "cpu_bind:\n  style: list\n  sockets: 100000\n  cores_per_socket: 100000\n",
       "machines/x.yaml:5: cpu_bind.cores_per_socket: sockets x cores_per_socket is 10000000000 "
       "cores, more than 2147483647"},
      {L + "cpu_bind:\n  style: list\n  sockets: 65536\n  cores_per_socket: 65536\n  "
           "reserved_cores: [0]\n",
       "machines/x.yaml:5: cpu_bind.cores_per_socket: sockets x cores_per_socket is 4294967296 "
       "cores, more than 2147483647"},
      {L + "cpu_bind:\n  reserved_cores:\n    - 0\n    - one\n",
       "machines/x.yaml:5: cpu_bind.reserved_cores[1]: expected an integer, got \"one\""},
      {L + "cpu_bind:\n  depth: -8\n",
       "machines/x.yaml:3: cpu_bind.depth: expected an integer >= 0, got \"-8\""},
      // Match rules.
      {L + "match: x4*\n", "machines/x.yaml:2: match: expected a mapping, got \"x4*\""},
      {L + "match:\n  hostnames: x4*\n",
       "machines/x.yaml:3: match.hostnames: expected a list, got \"x4*\""},
      {L + "match:\n  hostnames: [x4*, [a]]\n",
       "machines/x.yaml:3: match.hostnames[1]: expected a string, got a list"},
      {L + "match:\n  env: [PBS_O_HOST]\n",
       "machines/x.yaml:3: match.env: expected a mapping, got a list"},
      {L + "match:\n  env:\n    PBS_O_HOST: {a: 1}\n",
       "machines/x.yaml:4: match.env.PBS_O_HOST: expected a string, got a mapping"},
      // Environment.
      {L + "env:\n  1FOO: bar\n",
       "machines/x.yaml:3: env.1FOO: not a variable name (letters, digits and _, not starting "
       "with a digit)"},
      {L + "env:\n  FOO-BAR: x\n",
       "machines/x.yaml:3: env.FOO-BAR: not a variable name (letters, digits and _, not "
       "starting with a digit)"},
      {L + "env:\n  FOO: [a]\n", "machines/x.yaml:3: env.FOO: expected a string, got a list"},
      // Libraries a site puts on LD_LIBRARY_PATH.
      {L + "libraries:\n  lib/libnccl-net.so: /soft/lib\n",
       "machines/x.yaml:3: libraries.lib/libnccl-net.so: expected a file name, without /"},
      {L + "libraries:\n  libnccl-net.so: soft/lib\n",
       "machines/x.yaml:3: libraries.libnccl-net.so: expected an absolute directory, got "
       "\"soft/lib\""},
      {L + "env:\n  FOO:\n  BAR: 1\n",
       "machines/x.yaml:3: env.FOO: expected a string, got nothing"},
      {L + "env:\n  FOO: 1\n  FOO: 2\n",
       "machines/x.yaml:4: env.FOO: duplicate key (first on line 3)"},
      // Strings and lists.
      {L + "description: [a, b]\n",
       "machines/x.yaml:2: description: expected a string, got a list"},
      {L + "launcher_args: --foo\n",
       "machines/x.yaml:2: launcher_args: expected a list, got \"--foo\""},
      {L + "launcher_args:\n  - --a\n  - {b: c}\n",
       "machines/x.yaml:4: launcher_args[1]: expected a string, got a mapping"},
      {L + "network_suffix: hsn.cm.example.org\n",
       "machines/x.yaml:2: network_suffix: expected a domain suffix starting with \".\", got "
       "\"hsn.cm.example.org\""},
      {L + "master_addr: {host: a}\n",
       "machines/x.yaml:2: master_addr: expected a string, got a mapping"},
      {L + "bad_node_patterns:\n  ssh: '^ssh: ([a-z'\n",
       "machines/x.yaml:3: bad_node_patterns.ssh: invalid regular expression: Unexpected character "
       "within '[...]' in regular expression"},
      {L + "bad_node_patterns:\n  ssh: '^ssh: Could not resolve'\n",
       "machines/x.yaml:3: bad_node_patterns.ssh: expected a capture group for the host"},
      {L + "bad_node_patterns: ['(x)']\n",
       "machines/x.yaml:2: bad_node_patterns: expected a mapping, got a list"},
      // libstdc++ would overflow a long reading these numbers (fuzz_machine_profile's find),
      // or copy the repeated part once per count.
      {L + "bad_node_patterns:\n  step: 'failed on (\\S+) \\99999999999999999999'\n",
       "machines/x.yaml:3: bad_node_patterns.step: a back-reference with more than 3 digits"},
      {L + "bad_node_patterns:\n  step: '(x{99999999999999999999})'\n",
       "machines/x.yaml:3: bad_node_patterns.step: repeat counts too large: {n,m} bounds multiply "
       "past 1000"},
      {L + "bad_node_patterns:\n  step: '(x{1,40}y{30})'\n",
       "machines/x.yaml:3: bad_node_patterns.step: repeat counts too large: {n,m} bounds multiply "
       "past 1000"},
      // Nested repeats backtrack exponentially on a line that almost matches (13 s for 29
      // characters with the first).
      {L + "bad_node_patterns:\n  step: '^((\\w+\\s?)*)$'\n",
       "machines/x.yaml:3: bad_node_patterns.step: a repeated group holds a repeat (as in (a+)+): "
       "matching can take exponential time"},
      {L + "bad_node_patterns:\n  step: '(.+++) died'\n",
       "machines/x.yaml:3: bad_node_patterns.step: a repeat of a repeat (as in a++ or a*{2}): "
       "matching can take exponential time"},
      {L + "bad_node_patterns:\n  step: '(x*{2}) died'\n",
       "machines/x.yaml:3: bad_node_patterns.step: a repeat of a repeat (as in a++ or a*{2}): "
       "matching can take exponential time"},
      {L + "bad_node_patterns:\n  step: '(a+)+b'\n",
       "machines/x.yaml:3: bad_node_patterns.step: a repeated group holds a repeat (as in (a+)+): "
       "matching can take exponential time"},
      {L + "bad_node_patterns:\n  step: '((?:x\\d?)*)'\n",
       "machines/x.yaml:3: bad_node_patterns.step: a repeated group holds a repeat (as in (a+)+): "
       "matching can take exponential time"},
      {L + "bad_node_patterns:\n  step: '((a{2})+)'\n",
       "machines/x.yaml:3: bad_node_patterns.step: a repeated group holds a repeat (as in (a+)+): "
       "matching can take exponential time"},
      {L + "bad_node_patterns:\n  step: '(x{2000,})'\n",
       "machines/x.yaml:3: bad_node_patterns.step: repeat counts too large: {n,m} bounds multiply "
       "past 1000"},
      {L + "bad_node_patterns:\n  long: '(" + std::string(1000, 'a') + ")'\n",
       "machines/x.yaml:3: bad_node_patterns.long: longer than 1000 characters"},
  };
  for (const BadProfile& c : cases) {
    INFO(c.text);
    REQUIRE_THROWS_WITH(parse_machine_profile(c.text, "machines/x.yaml"), c.message);
  }
}

TEST_CASE("bad-node patterns keep their names and order", "[profile]") {
  MachineProfile p = parse_machine_profile(
      "launcher: hydra\nbad_node_patterns:\n  ssh: '^ssh: Could not resolve hostname ([^:]+):'\n"
      "  shepherd: '^(\\S+): shepherd died'\n"
      "  counted: '^(x\\d{1,3}c[0-9]{2}s[{]\\d+) lost \\1 {10,20}'\n"
      "  optional: '^(\\S+)(?:-hsn\\d+)?: (a|b)+ [(+*)]+'\n",
      "machines/x.yaml");
  CHECK(p.bad_node_patterns ==
        std::vector<BadNodePattern>{{"ssh", "^ssh: Could not resolve hostname ([^:]+):"},
                                    {"shepherd", "^(\\S+): shepherd died"},
                                    {"counted", "^(x\\d{1,3}c[0-9]{2}s[{]\\d+) lost \\1 {10,20}"},
                                    {"optional", "^(\\S+)(?:-hsn\\d+)?: (a|b)+ [(+*)]+"}});
}

TEST_CASE("profile errors are usage errors", "[profile]") {
  try {
    parse_machine_profile("launcher: mpirun\n", "m/x.yaml");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
  }
}

TEST_CASE("a later file with the same stem replaces an earlier one", "[profile]") {
  std::vector<ProfileFile> files = {
      {"/usr/share/ezpz/machines/polaris.yaml", "launcher: pals\ngpus_per_node: 4\n"},
      {"/usr/share/ezpz/machines/aurora.yaml", "launcher: pals\ngpus_per_node: 12\n"},
      {"/home/u/.config/ezpz/machines/aurora.yaml", "launcher: hydra\ngpus_per_node: 6\n"},
      {"/home/u/.config/ezpz/machines/mybox.yaml", "launcher: hydra\n"},
  };
  std::vector<MachineProfile> profiles = load_profiles(files);
  REQUIRE(profiles.size() == 3);
  CHECK(profiles[0].name == "aurora");  // sorted by name
  CHECK(profiles[0].source == "/home/u/.config/ezpz/machines/aurora.yaml");
  CHECK(profiles[0].launcher == "hydra");
  CHECK(profiles[0].gpus_per_node == 6);
  CHECK(profiles[1].name == "mybox");
  CHECK(profiles[2].name == "polaris");
  CHECK(load_profiles({}).empty());
}

TEST_CASE("a bad file among many names its own path", "[profile]") {
  std::vector<ProfileFile> files = {{"/a/good.yaml", "launcher: pals\n"},
                                    {"/b/bad.yaml", "launcher: pals\ngpus_per_node: x\n"}};
  REQUIRE_THROWS_WITH(load_profiles(files),
                      "/b/bad.yaml:2: gpus_per_node: expected an integer, got \"x\"");
}

TEST_CASE("a broken file is set aside, and refused only when it is the one asked for",
          "[profile]") {
  std::vector<ProfileFile> files = {
      {"/usr/share/ezpz/machines/local.yaml", "launcher: hydra\nmaster_addr: 127.0.0.1\n"},
      {"/usr/share/ezpz/machines/aurora.yaml", "launcher: pals\ngpus_per_node: 12\n"},
      {"/u/machines/draft.yaml", "launcher: [x\n"},
      // A broken override hides the bundled profile: never a silent fallback to it.
      {"/u/machines/aurora.yaml", "launcher: pals\ngpus_per_node: twelve\n"},
  };
  LoadedProfiles loaded = load_each_profile(files);
  REQUIRE(loaded.profiles.size() == 1);
  CHECK(loaded.profiles[0].name == "local");
  const std::string aurora_error =
      "/u/machines/aurora.yaml:2: gpus_per_node: expected an integer, got \"twelve\"";
  REQUIRE(loaded.broken.size() == 2);
  CHECK(loaded.broken[0] == BrokenProfile{"aurora", aurora_error});
  CHECK(loaded.broken[1].name == "draft");
  CHECK(loaded.broken[1].error.starts_with("/u/machines/draft.yaml:2: invalid YAML: "));
  // Not named: the others still serve.
  CHECK(select_profile(loaded, std::nullopt, {}, "laptop", SchedulerKind::local).profile->name ==
        "local");
  CHECK_THROWS_WITH(select_profile(loaded, "aurora", {}, "x4102c0s0b0n0", SchedulerKind::pbs),
                    aurora_error);
  CHECK_THROWS_WITH(
      select_profile(loaded, std::nullopt, {{"EZPZ_MACHINE", "aurora"}}, "h", SchedulerKind::pbs),
      aurora_error);
  CHECK_THROWS_WITH(loaded_profile_named(loaded, "aurora", "ezpz machines show"), aurora_error);
  CHECK_THROWS_WITH(loaded_profile_named(loaded, "nope", "ezpz machines show"),
                    "unknown machine \"nope\" (from ezpz machines show); known: local");
}

TEST_CASE("a profile is one YAML document", "[profile]") {
  REQUIRE_THROWS_WITH(
      parse_machine_profile("launcher: pals\n---\nlauncher: hydra\ngpus_per_node: 4\n",
                            "machines/x.yaml"),
      "machines/x.yaml:2: a second YAML document: a profile is one document (remove the '---')");
  REQUIRE_THROWS_WITH(
      parse_machine_profile("# c\nlauncher: pals\n...\n\nlauncher: hydra\n", "machines/x.yaml"),
      "machines/x.yaml:5: a second YAML document: a profile is one document (remove the '---')");
  CHECK(parse_machine_profile("# c\n---\nlauncher: pals\n", "machines/x.yaml").launcher == "pals");
  CHECK(parse_machine_profile("launcher: pals\n...\n# end\n", "machines/x.yaml").launcher ==
        "pals");
  CHECK(
      parse_machine_profile("launcher: pals\ndescription: a --- b\n", "machines/x.yaml").launcher ==
      "pals");
  CHECK(parse_machine_profile("launcher: pals\nlauncher_args:\n  - '---'\n", "machines/x.yaml")
            .launcher_args == std::vector<std::string>{"---"});
}

// A small world for selection: two machines share x3* and differ by PBS_O_HOST.
std::vector<MachineProfile> selection_profiles() {
  return load_profiles({
      {"m/aurora.yaml", "launcher: pals\nmatch:\n  hostnames: [x4*, aurora*]\n"},
      {"m/polaris.yaml", "launcher: pals\nmatch:\n  hostnames: [x3*, polaris*]\n"},
      {"m/sirius.yaml",
       "launcher: pals\nmatch:\n  hostnames: [x3*, sirius*]\n  env: {PBS_O_HOST: sirius*}\n"},
      {"m/two.yaml", "launcher: pals\nmatch:\n  hostnames: [x3*]\n  env: {A: a*, B: b*}\n"},
      {"m/generic-pbs.yaml", "launcher: hydra\nscheduler: pbs\n"},
      {"m/generic-slurm.yaml", "launcher: srun\nscheduler: slurm\n"},
      {"m/local.yaml", "launcher: hydra\nscheduler: local\n"},
  });
}

struct SelectCase {
  std::optional<std::string> flag;
  Env env;
  std::string hostname;
  SchedulerKind scheduler;
  std::string name;
  std::string rule;
};

TEST_CASE("profile selection: flag > EZPZ_MACHINE > hostname > generic", "[profile]") {
  const auto pbs = SchedulerKind::pbs;
  const std::vector<SelectCase> cases = {
      {"polaris",
       {{"EZPZ_MACHINE", "aurora"}},
       "x4102c5s2b0n0",
       pbs,
       "polaris",
       "--machine polaris"},
      {std::nullopt,
       {{"EZPZ_MACHINE", "polaris"}},
       "x4102c5s2b0n0",
       pbs,
       "polaris",
       "EZPZ_MACHINE=polaris"},
      // An empty EZPZ_MACHINE is unset.
      {std::nullopt,
       {{"EZPZ_MACHINE", ""}},
       "x4102c5s2b0n0",
       pbs,
       "aurora",
       "hostname x4102c5s2b0n0 matches \"x4*\" in m/aurora.yaml"},
      {std::nullopt,
       {},
       "aurora-uan-0009",
       SchedulerKind::local,
       "aurora",
       "hostname aurora-uan-0009 matches \"aurora*\" in m/aurora.yaml"},
      {std::nullopt,
       {},
       "X4102C5S2B0N0.HostMgmt",
       pbs,
       "aurora",
       "hostname X4102C5S2B0N0.HostMgmt matches \"x4*\" in m/aurora.yaml"},
      {std::nullopt,
       {},
       "x3005c0s7b0n0",
       pbs,
       "polaris",
       "hostname x3005c0s7b0n0 matches \"x3*\" in m/polaris.yaml"},
      {std::nullopt,
       {{"PBS_O_HOST", "polaris-login-02"}},
       "x3005c0s7b0n0",
       pbs,
       "polaris",
       "hostname x3005c0s7b0n0 matches \"x3*\" in m/polaris.yaml"},
      {std::nullopt,
       {{"PBS_O_HOST", "sirius-login-01"}},
       "x3005c0s7b0n0",
       pbs,
       "sirius",
       "hostname x3005c0s7b0n0 matches \"x3*\" in m/sirius.yaml and PBS_O_HOST matches "
       "\"sirius*\""},
      // Env values are matched case-sensitively.
      {std::nullopt,
       {{"PBS_O_HOST", "Sirius-login-01"}},
       "x3005c0s7b0n0",
       pbs,
       "polaris",
       "hostname x3005c0s7b0n0 matches \"x3*\" in m/polaris.yaml"},
      // Two conditions beat one; both must hold.
      {std::nullopt,
       {{"A", "a1"}, {"B", "b1"}, {"PBS_O_HOST", "sirius"}},
       "x3005",
       pbs,
       "two",
       "hostname x3005 matches \"x3*\" in m/two.yaml and A matches \"a*\" and B matches \"b*\""},
      {std::nullopt,
       {{"A", "a1"}, {"PBS_O_HOST", "sirius"}},
       "x3005",
       pbs,
       "sirius",
       "hostname x3005 matches \"x3*\" in m/sirius.yaml and PBS_O_HOST matches \"sirius*\""},
      {std::nullopt,
       {},
       "node17",
       pbs,
       "generic-pbs",
       "no hostname matched; generic profile for pbs"},
      {std::nullopt,
       {},
       "node17",
       SchedulerKind::slurm,
       "generic-slurm",
       "no hostname matched; generic profile for slurm"},
      {std::nullopt,
       {},
       "laptop",
       SchedulerKind::local,
       "local",
       "no hostname matched; generic profile for local"},
      {std::nullopt,
       {},
       "",
       SchedulerKind::local,
       "local",
       "no hostname matched; generic profile for local"},
  };
  std::vector<MachineProfile> profiles = selection_profiles();
  for (const SelectCase& c : cases) {
    INFO(c.hostname << " " << c.flag.value_or("(no flag)"));
    ProfileChoice choice = select_profile(profiles, c.flag, c.env, c.hostname, c.scheduler);
    REQUIRE(choice.profile != nullptr);
    CHECK(choice.profile->name == c.name);
    CHECK(choice.rule == c.rule);
  }
}

TEST_CASE("profile selection errors", "[profile]") {
  std::vector<MachineProfile> profiles = selection_profiles();
  const std::string known =
      "known: aurora, generic-pbs, generic-slurm, local, polaris, sirius, two";
  REQUIRE_THROWS_WITH(select_profile(profiles, std::string("foo"), {}, "x4", SchedulerKind::pbs),
                      "unknown machine \"foo\" (from --machine); " + known);
  REQUIRE_THROWS_WITH(select_profile(profiles, std::nullopt, {{"EZPZ_MACHINE", "Aurora"}}, "x4",
                                     SchedulerKind::pbs),
                      "unknown machine \"Aurora\" (from EZPZ_MACHINE); " + known);
  std::vector<MachineProfile> no_generic = load_profiles({{"m/aurora.yaml", "launcher: pals\n"}});
  REQUIRE_THROWS_WITH(
      select_profile(no_generic, std::nullopt, {}, "node17", SchedulerKind::slurm),
      "no machine profile matched hostname \"node17\" and the generic profile \"generic-slurm\" "
      "for slurm is missing; known: aurora");
  REQUIRE_THROWS_WITH(select_profile(std::vector<MachineProfile>{}, std::string("aurora"), {}, "x4",
                                     SchedulerKind::pbs),
                      "unknown machine \"aurora\" (from --machine); known: none");
}

TEST_CASE("scheduler kinds as text", "[profile]") {
  CHECK(to_string(SchedulerKind::pbs) == "pbs");
  CHECK(to_string(SchedulerKind::slurm) == "slurm");
  CHECK(to_string(SchedulerKind::local) == "local");
  CHECK(scheduler_from_string("PBS") == SchedulerKind::pbs);
  CHECK(scheduler_from_string("Slurm") == SchedulerKind::slurm);
  CHECK(scheduler_from_string("local") == SchedulerKind::local);
  CHECK(scheduler_from_string("none") == SchedulerKind::local);
  CHECK(scheduler_from_string("lsf") == std::nullopt);
  CHECK(scheduler_from_string("") == std::nullopt);
}

// ---- the bundled files ----------------------------------------------------

struct Expected {
  std::string launcher;
  int gpus_per_node;
  SchedulerKind scheduler;
};

// One row per bundled file: a new machine file needs a row here.
const std::map<std::string, Expected> k_bundled = {
    {"aurora", {"pals", 12, SchedulerKind::pbs}},
    {"sunspot", {"pals", 12, SchedulerKind::pbs}},
    {"polaris", {"pals", 4, SchedulerKind::pbs}},
    {"sirius", {"pals", 4, SchedulerKind::pbs}},
    {"sophia", {"openmpi", 8, SchedulerKind::pbs}},
    {"frontier", {"srun", 8, SchedulerKind::slurm}},
    {"perlmutter", {"srun", 4, SchedulerKind::slurm}},
    {"generic-pbs", {"hydra", 0, SchedulerKind::pbs}},
    {"generic-slurm", {"srun", 0, SchedulerKind::slurm}},
    {"generic-flux", {"flux", 0, SchedulerKind::flux}},
    {"local", {"hydra", 0, SchedulerKind::local}},
};

TEST_CASE("every bundled machine file parses as expected", "[profile]") {
  std::vector<ProfileFile> files = ezpz::testing::bundled_profile_files();
  REQUIRE(files.size() == k_bundled.size());
  for (const ProfileFile& file : files) {
    INFO(file.path);
    MachineProfile p = parse_machine_profile(file.text, file.path);
    auto row = k_bundled.find(p.name);
    REQUIRE(row != k_bundled.end());
    CHECK(p.launcher == row->second.launcher);
    CHECK(p.gpus_per_node == row->second.gpus_per_node);
    CHECK(p.scheduler == row->second.scheduler);
    CHECK_FALSE(p.description.empty());
    CHECK(file.text.rfind("# ", 0) == 0);  // each file opens with a comment on what it is
  }
}

TEST_CASE("bundled Aurora and Polaris carry the reference's facts", "[profile]") {
  std::vector<MachineProfile> profiles = load_profiles(ezpz::testing::bundled_profile_files());
  ProfileChoice aurora =
      select_profile(profiles, std::string("aurora"), {}, "", SchedulerKind::pbs);
  CHECK(aurora.profile->cpu_bind == CpuBind{CpuBind::Style::list, 0, 2, 52, {0, 52}});
  CHECK(aurora.profile->network_suffix == ".hsn.cm.aurora.alcf.anl.gov");
  CHECK(aurora.profile->env == EnvList{{"ZE_FLAT_DEVICE_HIERARCHY", "FLAT"},
                                       {"CCL_PROCESS_LAUNCHER", "pmix"},
                                       {"CCL_ATL_TRANSPORT", "mpi"},
                                       {"CCL_KVS_MODE", "mpi"},
                                       {"FI_MR_CACHE_MONITOR", "userfaultfd"},
                                       {"CCL_OP_SYNC", "1"}});
  ProfileChoice polaris =
      select_profile(profiles, std::string("polaris"), {}, "", SchedulerKind::pbs);
  CHECK(polaris.profile->cpu_bind == CpuBind{CpuBind::Style::depth, 8, 0, 0, {}});
  ProfileChoice local =
      select_profile(profiles, std::string("local"), {}, "", SchedulerKind::local);
  CHECK(local.profile->master_addr == "127.0.0.1");
}

struct HostCase {
  std::string hostname;
  Env env;
  SchedulerKind scheduler;
  std::string name;
};

TEST_CASE("bundled profiles are chosen by real host names", "[profile]") {
  const std::vector<HostCase> cases = {
      {"x4102c5s2b0n0", {}, SchedulerKind::pbs, "aurora"},
      {"aurora-uan-0010", {}, SchedulerKind::local, "aurora"},
      {"x1921c0s0b0n0", {}, SchedulerKind::pbs, "sunspot"},
      {"uan-0001", {}, SchedulerKind::local, "sunspot"},
      {"x3005c0s7b0n0",
       {{"PBS_O_HOST", "polaris-login-02.hsn.cm.polaris.alcf.anl.gov"}},
       SchedulerKind::pbs,
       "polaris"},
      {"polaris-login-02", {}, SchedulerKind::local, "polaris"},
      {"x3005c0s7b0n0", {{"PBS_O_HOST", "sirius-login-01"}}, SchedulerKind::pbs, "sirius"},
      {"sophia-gpu-07", {}, SchedulerKind::pbs, "sophia"},
      {"frontier08123", {}, SchedulerKind::slurm, "frontier"},
      {"login03.frontier.olcf.ornl.gov", {}, SchedulerKind::local, "frontier"},
      {"nid001234", {{"NERSC_HOST", "perlmutter"}}, SchedulerKind::slurm, "perlmutter"},
      {"login31", {{"NERSC_HOST", "perlmutter"}}, SchedulerKind::local, "perlmutter"},
      // Every HPE Cray EX names its compute nodes nid*: LUMI's and Alps's are not Perlmutter.
      {"nid001234", {}, SchedulerKind::slurm, "generic-slurm"},
      {"nid005678", {{"NERSC_HOST", "muller"}}, SchedulerKind::slurm, "generic-slurm"},
      {"login03", {}, SchedulerKind::local, "local"},
      {"cluster-node-9", {}, SchedulerKind::pbs, "generic-pbs"},
      {"cluster-node-9", {}, SchedulerKind::slurm, "generic-slurm"},
      {"tuolumne1001", {}, SchedulerKind::flux, "generic-flux"},
      {"my-laptop", {}, SchedulerKind::local, "local"},
  };
  std::vector<MachineProfile> profiles = load_profiles(ezpz::testing::bundled_profile_files());
  for (const HostCase& c : cases) {
    INFO(c.hostname);
    ProfileChoice choice = select_profile(profiles, std::nullopt, c.env, c.hostname, c.scheduler);
    CHECK(choice.profile->name == c.name);
  }
}

// Issue 45: a profile another user could have written chooses the ranks' launcher and
// LD_PRELOAD; a file name that is no machine name reaches completion scripts; a 50 MB file
// made every launch take 15 s. Each refused with its fix; root's and the user's own are fine.
TEST_CASE("profile files another user could write, or of no machine's name, are refused",
          "[profile]") {
  const ProfileFileFacts mine{.path = "/home/me/.config/ezpz/machines/box.yaml",
                              .owner = 1000,
                              .mode = 0100644,
                              .dir_owner = 1000,
                              .dir_mode = 040755,
                              .size = 300,
                              .user = 1000};
  struct Row {
    const char* what;
    std::function<void(ProfileFileFacts&)> change;
    const char* refusal;
  };
  const std::vector<Row> rows = {
      {"the user's own", [](ProfileFileFacts&) {}, ""},
      {"root's, in root's directory (bundled)",
       [](ProfileFileFacts& f) { f.owner = f.dir_owner = 0; }, ""},
      {"group-writable (a project's group)", [](ProfileFileFacts& f) { f.mode = 0100664; }, ""},
      {"in a sticky directory anyone can write (/tmp)",
       [](ProfileFileFacts& f) { f.dir_mode = 041777; }, ""},
      {"another user's file", [](ProfileFileFacts& f) { f.owner = 1001; },
       "owned by uid 1001, not by you or root"},
      {"in another user's directory", [](ProfileFileFacts& f) { f.dir_owner = 1001; },
       "its directory /home/me/.config/ezpz/machines is owned by uid 1001, not by you or root"},
      {"anyone can write it", [](ProfileFileFacts& f) { f.mode = 0100666; },
       "anyone can write it (mode 0666): chmod o-w /home/me/.config/ezpz/machines/box.yaml"},
      {"anyone can write its directory", [](ProfileFileFacts& f) { f.dir_mode = 040777; },
       "anyone can write its directory (mode 0777): chmod o-w /home/me/.config/ezpz/machines"},
      {"too large", [](ProfileFileFacts& f) { f.size = 50'000'000; },
       "50000000 bytes, over the 1048576 a profile may hold"},
      {"a name that is code", [](ProfileFileFacts& f) { f.path = "/m/$(touch${IFS}X).yaml"; },
       "its name is not a machine name (letters, digits, '.', '_' and '-'): rename the file"},
      {"a name with a backquote", [](ProfileFileFacts& f) { f.path = "/m/`id>X`.yaml"; },
       "its name is not a machine name (letters, digits, '.', '_' and '-'): rename the file"},
      {"a name like an option", [](ProfileFileFacts& f) { f.path = "/m/-x.yaml"; },
       "its name is not a machine name (letters, digits, '.', '_' and '-'): rename the file"},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    ProfileFileFacts f = mine;
    row.change(f);
    CHECK(profile_refusal(f) == row.refusal);
  }
  LoadedProfiles loaded = load_each_profile(
      {{"/m/box.yaml", "", "anyone can write it (mode 0666): chmod o-w /m/box.yaml"}});
  REQUIRE(loaded.broken.size() == 1);
  CHECK(loaded.broken[0].error ==
        "/m/box.yaml: anyone can write it (mode 0666): chmod o-w /m/box.yaml");
}

}  // namespace
}  // namespace ezpz
