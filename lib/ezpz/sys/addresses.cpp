#include "ezpz/sys/addresses.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "ezpz/core/allocation.hpp"

namespace ezpz::sys {
namespace {

// The name the resolver gives `address` (/etc/hosts, DNS); empty when none.
std::string name_of(const std::string& address) {
  sockaddr_storage ss{};
  socklen_t length = 0;
  auto* in4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, address.c_str(), &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, address.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    length = sizeof(sockaddr_in6);
  } else {
    return "";
  }
  char name[NI_MAXHOST];
  const int rc = getnameinfo(reinterpret_cast<sockaddr*>(&ss), length, name, sizeof(name), nullptr,
                             0, NI_NAMEREQD);
  return rc == 0 ? name : "";
}

// Every address `host` resolves to, as inet_ntop writes them.
std::vector<std::string> addresses_of(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return {};
  std::vector<std::string> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw =
        a->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
    if (inet_ntop(a->ai_family, raw, text, sizeof(text))) addresses.emplace_back(text);
  }
  freeaddrinfo(found);
  return addresses;
}

std::string host_named(const std::vector<std::string>& hosts, std::string_view name) {
  auto host = std::find_if(hosts.begin(), hosts.end(), [&](const std::string& h) {
    return short_host_name(h) == short_host_name(name);
  });
  return host == hosts.end() ? "" : *host;
}

}  // namespace

AddressHosts hosts_at_addresses(const std::vector<std::string>& addresses,
                                const std::vector<std::string>& hosts) {
  AddressHosts found;
  std::map<std::string, std::vector<std::string>> resolved;  // each host resolved once
  for (const std::string& address : addresses) {
    const std::string name = name_of(address);
    std::string host = name.empty() ? "" : host_named(hosts, name);
    for (auto h = hosts.begin(); host.empty() && h != hosts.end(); ++h) {
      auto [at, fresh] = resolved.try_emplace(*h);
      if (fresh) at->second = addresses_of(*h);
      if (std::find(at->second.begin(), at->second.end(), address) != at->second.end()) host = *h;
    }
    if (!host.empty()) found.emplace(address, std::move(host));
  }
  return found;
}

}  // namespace ezpz::sys
