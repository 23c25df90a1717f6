#pragma once
// The launch plan: everything the executor needs and nothing else. Built by
// plan_launch() (pure, lib/ezpz/plan.cpp), printed by --dry-run, run by
// lib/ezpz/sys/executor.cpp.
#include <string>
#include <vector>

#include "ezpz/env.hpp"

namespace ezpz {

struct FileToWrite {
  std::string path;
  std::string contents;
  bool operator==(const FileToWrite&) const = default;
};

struct LaunchPlan {
  std::vector<std::string> argv;  // argv[0] is the launcher, looked up on PATH
  EnvList env;                    // set on top of ezpz's own environment, in order
  std::vector<FileToWrite> files; // written (atomically) before the launcher starts
  bool operator==(const LaunchPlan&) const = default;
};

}  // namespace ezpz
