#pragma once
// The receiving side of yeet, on every node: unpack the chunk stream into a
// staging directory while it arrives, refusing anything that would write
// outside it. (The stream itself is checked by StreamHash, in the thread
// that receives it.)
#include <cstdint>
#include <string>

#include "ezpz/stage/chunks.hpp"

namespace ezpz::stage {

struct ExtractResult {
  std::string error;           // empty: extracted and verified
  std::uint64_t entries = 0;   // archive entries written
  std::uint64_t bytes = 0;     // stream bytes received
};

// Pops chunks from `in` (returning each to `pool`) and extracts them into
// `directory`, which must exist. Always reads the stream to its last chunk,
// even after an error, so the broadcast that feeds it never stalls.
// `tarball`: the stream is a user's tarball (any tar format, any compression);
// otherwise it is the uncompressed tar that stream_source() writes.
// Device nodes, FIFOs and sockets are refused (naming the entry); setuid and
// setgid bits are dropped unless `keep_setuid`.
// Changes the working directory to `directory` (libarchive extracts relative to it).
ExtractResult extract_stream(ChunkQueue& in, ChunkPool& pool, const std::string& directory,
                             bool tarball, bool keep_setuid = false);

}  // namespace ezpz::stage
