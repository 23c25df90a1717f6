// No scheduler: this host alone.
#include "schedulers/scheduler.hpp"

namespace ezpz {
namespace {

std::optional<std::string> detect_local(const Env&) {
  return std::string("no PBS or Slurm job variables are set");
}

Allocation read_local(const Env&, const FileReader&, const CommandReader&,
                      std::string_view hostname) {
  Allocation allocation;
  allocation.hosts = {std::string(hostname)};
  return allocation;
}

}  // namespace

const SchedulerSpec k_local{SchedulerKind::local, detect_local, read_local};

}  // namespace ezpz
