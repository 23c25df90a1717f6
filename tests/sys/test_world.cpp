// lib/ezpz/sys/world.cpp against real files, directories, processes and sockets,
// all inside a fresh mkdtemp directory.
#include "ezpz/sys/world.hpp"

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ezpz/core/error.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

namespace fs = std::filesystem;
using ezpz::Env;
using ezpz::Error;
using ezpz::ExitCode;
using ezpz::testing::names_in;
using ezpz::testing::TempDir;

namespace {


// Creates `path` (and its parents) holding `text`, with `mode`.
void put(const std::string& path, const std::string& text, fs::perms mode = fs::perms(0644)) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  fs::permissions(path, mode);
}

void put_script(const std::string& path, const std::string& body) {
  put(path, "#!/bin/sh\n" + body, fs::perms(0755));
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

template <typename Fn>
std::optional<Error> caught(Fn fn) {
  try {
    fn();
  } catch (const Error& error) {
    return error;
  }
  return std::nullopt;
}

std::vector<std::string> paths_under(const std::vector<ezpz::ProfileFile>& files,
                                     const std::string& prefix) {
  std::vector<std::string> paths;
  for (const auto& file : files) {
    if (file.path.starts_with(prefix)) paths.push_back(file.path.substr(prefix.size()));
  }
  return paths;
}

}  // namespace

TEST_CASE("capture_environment reads environ", "[world]") {
  ::setenv("EZPZ_WORLD_TEST", "a=b", 1);
  Env env = ezpz::sys::capture_environment();
  ::unsetenv("EZPZ_WORLD_TEST");
  CHECK(env.at("EZPZ_WORLD_TEST") == "a=b");
}

TEST_CASE("RealFileReader reads whole files and names the path on failure", "[world]") {
  TempDir dir;
  ezpz::sys::RealFileReader reader;
  std::string big(200000, 'x');
  big[1000] = '\0';
  put(dir / "big", big);
  CHECK(reader.read(dir / "big") == big);
  put(dir / "empty", "");
  CHECK(reader.read(dir / "empty").empty());

  auto missing = caught([&] { reader.read(dir / "nodefile"); });
  REQUIRE(missing);
  CHECK(std::string(missing->what()) == dir / "nodefile" + ": No such file or directory");
  CHECK(missing->code() == ExitCode::usage);

  fs::create_directory(dir / "sub");
  auto directory = caught([&] { reader.read(dir / "sub"); });
  REQUIRE(directory);
  CHECK(std::string(directory->what()) == dir / "sub" + ": Is a directory");
  CHECK(directory->code() == ExitCode::usage);
}

TEST_CASE("read_file_if_present: the text, or nothing for what cannot be read", "[world]") {
  TempDir dir;
  put(dir / "file", "text");
  CHECK(ezpz::sys::read_file_if_present(dir / "file") == "text");
  CHECK_FALSE(ezpz::sys::read_file_if_present(dir / "absent"));
  fs::create_directory(dir / "sub");
  CHECK_FALSE(ezpz::sys::read_file_if_present(dir / "sub"));
}

TEST_CASE("ScratchDirectory: private, under TMPDIR, gone with what it holds", "[world]") {
  TempDir dir;
  fs::create_directory(dir / "tmp");
  std::string path;
  {
    const ezpz::sys::ScratchDirectory scratch(Env{{"TMPDIR", dir / "tmp"}}, "ezpz-step");
    path = scratch.path();
    CHECK(path.starts_with(dir / "tmp/ezpz-step."));
    CHECK((fs::status(path).permissions() & fs::perms::all) == fs::perms::owner_all);
    put(path + "/output", "text");
  }
  CHECK_FALSE(fs::exists(path));
  auto error = caught([] {
    ezpz::sys::ScratchDirectory(Env{{"TMPDIR", "/nonexistent"}}, "ezpz-step");
  });
  REQUIRE(error);
  CHECK(std::string(error->what()) ==
        "a temporary directory in /nonexistent: No such file or directory");
}

