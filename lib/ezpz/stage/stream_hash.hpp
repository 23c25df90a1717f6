#pragma once
// The check that every node received exactly what rank 0 sent: a crc32 of
// the whole stream, computed by the broadcasting thread on both sides (not
// by the extractor, which has enough to do) and carried by the last chunk.
#include <cstdint>
#include <string>

#include "ezpz/stage/chunks.hpp"

namespace ezpz::stage {

class StreamHash {
 public:
  StreamHash();
  void add(const Chunk& chunk);
  std::uint32_t crc() const { return crc_; }
  std::uint64_t bytes() const { return bytes_; }
  // Sender: the last chunk carries the whole stream's crc32 and length.
  void seal(Chunk& last) const;
  // Receiver, after add(last): "" when the stream matches what was sent.
  std::string mismatch(const Chunk& last) const;

 private:
  std::uint32_t crc_;
  std::uint64_t bytes_ = 0;
};

}  // namespace ezpz::stage
