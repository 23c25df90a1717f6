#pragma once
// Stacks of hung ranks, this node's half (`ezpz stacks --on-node`): finds the ranks of a run
// among this node's processes and takes each one's stacks without stopping it. Python ranks
// that loaded ezpz's hook (share/python/sitecustomize.py) get every thread's Python stack from
// faulthandler on SIGQUIT; every other rank gets the native stacks of all its threads from
// eu-stack (elfutils), else gdb.
#include <optional>
#include <string>
#include <vector>

#include "ezpz/core/env.hpp"
#include "ezpz/supervise/kill.hpp"

namespace ezpz::sys {

// Rank `run_id`'s stacks on this node as stacks::tag_lines prints them, each rank's text
// headed "# rank K (pid P) on NODE: HOW". Ranks are the topmost processes of the run that
// have a rank (their RANK, else EZPZ_LAUNCHER's variables as ezpz-rankenv maps them), never a
// launcher (torchrun included) or ezpz-rankenv itself.
std::string node_stacks(const std::string& run_id, const std::string& node, const Env& env);

// The ranks of run `run_id` on node `node`, found as node_stacks finds them, ordered by rank
// (each process's command is prefixed "rank K: "): what `ezpz kill --on-node --ranks-only`
// signals for --signal's warning.
std::vector<kill::Process> node_ranks(const std::string& run_id, const std::string& node);

// Where eu-stack, else gdb, is, for native stacks; nullopt when neither is on PATH (doctor
// says so).
std::optional<std::string> native_stack_tool(const Env& env);

}  // namespace ezpz::sys
