#pragma once
// The source side of yeet, on the one rank that reads it: scan the tree (or
// the tarball) once, fingerprint it, then stream it as a tar archive into
// chunks. Every source byte is read exactly once, here.
#include <cstdint>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "ezpz/core/error.hpp"
#include "ezpz/stage/chunks.hpp"

namespace ezpz::stage {

struct SourceEntry {
  std::string relative;     // path inside the source ("" is never used)
  struct stat st {};
  std::string link_target;  // symlinks only
};

struct SourceScan {
  std::string root;  // the directory or the tarball
  bool tarball = false;
  std::vector<SourceEntry> entries;  // sorted: a directory before its contents
  // File data as it is read and sent: a hard-linked file's once (the
  // tarball's size for a tarball).
  std::uint64_t content_bytes = 0;
  std::string fingerprint;
};

// A source entry yeet will not copy (a device node, FIFO or socket): bad
// input, refused before anything is sent.
class RefusedEntry : public Error {
 public:
  using Error::Error;
};

// Walks `path` with lstat (symlinks are kept, never followed). With `checksum`
// the fingerprint covers file contents too (one extra read of the source).
// Throws Error naming the path that cannot be read, RefusedEntry naming one
// that yeet refuses.
SourceScan scan_source(const std::string& path, bool checksum);

struct StreamResult {
  std::uint64_t source_bytes_read = 0;  // counted at read(2)
  std::uint64_t stream_bytes = 0;
  std::string error;  // empty when the whole source was streamed
};

// Streams the scanned source into chunks from `pool`, pushed onto `out`; the
// last chunk is marked `aborted` when the source failed.
// `bytes_per_second` > 0 limits the read rate (rsync's --bwlimit).
StreamResult stream_source(const SourceScan& scan, ChunkPool& pool, ChunkQueue& out,
                           double bytes_per_second);

}  // namespace ezpz::stage
