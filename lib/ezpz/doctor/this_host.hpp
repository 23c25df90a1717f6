#pragma once
// Whether a PBS nodefile lists the host ezpz runs on: the launch's warning and the doctor's
// allocation check ask the same question (PBS_JOBID and PBS_NODEFILE kept from another job).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ezpz/doctor/doctor.hpp"

namespace ezpz::doctor {

// One of `hosts` names `hostname` (by short name), or resolves to a loopback address (simulated
// nodes n01.. on one machine). `look_up` gives the hosts' look-ups; it is asked only when no
// name matches, so a launch on a listed host does no DNS. An unknown hostname ("") counts as
// listed: there is nothing to judge.
bool lists_this_host(const std::vector<std::string>& hosts, std::string_view hostname,
                     const std::function<std::vector<HostLookup>()>& look_up);

}  // namespace ezpz::doctor
