#pragma once
// The stream phase: rank 0 reads the source once and broadcasts it in
// chunks; every rank that needs a copy extracts while the next chunk is on
// the wire. Three threads at most, and only this one calls MPI.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <mpi.h>

#include "ezpz/stage/extract.hpp"
#include "ezpz/stage/source.hpp"

namespace ezpz::stager {

struct StreamSettings {
  std::size_t chunk_size = 4u << 20;
  int chunks_in_flight = 8;
  double bytes_per_second = 0;  // --bwlimit; 0: unlimited
  bool tarball = false;
  bool keep_setuid = false;  // --keep-setuid: else setuid/setgid bits are dropped
};

struct StreamOutcome {
  std::optional<stage::ExtractResult> extracted;  // when this rank extracted
  stage::StreamResult sent;                       // rank 0 only
  std::uint32_t crc = 0;                          // of the stream, as sent or received
  bool hashed = true;                             // false: one rank, nothing sent
  std::string stream_error;                       // received != sent
};

// Collective over `comm` (rank 0 is the sender, and `scan` is only read
// there). `staging` empty: this rank only relays or receives nothing of its own.
// `source_sent(n)` is called on rank 0 after each chunk with the source bytes
// it carried so far, for progress.
StreamOutcome run_stream(MPI_Comm comm, const stage::SourceScan* scan,
                         const StreamSettings& settings, const std::string& staging,
                         const std::function<void(std::uint64_t)>& source_sent);

}  // namespace ezpz::stager
