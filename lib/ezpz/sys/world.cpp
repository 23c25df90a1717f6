#include "ezpz/sys/world.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/log.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/profile/accelerators.hpp"
#include "ezpz/supervise/run_record.hpp"
#include "ezpz/sys/spawn.hpp"

extern char** environ;

namespace ezpz::sys {
namespace {

// "<where>: <strerror(errno)>", the one shape of every system error here.
Error system_error(std::string_view where, ExitCode code = ExitCode::failure) {
  return Error(fmt::format("{}: {}", where, std::strerror(errno)), code);
}

// Owns a file descriptor.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Where execvp() looks when PATH is unset: the C library's default (/bin:/usr/bin in glibc).
std::string default_search_path() {
  std::string dirs(::confstr(_CS_PATH, nullptr, 0), '\0');
  if (dirs.empty()) return "/bin:/usr/bin";
  ::confstr(_CS_PATH, dirs.data(), dirs.size());
  dirs.pop_back();  // confstr's terminating NUL
  return dirs;
}

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::access(path.c_str(), X_OK) == 0 && ::stat(path.c_str(), &info) == 0 &&
         S_ISREG(info.st_mode);
}

}  // namespace

std::string RealCommandReader::output(const std::vector<std::string>& argv) const {
  auto path = find_program(argv.front(), env_);
  if (!path) throw Error(fmt::format("{} is not on PATH", argv.front()));
  std::vector<std::string> resolved = argv;
  resolved.front() = *path;
  const CapturedRun run = finish_captured(
      start_captured(resolved, env_), std::chrono::steady_clock::now() + k_run_captured_timeout);
  if (run.exit_code == 0) return run.out;
  if (!run.start_error.empty()) throw Error(run.start_error);
  if (run.timed_out) {
    throw Error(fmt::format("it did not answer within {} s", k_run_captured_timeout.count()));
  }
  // Its own first words on stderr say why ("Communication failure."): a scheduler's client may
  // fail for a moment, and only its words tell that from a real refusal.
  const std::vector<std::string_view> lines = split_lines(run.err);
  std::string said = lines.empty() ? "" : std::string(lines.front());
  while (!said.empty() && (said.back() == ' ' || said.back() == '\r')) said.pop_back();
  throw Error(said.empty() ? "it failed" : fmt::format("it failed: {}", said));
}

namespace {
// ---- Profile search path ---------------------------------------------------

// The search path as configured, lowest precedence first. The bundled
// profiles are found relative to the binary (PREFIX/bin/../share/ezpz/machines),
// so an installed tree works wherever it is moved; the checkout the binary was
// built from counts only when there are none (a build tree), never for an
// installed copy.
// The bundled profiles' directories: beside the binary, or the checkout it was built from.
std::vector<std::string> bundled_dirs() {
  std::vector<std::string> dirs;
  std::string installed = self_directory() + "/../share/ezpz/machines";
#ifdef EZPZ_SOURCE_MACHINES_DIR
  std::error_code ignored;
  if (!std::filesystem::is_directory(installed, ignored)) {
    dirs.emplace_back(EZPZ_SOURCE_MACHINES_DIR);
  }
#endif
  dirs.push_back(std::move(installed));
  return dirs;
}

std::vector<std::string> profile_dirs(const Env& env) {
  std::vector<std::string> dirs = bundled_dirs();
  if (auto config = get_nonempty(env, "XDG_CONFIG_HOME")) {
    dirs.push_back(*config + "/ezpz/machines");
  } else if (auto home = get_nonempty(env, "HOME")) {
    dirs.push_back(*home + "/.config/ezpz/machines");
  }
  if (auto path = get_nonempty(env, "EZPZ_MACHINES_PATH")) {
    auto entries = split(*path, ':');
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if (!it->empty()) dirs.emplace_back(*it);
    }
  }
  return dirs;
}

// The real paths of the directories that exist. One named twice (the build
// tree may be the source tree) is kept where its precedence is highest, so
// that naming it in EZPZ_MACHINES_PATH still lifts it over ~/.config.
std::vector<std::string> resolve_dirs(const std::vector<std::string>& dirs) {
  std::vector<std::string> real;
  for (const auto& dir : dirs) {
    char buffer[PATH_MAX];
    if (::realpath(dir.c_str(), buffer) != nullptr) real.emplace_back(buffer);
  }
  std::vector<std::string> unique;
  for (auto it = real.begin(); it != real.end(); ++it) {
    if (std::find(it + 1, real.end(), *it) == real.end()) unique.push_back(*it);
  }
  return unique;
}

// The names matching the shell's `*.yaml` in `dir`, sorted; none when it
// cannot be listed (a compiled-in source tree may be another user's).
std::vector<std::string> yaml_names(const std::string& dir) {
  std::vector<std::string> names = entry_names(dir, [](const DirEntry& entry) {
    return entry.name.ends_with(".yaml") && !entry.name.starts_with('.') && !entry.directory;
  });
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> entry_names(const std::string& dir, bool (*keep)(const DirEntry&)) {
  std::vector<std::string> names;
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) return names;
  while (const dirent* entry = ::readdir(handle)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    const bool directory =
        entry->d_type == DT_DIR || (entry->d_type == DT_UNKNOWN &&
                                    path_kind(dir + "/" + entry->d_name) == PathKind::directory);
    if (keep({.name = name, .directory = directory})) names.emplace_back(name);
  }
  ::closedir(handle);
  return names;
}

