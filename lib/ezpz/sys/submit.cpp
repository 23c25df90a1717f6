#include "ezpz/sys/submit.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/sys/executor.hpp"
#include "ezpz/sys/world.hpp"

namespace ezpz::sys {

void write_script(const std::string& path, std::string_view text, std::string_view origin) {
  try {
    write_files({{path, std::string(text), 0644}});  // read by whoever runs the job
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", origin, e.what()), e.code());
  }
}

SubmitOutcome run_submitter(const std::string& program, const std::string& script_path,
                            const ScratchDirectory& scratch, const Env& env) {
  ProcessOptions options;
  options.stdout_path = scratch.path() + "/submitter.out";
  ProcessExecutor executor(env, options);
  int code = executor.run(LaunchPlan{{program, script_path}, {}, {}});
  return {code, read_file_if_present(options.stdout_path).value_or("")};
}

bool is_regular_file(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

}  // namespace ezpz::sys
