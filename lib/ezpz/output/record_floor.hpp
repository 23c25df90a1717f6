#pragma once
// The run record yields to the job (issue 45): it leaves a floor of free space on its
// filesystem, stops writing before it, and gives back what it wrote past it. A checkpoint
// written beside a chatty job's record failed on a small filesystem while the record grew.
#include <cstdint>

namespace ezpz::output {

// The floor's default: the record never leaves less than this free. A checkpoint of a large
// model is gigabytes, but the record is a convenience: on a filesystem this full it keeps
// nothing, and the job has every byte.
inline constexpr std::uint64_t k_default_record_floor = std::uint64_t{1} << 30;

// How often the free space is looked at again, in bytes recorded: between two looks the record
// may take at most this much of what the job needs (the floor is far larger).
inline constexpr std::uint64_t k_floor_check_bytes = std::uint64_t{4} << 20;

// How much more the record may write, with `free_bytes` free and `floor` to leave; 0: none.
std::uint64_t record_disk_room(std::uint64_t free_bytes, std::uint64_t floor);

// How much of its `record_size` bytes the record gives back (truncates), with `free_bytes` free
// and `floor` to leave: what it took past the floor, never more than it holds.
std::uint64_t record_give_back(std::uint64_t free_bytes, std::uint64_t floor,
                               std::uint64_t record_size);

}  // namespace ezpz::output