namespace {

// ---- Atomic writes ---------------------------------------------------------

// mkdir -p of the directories above `path`, mode 0700; existing ones are kept.
void make_parents(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return;
  if (!make_directories(path.substr(0, slash))) throw system_error(path);
}

// A new file "<path>.XXXXXX" beside `path`, opened exclusively; parents are
// made only when missing, to keep the common case to one system call.
std::pair<int, std::string> create_temp(const std::string& path) {
  std::string temp = path + ".XXXXXX";
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    make_parents(path);
    temp = path + ".XXXXXX";
    fd = ::mkostemp(temp.data(), O_CLOEXEC);
  }
  if (fd < 0) throw system_error(path);
  return {fd, temp};
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Writes `contents` to `fd` (its temporary `temp`), closes it and renames it over `path`; on
// failure unlinks it and throws naming `path`.
void finish_temp(int fd, const std::string& temp, const std::string& path, unsigned mode,
                 std::string_view contents) {
  bool ok = (mode == 0600 || ::fchmod(fd, mode) == 0) && write_all(fd, contents);
  int error = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (ok) return;
  ::unlink(temp.c_str());
  errno = error;
  throw system_error(path);
}

}  // namespace

void write_file(const FileToWrite& file) {
  auto [fd, temp] = create_temp(file.path);  // 0600, as mkostemp makes it
  finish_temp(fd, temp, file.path, file.mode, file.contents);
}

PendingFile::PendingFile(const std::string& path) : path_(path) {
  std::tie(fd_, temp_) = create_temp(path);
}

PendingFile::~PendingFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(temp_.c_str());
}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_(std::move(other.temp_)),
      fd_(std::exchange(other.fd_, -1)) {}

void PendingFile::commit(std::string_view contents) {
  if (fd_ < 0) throw Error(fmt::format("{}: written already", path_), ExitCode::failure);
  finish_temp(std::exchange(fd_, -1), temp_, path_, 0600, contents);
}

Env capture_environment() {
  Env env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text = *entry;
    auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    // emplace keeps the first of duplicate names, as getenv() does.
    env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return env;
}

namespace {

// The whole file; nullopt with errno set when it cannot be opened or read. Not by throwing:
// an absent file is the common case of read_file_if_present, and a launch's first exception
// costs tens of microseconds of unwinder set-up.
std::optional<std::string> read_all(const Fd& fd) {
  std::string text;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n == 0) return text;
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
    } else if (errno != EINTR) {
      return std::nullopt;
    }
  }
}

std::optional<std::string> read_whole_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  return read_all(fd);
}

}  // namespace

std::string RealFileReader::read(const std::string& path) const {
  std::optional<std::string> text = read_whole_file(path);
  if (!text) throw system_error(path, ExitCode::usage);
  return std::move(*text);
}

std::optional<std::string> read_file_if_present(const std::string& path) {
  return read_whole_file(path);
}

std::optional<std::string> read_own_cache(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  struct stat file {};
  struct stat dir {};
  if (fd.get() < 0 || ::fstat(fd.get(), &file) != 0 ||
      ::stat(path.substr(0, path.rfind('/')).c_str(), &dir) != 0) {
    return std::nullopt;
  }
  const bool trusted = trusted_cache_file({.regular = S_ISREG(file.st_mode),
                                           .owner = file.st_uid,
                                           .mode = file.st_mode,
                                           .dir_owner = dir.st_uid,
                                           .dir_mode = dir.st_mode,
                                           .user = ::geteuid()});
  if (!trusted) {
    log::debug("{}: not read: another user could have written it (owner, mode or directory)", path);
    return std::nullopt;
  }
  return read_all(fd);
}

ScratchDirectory::ScratchDirectory(const Env& env, std::string_view prefix) {
  const std::string base = get_nonempty(env, "TMPDIR").value_or("/tmp");
  std::string pattern = fmt::format("{}/{}.XXXXXX", base, prefix);
  if (::mkdtemp(pattern.data()) == nullptr) throw system_error("a temporary directory in " + base);
  path_ = pattern;
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ignored;  // nothing to do about a leftover in $TMPDIR while unwinding
  std::filesystem::remove_all(path_, ignored);
}

std::string current_directory() {
  std::error_code error;
  std::filesystem::path cwd = std::filesystem::current_path(error);
  if (error) throw Error(fmt::format("current directory: {}", error.message()), ExitCode::failure);
  return cwd.string();
}

PathKind path_kind(const std::string& path) {
  std::error_code error;
  std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status)) return PathKind::directory;
  if (std::filesystem::exists(status)) return PathKind::file;
  return PathKind::missing;
}