TEST_CASE("hostname is the kernel's", "[world]") {
  char expected[256] = {};
  ::gethostname(expected, sizeof expected - 1);
  CHECK(ezpz::sys::hostname() == expected);
}

TEST_CASE("find_program searches the given PATH", "[world]") {
  TempDir dir;
  put(dir / "bin1/tool", "not executable\n");
  fs::create_directories(dir / "bin1/tool2");  // a directory, searchable but no program
  put_script(dir / "bin2/tool", "exit 0\n");
  put_script(dir / "bin2/tool2", "exit 0\n");
  Env env{{"PATH", dir / "missing" + ":" + dir / "bin1" + ":" + dir / "bin2"}};

  CHECK(ezpz::sys::find_program("tool", env) == dir / "bin2/tool");
  CHECK(ezpz::sys::find_program("tool2", env) == dir / "bin2/tool2");
  CHECK(ezpz::sys::find_program("absent", env) == std::nullopt);
  CHECK(ezpz::sys::find_program("", env) == std::nullopt);
  CHECK(ezpz::sys::find_program("tool", Env{{"PATH", dir / "bin1"}}) == std::nullopt);

  SECTION("a name with a slash is checked as it is, not searched") {
    CHECK(ezpz::sys::find_program(dir / "bin2/tool", Env{}) == dir / "bin2/tool");
    CHECK(ezpz::sys::find_program(dir / "bin1/tool", env) == std::nullopt);
    CHECK(ezpz::sys::find_program("bin2/tool", env) == std::nullopt);
  }
}

// What execvp() itself runs for `program` from the current directory with PATH `path`: the
// label the script it runs prints; "" when it runs none.
std::string label_execvp_runs(const std::string& program, const std::string& path) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::setenv("PATH", path.c_str(), 1);
    char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
    ::execvp(program.c_str(), argv);
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buffer[256];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  return out;
}

// The one search of launch, doctor and the command check is execvp's, shape by shape.
TEST_CASE("find_program finds what execvp runs, on every shape of PATH", "[world]") {
  TempDir dir;
  put_script(dir / "work/tool", "echo cwd\n");
  put_script(dir / "work/rel/tool", "echo rel\n");
  put_script(dir / "bin/tool", "echo bin\n");
  fs::create_directories(dir / "dirs/tool");                   // a directory named like it
  put(dir / "noexec/tool", "echo noexec\n", fs::perms(0644));  // not executable
  fs::create_directories(dir / "empty");
  const fs::path before = fs::current_path();
  fs::current_path(dir / "work");
  struct Row {
    std::string path;
    std::optional<std::string> found;  // what find_program says
    std::string label;                 // what execvp ran
  };
  const std::vector<Row> rows = {
      {dir / "bin", dir / "bin/tool", "bin\n"},
      {std::string(":") + dir / "bin", "./tool", "cwd\n"},         // empty entry first
      {dir / "empty::" + dir / "bin", "./tool", "cwd\n"},          // inside
      {dir / "empty:", "./tool", "cwd\n"},                         // last
      {"", "./tool", "cwd\n"},                                     // PATH empty: one empty entry
      {std::string("rel:") + dir / "bin", "rel/tool", "rel\n"},    // relative entry
      {dir / "dirs:" + dir / "bin", dir / "bin/tool", "bin\n"},    // the directory passed over
      {dir / "noexec:" + dir / "bin", dir / "bin/tool", "bin\n"},  // the file passed over
      {dir / "dirs:" + dir / "noexec", std::nullopt, ""},          // nothing to run
  };
  for (const Row& row : rows) {
    INFO("PATH=" << row.path);
    CHECK(ezpz::sys::find_program("tool", Env{{"PATH", row.path}}) == row.found);
    CHECK(label_execvp_runs("tool", row.path) == row.label);
  }
  fs::current_path(before);
  // PATH unset: the C library's default, as execvp() has it.
  CHECK(ezpz::sys::find_program("sh", Env{}) == "/bin/sh");
}

