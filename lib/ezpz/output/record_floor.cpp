#include "ezpz/output/record_floor.hpp"

#include <algorithm>

namespace ezpz::output {

std::uint64_t record_disk_room(std::uint64_t free_bytes, std::uint64_t floor) {
  return free_bytes > floor ? free_bytes - floor : 0;
}

std::uint64_t record_give_back(std::uint64_t free_bytes, std::uint64_t floor,
                               std::uint64_t record_size) {
  return free_bytes >= floor ? 0 : std::min(record_size, floor - free_bytes);
}

}  // namespace ezpz::output