std::string create_new_directory(const std::string& path, int most) {
  std::error_code error;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  for (int n = 1; n <= most && !error; ++n) {
    std::string choice = run_id_choice(path, n);
    if (::mkdir(choice.c_str(), 0777) == 0) return choice;
    if (errno != EEXIST) error = std::error_code(errno, std::generic_category());
  }
  throw Error(fmt::format("{}: cannot create the directory: {}", path,
                          error ? error.message()
                                : fmt::format("it exists, and so do -2 to -{} after it", most)),
              ExitCode::failure);
}

std::string hostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) throw system_error("gethostname");
  return name;
}

std::optional<std::string> find_program(const std::string& program, const Env& env) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) {
    return is_executable_file(program) ? std::optional(program) : std::nullopt;
  }
  auto path = env.find("PATH");
  const std::string dirs = path != env.end() ? path->second : default_search_path();
  for (std::string_view dir : split(dirs, ':')) {
    // POSIX's legacy rule, which execvp() and so every rank follows: an empty entry is the
    // current directory.
    std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, program);
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

CommandLookup look_up_command(const std::string& word, const Env& env) {
  CommandLookup lookup{.word = word, .runnable = find_program(word, env).has_value()};
  if (lookup.runnable) return lookup;
  const PathKind kind = path_kind(word);
  lookup.exists = kind != PathKind::missing;
  lookup.in_current_dir = kind == PathKind::file && word.find('/') == std::string::npos;
  return lookup;
}

std::string self_directory() {
  std::string target(PATH_MAX, '\0');
  ssize_t n = ::readlink("/proc/self/exe", target.data(), target.size());
  if (n < 0) throw system_error("/proc/self/exe");
  target.resize(static_cast<std::size_t>(n));
  return std::filesystem::path(target).parent_path().string();
}

std::optional<int> probe_local_accelerators(const Env& env) {
  for (const auto& probe : accelerator_probes()) {
    auto path = find_program(std::string(probe.program), env);
    if (!path) continue;
    std::vector<std::string> argv{*path};
    argv.insert(argv.end(), probe.args.begin(), probe.args.end());
    // A tool that fails or finds nothing (nvidia-smi on a node without its
    // driver) says nothing about the other vendors': try the next.
    auto output = run_captured(std::move(argv), env);
    if (!output) continue;
    if (int count = probe.count(*output); count > 0) return count;
  }
  return std::nullopt;
}

int online_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

int find_free_port() {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw system_error("free port: socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;  // the kernel picks a free one
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    throw system_error("free port: bind");
  }
  socklen_t length = sizeof address;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw system_error("free port: getsockname");
  }
  return ntohs(address.sin_port);
}

std::vector<std::string> profile_paths(const Env& env) {
  std::vector<std::string> paths;
  for (const auto& dir : resolve_dirs(profile_dirs(env))) {
    for (const auto& name : yaml_names(dir)) paths.push_back(dir + "/" + name);
  }
  return paths;
}

namespace {

// Why the profile file at `path` must not be read (profile_refusal), from stat(2) of it and of
// its directory; "" when it may. The bundled ones are as trusted as the binary beside them
// (a project's shared install is its owner's, not each user's): their owner is not asked.
std::string refusal_of(const std::string& path, const std::vector<std::string>& bundled) {
  struct stat file {};
  struct stat dir {};
  const std::string parent = path.substr(0, path.rfind('/'));
  if (::stat(path.c_str(), &file) != 0 || ::stat(parent.c_str(), &dir) != 0) return "";
  const bool beside_binary = std::find(bundled.begin(), bundled.end(), parent) != bundled.end();
  const unsigned user = ::geteuid();
  return profile_refusal({.path = path,
                          .owner = beside_binary ? user : file.st_uid,
                          .mode = file.st_mode,
                          .dir_owner = beside_binary ? user : dir.st_uid,
                          .dir_mode = dir.st_mode,
                          .size = static_cast<std::uint64_t>(file.st_size),
                          .user = user});
}

}  // namespace

std::vector<ProfileFile> read_profile_files(const Env& env) {
  RealFileReader reader;
  std::vector<ProfileFile> files;
  const std::vector<std::string> bundled = resolve_dirs(bundled_dirs());
  for (std::string& path : profile_paths(env)) {
    std::string refused = refusal_of(path, bundled);
    std::string text = refused.empty() ? reader.read(path) : "";
    files.push_back({std::move(path), std::move(text), std::move(refused)});
  }
  return files;
}

bool make_directories(const std::string& path) {
  for (auto slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    if (::mkdir(path.substr(0, slash).c_str(), 0700) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) return true;
  }
}

void write_files(const std::vector<FileToWrite>& files) {
  for (const auto& file : files) {
    // Hostfiles are named by their content: an identical one is already in place,
    // and a rename costs milliseconds on some filesystems.
    if (read_file_if_present(file.path) == file.contents) continue;
    write_file(file);
  }
}

}  // namespace ezpz::sys