TEST_CASE("look_up_command: what the ranks' PATH and this directory say", "[world]") {
  TempDir dir;
  put_script(dir / "bin/tool", "exit 0\n");
  put(dir / "work/ddp.py", "print()\n");
  const Env env{{"PATH", dir / "bin"}};
  const fs::path before = fs::current_path();
  fs::current_path(dir / "work");
  const ezpz::CommandLookup tool = ezpz::sys::look_up_command("tool", env);
  const ezpz::CommandLookup here = ezpz::sys::look_up_command("ddp.py", env);
  const ezpz::CommandLookup slash = ezpz::sys::look_up_command("./ddp.py", env);
  const ezpz::CommandLookup gone = ezpz::sys::look_up_command("./gone", env);
  fs::current_path(before);
  CHECK(tool.runnable);
  CHECK_FALSE(here.runnable);
  CHECK(here.in_current_dir);
  CHECK_FALSE(slash.runnable);  // there, but not executable
  CHECK(slash.exists);
  CHECK_FALSE(slash.in_current_dir);
  CHECK_FALSE(gone.exists);
}

TEST_CASE("create_new_directory never returns one that existed", "[world]") {
  TempDir dir;
  const std::string base = dir / "outputs/ezpz-test/2026-01-01-000000";
  CHECK(ezpz::sys::create_new_directory(base) == base);  // parents made too
  put(base + "/summary.json", "{}");
  CHECK(ezpz::sys::create_new_directory(base) == base + "-2");
  CHECK(ezpz::sys::create_new_directory(base) == base + "-3");
  CHECK(fs::exists(base + "/summary.json"));  // the first run's outputs untouched
  CHECK(fs::is_empty(base + "-2"));
  try {
    ezpz::sys::create_new_directory(base, 3);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          base + ": cannot create the directory: it exists, and so do -2 to -3 after it");
  }
  put(dir / "file", "");
  CHECK_THROWS_WITH(ezpz::sys::create_new_directory(dir / "file/sub"),
                    dir / "file/sub" + ": cannot create the directory: Not a directory");
}

TEST_CASE("self_directory is where the test binary is", "[world]") {
  std::string self = ezpz::sys::self_directory();
  CHECK(fs::exists(fs::path(self) / "ezpz_sys_tests"));
}

TEST_CASE("probe_local_accelerators runs the first tool that answers", "[world]") {
  TempDir dir;
  Env env{{"PATH", dir / "bin"}};
  CHECK(ezpz::sys::probe_local_accelerators(env) == std::nullopt);

  SECTION("nvidia-smi -L, MIG lines not counted") {
    put_script(dir / "bin/nvidia-smi",
               "[ \"$1\" = -L ] || exit 2\n"
               "printf 'GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-a)\\n'\n"
               "printf '  MIG 3g.20gb     Device  0: (UUID: MIG-b)\\n'\n"
               "printf 'GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-c)\\n'\n"
               "echo 'noise on stderr' >&2\n");
    CHECK(ezpz::sys::probe_local_accelerators(env) == 2);
  }
  SECTION("a failing nvidia-smi falls through to rocm-smi") {
    put_script(dir / "bin/nvidia-smi", "echo 'GPU 0: bogus'\nexit 9\n");
    put_script(dir / "bin/rocm-smi",
               "[ \"$1\" = --showid ] || exit 2\n"
               "printf 'GPU[0]\\t\\t: GPU ID: 0x740c\\nGPU[1]\\t\\t: GPU ID: 0x740c\\n'\n"
               "printf 'GPU[2]\\t\\t: GPU ID: 0x740c\\n'\n");
    CHECK(ezpz::sys::probe_local_accelerators(env) == 3);
  }
  SECTION("xpu-smi discovery --dump 1") {
    put_script(dir / "bin/xpu-smi",
               "[ \"$*\" = 'discovery --dump 1' ] || exit 2\n"
               "printf 'Device ID\\n0\\n1\\n2\\n3\\n4\\n5\\n'\n");
    CHECK(ezpz::sys::probe_local_accelerators(env) == 6);
  }
  SECTION("a hung tool is killed after the timeout") {
    put_script(dir / "bin/nvidia-smi", "exec /bin/sleep 30\n");
    auto start = std::chrono::steady_clock::now();
    CHECK(ezpz::sys::probe_local_accelerators(env) == std::nullopt);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  }
}

