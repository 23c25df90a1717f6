// doctor: `ezpz doctor` against importing torch (issue 6; bench/README.md).
#include "benchmarks.hpp"

namespace ezpz::bench {

// `ezpz doctor` (no --deep) against the least the Python ezpz's doctor pays
// before its first check: starting Python and importing torch with
// torch.distributed. ezpz-smoke --probe (loading libtorch, which doctor runs
// beside every other probe) is the floor.
std::vector<Group> doctor_groups(const Setup& s) {
  const std::vector<std::string> env = base_env(s);
  Group g{"doctor",
          "ezpz doctor (every check, the trainer probe included) vs importing torch",
          env,
          {},
          {}};
  g.default_runs = 20;
  Case python{"python3 -c 'import torch, torch.distributed'",
              {{s.python, "-c", "import torch, torch.distributed"}, env}};
  python.baseline = true;
  g.cases.push_back(python);
  if (!s.smoke.empty()) {
    g.cases.push_back({"ezpz-smoke --probe (loads libtorch)", {{s.smoke, "--probe"}, env}});
  }
  Case doctor{"ezpz doctor", {{s.ezpz, "doctor"}, env}};
  doctor.max_median = 600;
  g.cases.push_back(doctor);
  g.cases.push_back({"ezpz doctor --json", {{s.ezpz, "doctor", "--json"}, env}});
  g.notes.push_back(
      "doctor runs ezpz-smoke --probe, mpiexec --version, name look-ups and the "
      "other probes at once; see bench/README.md");
  return {g};
}

std::string doctor_missing(const Setup& s) {
  if (!is_executable(s.python)) return s.python + " not found (apt-get install python3-torch)";
  if (!exits_zero({{s.python, "-c", "import torch, torch.distributed"}, base_env(s)})) {
    return s.python + " cannot import torch (apt-get install python3-torch)";
  }
  return "";
}

}  // namespace ezpz::bench
