// Running doctor's helper programs (`ezpz-smoke --probe`, `mpiexec --version`)
// with their output captured and a deadline.
#include "ezpz/sys/doctor_probes.hpp"
#include "ezpz/sys/spawn.hpp"

namespace ezpz::sys {
namespace {

using Clock = std::chrono::steady_clock;

doctor::ProgramRun finish(CapturedChild child, doctor::ProgramRun run, Clock::time_point deadline) {
  CapturedRun done = finish_captured(child, deadline);
  run.timed_out = done.timed_out;
  run.exit_code = done.exit_code;
  run.signal = done.signal;
  run.out = std::move(done.out);
  run.err = std::move(done.err);
  return run;
}

}  // namespace

std::future<doctor::ProgramRun> start_program(std::vector<std::string> argv, const Env& env,
                                              std::chrono::milliseconds timeout) {
  doctor::ProgramRun run;
  run.path = argv.empty() ? "" : argv[0];
  run.timeout_s = std::chrono::duration<double>(timeout).count();
  // Started here, in the caller's thread, so it starts now; waited for in another.
  CapturedChild child = start_captured(argv, env);
  run.start_error = child.start_error;
  if (!run.start_error.empty()) {
    std::promise<doctor::ProgramRun> failed;
    failed.set_value(run);
    return failed.get_future();
  }
  return std::async(std::launch::async, finish, std::move(child), std::move(run),
                    Clock::now() + timeout);
}

}  // namespace ezpz::sys
