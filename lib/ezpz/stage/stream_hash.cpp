#include "ezpz/stage/stream_hash.hpp"

#include <fmt/format.h>
#include <zlib.h>

namespace ezpz::stage {

StreamHash::StreamHash() : crc_(static_cast<std::uint32_t>(crc32(0L, Z_NULL, 0))) {}

void StreamHash::add(const Chunk& chunk) {
  crc_ = static_cast<std::uint32_t>(crc32(crc_, reinterpret_cast<const Bytef*>(chunk.bytes.data()),
                                          static_cast<uInt>(chunk.size)));
  bytes_ += chunk.size;
}

void StreamHash::seal(Chunk& last) const {
  last.crc = crc_;
  last.total = bytes_;
}

std::string StreamHash::mismatch(const Chunk& last) const {
  if (last.crc == crc_ && last.total == bytes_) return "";
  return fmt::format("stream check failed: received {} bytes with crc32 {:08x}, sent {} bytes "
                     "with crc32 {:08x}",
                     bytes_, crc_, last.total, last.crc);
}

}  // namespace ezpz::stage
