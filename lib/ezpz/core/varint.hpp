#pragma once
// Unsigned LEB128 (7 bits a byte, low first), the lengths and numbers of ezpz's binary
// records: the rank index of a run's output and the parsed-profile cache.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ezpz {

// The most bytes of one varint.
inline constexpr std::size_t k_varint_max = 10;

// Writes `value` at `out` (room for k_varint_max bytes); returns the end of what it wrote.
inline char* write_varint(char* out, std::uint64_t value) {
  for (; value >= 0x80; value >>= 7) *out++ = static_cast<char>((value & 0x7f) | 0x80);
  *out++ = static_cast<char>(value);
  return out;
}

inline void append_varint(std::string& out, std::uint64_t value) {
  char bytes[k_varint_max];
  out.append(bytes, write_varint(bytes, value));
}

// Reads one varint off the front of `in`; nullopt when it is cut short or too long.
inline std::optional<std::uint64_t> take_varint(std::string_view& in) {
  std::uint64_t value = 0;
  for (unsigned shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return value;
  }
  return std::nullopt;
}

}  // namespace ezpz
