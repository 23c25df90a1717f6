#include "ezpz/doctor/this_host.hpp"

#include <algorithm>

#include "ezpz/core/allocation.hpp"

namespace ezpz::doctor {

bool lists_this_host(const std::vector<std::string>& hosts, std::string_view hostname,
                     const std::function<std::vector<HostLookup>()>& look_up) {
  if (hostname.empty() || lists_host(hosts, hostname)) return true;
  const auto here = [](const HostLookup& l) {
    return l.result == HostLookup::Result::resolved && loopback_address(l.detail);
  };
  const std::vector<HostLookup> lookups = look_up();
  return std::any_of(lookups.begin(), lookups.end(), here);
}

}  // namespace ezpz::doctor
