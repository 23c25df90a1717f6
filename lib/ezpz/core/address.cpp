#include "ezpz/core/address.hpp"

namespace ezpz {
namespace {

bool ipv4_number(std::string_view label) {
  if (label.empty() || label.size() > 3) return false;
  int value = 0;
  for (char c : label) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value <= 255;
}

// No allocation: every line of a nodefile of 10,000+ lines is asked on every launch.
bool ipv4_literal(std::string_view host) {
  for (int labels = 1;; ++labels) {
    const std::size_t dot = host.find('.');
    if (!ipv4_number(host.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return labels == 4;
    host.remove_prefix(dot + 1);
  }
}

}  // namespace

bool ip_literal(std::string_view host) {
  return host.find(':') != std::string_view::npos || ipv4_literal(host);
}

bool loopback_address(std::string_view address) {
  return address.starts_with("127.") || address == "localhost" || address == "::1";
}

}  // namespace ezpz
