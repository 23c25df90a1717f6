// The record's floor of free space (issue 45): what it may still write, and what it gives back.
#include "ezpz/output/record_floor.hpp"

#include <cstdint>
#include <vector>

#include "tests/catch.hpp"

using namespace ezpz::output;

TEST_CASE("the record writes only above its floor, and gives back what it took below", "[record]") {
  constexpr std::uint64_t MiB = 1 << 20;
  struct Row {
    const char* what;
    std::uint64_t free, floor, record, room, back;
  };
  const std::vector<Row> rows = {
      {"plenty free", 10 * 1024 * MiB, 1024 * MiB, 0, 9 * 1024 * MiB, 0},
      {"exactly at the floor", 1024 * MiB, 1024 * MiB, 5 * MiB, 0, 0},
      {"an 8 MiB filesystem, the default floor: nothing, all of it back", 6 * MiB, 1024 * MiB,
       3 * MiB, 0, 3 * MiB},
      {"below the floor by less than the record holds", 3 * MiB, 4 * MiB, 10 * MiB, 0, MiB},
      {"no floor", 0, 0, 7 * MiB, 0, 0},
      {"no floor, space free", 5 * MiB, 0, 7 * MiB, 5 * MiB, 0},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    CHECK(record_disk_room(row.free, row.floor) == row.room);
    CHECK(record_give_back(row.free, row.floor, row.record) == row.back);
  }
}