TEST_CASE("find_free_port returns a port that can be bound", "[world]") {
  int port = ezpz::sys::find_free_port();
  REQUIRE(port > 0);
  REQUIRE(port < 65536);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  CHECK(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  ::close(fd);
}

TEST_CASE("read_profile_files searches lowest precedence first", "[world]") {
  TempDir dir;
  std::string prefix = dir / "";
  put(dir / "home/.config/ezpz/machines/b.yaml", "name: b\n");
  put(dir / "home/.config/ezpz/machines/a.yaml", "name: a\n");
  put(dir / "home/.config/ezpz/machines/notes.txt", "not a profile\n");
  put(dir / "home/.config/ezpz/machines/.hidden.yaml", "name: hidden\n");
  fs::create_directories(dir / "home/.config/ezpz/machines/sub.yaml");
  put(dir / "first/x.yaml", "name: x\n");
  put(dir / "second/y.yaml", "name: y\n");
  put(dir / "xdg/ezpz/machines/z.yaml", "name: z\n");
  Env env{{"HOME", dir / "home"}};

  SECTION("home, then EZPZ_MACHINES_PATH last to first; missing dirs skipped") {
    env["EZPZ_MACHINES_PATH"] = dir / "first" + ":" + dir / "missing" + "::" + dir / "second";
    auto files = ezpz::sys::read_profile_files(env);
    CHECK(paths_under(files, prefix) ==
          std::vector<std::string>{"home/.config/ezpz/machines/a.yaml",
                                   "home/.config/ezpz/machines/b.yaml", "second/y.yaml",
                                   "first/x.yaml"});
    // Bundled profiles (the source tree's machines/) come before all of these.
    auto first_ours = std::find_if(files.begin(), files.end(),
                                   [&](const auto& file) { return file.path.starts_with(prefix); });
    CHECK(std::all_of(first_ours, files.end(),
                      [&](const auto& file) { return file.path.starts_with(prefix); }));
    CHECK(first_ours->text == "name: a\n");
    CHECK(files.back().text == "name: x\n");
  }
  SECTION("XDG_CONFIG_HOME replaces ~/.config") {
    env["XDG_CONFIG_HOME"] = dir / "xdg";
    CHECK(paths_under(ezpz::sys::read_profile_files(env), prefix) ==
          std::vector<std::string>{"xdg/ezpz/machines/z.yaml"});
  }
  SECTION("a directory named twice is read once, at its highest precedence") {
    env["EZPZ_MACHINES_PATH"] = dir / "home/.config/ezpz/../ezpz/machines" + ":" + dir / "first";
    CHECK(paths_under(ezpz::sys::read_profile_files(env), prefix) ==
          std::vector<std::string>{"first/x.yaml", "home/.config/ezpz/machines/a.yaml",
                                   "home/.config/ezpz/machines/b.yaml"});
  }
  SECTION("no HOME, no path: only the bundled profiles") {
    CHECK(paths_under(ezpz::sys::read_profile_files(Env{}), prefix).empty());
  }
}

TEST_CASE("write_files writes atomically and makes private parents", "[world]") {
  TempDir dir;
  ezpz::sys::write_files({{dir / "a/b/hostfile", "node1\nnode2\n"}, {dir / "top", "x"}});
  CHECK(slurp(dir / "a/b/hostfile") == "node1\nnode2\n");
  CHECK(slurp(dir / "top") == "x");
  CHECK((fs::status(dir / "a").permissions() & fs::perms::all) == fs::perms(0700));
  CHECK((fs::status(dir / "a/b").permissions() & fs::perms::all) == fs::perms(0700));

  ezpz::sys::write_files({{dir / "a/b/hostfile", "node3\n"}});
  CHECK(slurp(dir / "a/b/hostfile") == "node3\n");
  CHECK(names_in(dir / "a/b") == std::vector<std::string>{"hostfile"});
  CHECK(names_in(dir / "") == std::vector<std::string>{"a", "top"});
}

TEST_CASE("PendingFile: the temporary made ahead, the write renames it into place", "[world]") {
  TempDir dir;
  put(dir / "run.json", "{\"open\": true}\n");
  {
    ezpz::sys::PendingFile next(dir / "run.json");
    const std::vector<std::string> ahead = names_in(dir / "");
    REQUIRE(ahead.size() == 2);  // run.json and its temporary
    CHECK(ahead[1].starts_with("run.json."));
    CHECK(slurp(dir / "run.json") == "{\"open\": true}\n");  // untouched until committed
    next.commit("{}\n");
    CHECK(names_in(dir / "") == std::vector<std::string>{"run.json"});
    CHECK(slurp(dir / "run.json") == "{}\n");
    CHECK((fs::status(dir / "run.json").permissions() & fs::perms::all) == fs::perms(0600));
    auto again = caught([&] { next.commit("{}\n"); });
    REQUIRE(again);
    CHECK(std::string(again->what()) == dir / "run.json" + ": written already");
  }
  {
    ezpz::sys::PendingFile unused(dir / "verdict.json");
    CHECK(names_in(dir / "").size() == 2);
  }
  CHECK(names_in(dir / "") == std::vector<std::string>{"run.json"});  // never committed: gone
  put(dir / "file", "a regular file\n");
  auto under_file = caught([&] { ezpz::sys::PendingFile(dir / "file/verdict.json"); });
  REQUIRE(under_file);
  CHECK(std::string(under_file->what()) == dir / "file/verdict.json" + ": Not a directory");
}

TEST_CASE("make_directories makes the path and what is missing above it, private", "[world]") {
  TempDir dir;
  fs::create_directory(dir / "kept");
  fs::permissions(dir / "kept", fs::perms(0755));
  CHECK(ezpz::sys::make_directories(dir / "kept/a/b"));
  CHECK(fs::is_directory(dir / "kept/a/b"));
  CHECK((fs::status(dir / "kept").permissions() & fs::perms::all) == fs::perms(0755));
  CHECK((fs::status(dir / "kept/a").permissions() & fs::perms::all) == fs::perms(0700));
  CHECK((fs::status(dir / "kept/a/b").permissions() & fs::perms::all) == fs::perms(0700));
  CHECK(ezpz::sys::make_directories(dir / "kept/a/b/"));  // all there: nothing to do
  put(dir / "file", "a regular file\n");
  errno = 0;
  CHECK_FALSE(ezpz::sys::make_directories(dir / "file/sub/deeper"));
  CHECK(errno == ENOTDIR);
}

TEST_CASE("write_files names the path when it cannot write", "[world]") {
  TempDir dir;
  put(dir / "file", "a regular file\n");

  auto under_file = caught([&] { ezpz::sys::write_files({{dir / "file/hostfile", "x"}}); });
  REQUIRE(under_file);
  CHECK(std::string(under_file->what()) == dir / "file/hostfile" + ": Not a directory");

  auto deeper = caught([&] { ezpz::sys::write_files({{dir / "file/sub/hostfile", "x"}}); });
  REQUIRE(deeper);
  CHECK(std::string(deeper->what()) == dir / "file/sub/hostfile" + ": Not a directory");

  fs::create_directory(dir / "taken");
  auto over_directory = caught([&] { ezpz::sys::write_files({{dir / "taken", "x"}}); });
  REQUIRE(over_directory);
  CHECK(std::string(over_directory->what()) == dir / "taken" + ": Is a directory");
  // The temporary sibling is gone again.
  CHECK(names_in(dir / "") == std::vector<std::string>{"file", "taken"});
}
