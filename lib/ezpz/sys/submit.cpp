#include "ezpz/sys/submit.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "ezpz/error.hpp"
#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {
namespace {

[[noreturn]] void fail(std::string_view origin, const std::string& path, int error) {
  throw Error(fmt::format("{}: {}: {}", origin, path, std::strerror(error)), ExitCode::failure);
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

}  // namespace

ScratchDirectory::ScratchDirectory(const Env& env) {
  std::string base = get_nonempty(env, "TMPDIR").value_or("/tmp");
  std::string pattern = base + "/ezpz-submit.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) fail("submit: temporary directory", pattern, errno);
  path_ = pattern;
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ignored;  // nothing to do about a leftover in $TMPDIR while unwinding
  std::filesystem::remove_all(path_, ignored);
}

void write_script(const std::string& path, std::string_view text, std::string_view origin) {
  std::string temp = path + ".XXXXXX";
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) fail(origin, path, errno);
  // mkostemp makes 0600; a script is read by whoever runs the job.
  bool ok = ::fchmod(fd, 0644) == 0 && write_all(fd, text);
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
  fail(origin, path, error);
}

SubmitOutcome run_submitter(const std::string& program, const std::string& script_path,
                            const ScratchDirectory& scratch, const Env& env) {
  ProcessOptions options;
  options.stdout_path = scratch.path() + "/submitter.out";
  ProcessExecutor executor(env, options);
  int code = executor.run(LaunchPlan{{program, script_path}, {}, {}});
  return {code, read_file_if_present(options.stdout_path).value_or("")};
}

}  // namespace ezpz::sys
