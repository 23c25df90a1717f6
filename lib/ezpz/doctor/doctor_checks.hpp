#pragma once
// The doctor's checks, one function each, for run_checks() (doctor.cpp) to
// call in report order. Internal to lib/ezpz/doctor/; tests go through
// run_checks().
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/doctor/doctor.hpp"

namespace ezpz::doctor {

// About the job: doctor.cpp, and doctor_launcher.cpp.
CheckResult check_scheduler(const Snapshot& s, const Derived& d);
CheckResult check_allocation(const Snapshot& s, const Derived& d);
CheckResult check_profile(const Snapshot& s, const Derived& d);
CheckResult check_launcher(const Snapshot& s, const Derived& d);

// About this node: doctor_gpus.cpp, and doctor_node.cpp.
CheckResult check_gpus(const Snapshot& s, const Derived& d);
CheckResult check_libraries(const Snapshot& s, const Derived& d);
CheckResult check_trainer(const Snapshot& s, const Derived& d);
CheckResult check_storage(const Snapshot& s, const Derived& d);
CheckResult check_limits(const Snapshot& s, const Derived& d);
CheckResult check_port(const Snapshot& s, const Derived& d);
CheckResult check_python(const Snapshot& s, const Derived& d);
CheckResult check_tracking(const Snapshot& s, const Derived& d);
CheckResult check_stacks(const Snapshot& s, const Derived& d);

// About the ranks' Python and the module system: doctor_python.cpp.
CheckResult check_torch(const Snapshot& s, const Derived& d);
CheckResult check_modules(const Snapshot& s, const Derived& d);

// Shared wording.
CheckResult result(std::string_view name, Status status, std::string message,
                   std::string remedy = "");
// The first non-blank line of `text`, trimmed ("" when none).
std::string first_line(std::string_view text);
// "a, b, c" for up to `shown` items, then " and N more".
std::string list_some(const std::vector<std::string>& items, std::size_t shown = 5);
// For the context block: "MPICH Hydra 4.0.2 (/usr/bin/mpiexec)", "mpiexec not on PATH", ...
std::string describe_launcher(const Snapshot& s);
// The libtorch version `ezpz-smoke --probe` reported, or "".
std::string libtorch_version(const ProgramRun& probe);
// The torch version the ranks' python3 imported, or "".
std::string torch_version(const Snapshot& s);
// Why a helper program did not succeed ("exit 1: <first stderr line>", "did not finish
// within 20 s", ...); empty when it exited 0.
std::string run_failure(const ProgramRun& run);

}  // namespace ezpz::doctor
