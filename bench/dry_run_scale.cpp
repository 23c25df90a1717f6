// dry_run_scale: ezpz launch --dry-run against allocation size, 2 to 10,000 hosts
// (bench/README.md).
#include <cstdio>
#include <filesystem>

#include "benchmarks.hpp"

namespace ezpz::bench {
namespace {

// Polaris-style FQDNs: x<rack>c<chassis>s<slot>b0n0.hsn.cm.polaris.alcf.anl.gov.
std::string polaris_host(int i) {
  char name[96];
  std::snprintf(name, sizeof name, "x%04dc%ds%db0n0.hsn.cm.polaris.alcf.anl.gov", 3000 + i / 56,
                (i / 8) % 7, i % 8);
  return name;
}

// Written line by line: the harness must stay small, because a child it
// spawns inherits its peak RSS (see the note printed under the tables).
void write_nodefile(const std::string& path, int hosts, int repeats) {
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) die("cannot write " + path);
  for (int i = 0; i < hosts; ++i) {
    std::string host = polaris_host(i);
    for (int r = 0; r < repeats; ++r) std::fprintf(out, "%s\n", host.c_str());
  }
  if (std::fclose(out) != 0) die("cannot write " + path);
}

}  // namespace

std::vector<Group> dry_run_scale_groups(const Setup& s) {
  const std::vector<std::string> env = base_env(s);
  const std::string dir = s.scratch;
  write_nodefile(dir + "/nodefile-2", 2, 1);
  write_nodefile(dir + "/nodefile-10k", 10000, 1);
  write_nodefile(dir + "/nodefile-10k-x4", 10000, 4);

  auto pbs = [&](const std::string& nodefile) {
    return with(env, {"PBS_JOBID=8123456.polaris-pbs-01.hsn.cm.polaris.alcf.anl.gov",
                      "PBS_NODEFILE=" + dir + "/" + nodefile, "EZPZ_MACHINE=polaris"});
  };
  const std::vector<std::string> slurm =
      with(env, {"SLURM_JOB_ID=1", "SLURM_JOB_NODELIST=x[00000-09999]"});
  const std::vector<std::string> command = {"--", "python3", "train.py"};
  auto dry = [&](std::vector<std::string> extra) {
    return concat(concat({s.ezpz, "launch", "--dry-run"}, extra), command);
  };
  auto big = [](Case c) {
    c.max_median = 50;
    c.max_rss_mb = 20;
    return c;
  };

  Group g{"dry_run_scale", "ezpz launch --dry-run against allocation size", env, {}, {}};
  Case true_case{"/bin/true", {{"/bin/true"}, env}};
  true_case.baseline = true;
  g.cases.push_back(true_case);
  Case cat{"cat nodefile-10k >/dev/null", {{"/bin/cat", dir + "/nodefile-10k"}, env}};
  g.cases.push_back(cat);
  Case small{"PBS 2 hosts (polaris)", {dry({}), pbs("nodefile-2")}};
  small.max_median = 5;
  g.cases.push_back(small);
  g.cases.push_back(big({"PBS 10k hosts, nodefile used as is", {dry({}), pbs("nodefile-10k")}}));
  g.cases.push_back(
      big({"PBS 10k hosts x4 slots (writes hostfile)", {dry({}), pbs("nodefile-10k-x4")}}));
  g.cases.push_back(big(
      {"PBS 10k hosts --nhosts 9999 (writes)", {dry({"--nhosts", "9999"}), pbs("nodefile-10k")}}));
  g.cases.push_back(big({"PBS 10k hosts --exclude 1 (writes)",
                         {dry({"--exclude", polaris_host(5000)}), pbs("nodefile-10k")}}));
  g.cases.push_back(big({"PBS 10k hosts --json", {dry({"--json"}), pbs("nodefile-10k")}}));
  g.cases.push_back(big({"Slurm x[00000-09999]", {dry({}), slurm}}));
  g.cases.push_back(
      big({"Slurm x[00000-09999] --exclude 1", {dry({"--exclude", "x05000"}), slurm}}));
  g.notes.push_back("nodefiles: " + dir + "/nodefile-{2,10k,10k-x4} (Polaris-style FQDNs, " +
                    std::to_string(std::filesystem::file_size(dir + "/nodefile-10k")) +
                    " bytes for 10k); " + "written hostfiles go to EZPZ_RUN_DIR=" + dir + "/run");
  return {g};
}

}  // namespace ezpz::bench
