#include "transfer.hpp"

#include <thread>

#include "ezpz/stage/stream_hash.hpp"
#include "mpi_comm.hpp"

namespace ezpz::stager {
namespace {

// What precedes each chunk on the wire.
struct WireHeader {
  std::uint64_t size = 0;
  std::uint64_t total = 0;
  std::uint32_t crc = 0;
  std::uint8_t last = 0;
  std::uint8_t aborted = 0;
};

WireHeader header_of(const stage::Chunk& chunk) {
  return {chunk.size, chunk.total, chunk.crc, chunk.last, chunk.aborted};
}

void apply_header(const WireHeader& header, stage::Chunk& chunk) {
  chunk.size = header.size;
  chunk.total = header.total;
  chunk.crc = header.crc;
  chunk.last = header.last != 0;
  chunk.aborted = header.aborted != 0;
}

// Sends one chunk (header, then bytes) or, away from rank 0, receives it in place.
void broadcast_chunk(stage::Chunk& chunk, bool sender, MPI_Comm comm) {
  WireHeader header = sender ? header_of(chunk) : WireHeader{};
  broadcast(&header, sizeof header, comm);
  if (!sender) apply_header(header, chunk);
  if (chunk.size > 0) broadcast(chunk.bytes.data(), static_cast<int>(chunk.size), comm);
}

}  // namespace

StreamOutcome run_stream(MPI_Comm comm, const stage::SourceScan* scan,
                         const StreamSettings& settings, const std::string& staging,
                         const std::function<void(std::uint64_t)>& source_sent) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const bool sender = rank == 0;
  // Alone, rank 0 sends to nobody: no transport to check, no crc to pay for.
  const bool hashing = size > 1;
  stage::ChunkPool pool(static_cast<std::size_t>(settings.chunks_in_flight), settings.chunk_size);
  stage::ChunkQueue produced;
  stage::ChunkQueue to_extract;
  StreamOutcome outcome;
  const bool extract_here = !staging.empty();

  std::thread reader;
  if (sender) {
    reader = std::thread([&] {
      outcome.sent = stage::stream_source(*scan, pool, produced, settings.bytes_per_second);
    });
  }
  std::thread extractor;
  if (extract_here) {
    extractor = std::thread([&] {
      outcome.extracted =
          stage::extract_stream(to_extract, pool, staging, settings.tarball, settings.keep_setuid);
    });
  }
  stage::StreamHash hash;
  for (bool last = false; !last;) {
    stage::ChunkPtr chunk = sender ? produced.pop() : pool.take();
    if (sender && hashing) {
      hash.add(*chunk);
      if (chunk->last) hash.seal(*chunk);
    }
    broadcast_chunk(*chunk, sender, comm);
    if (!sender) hash.add(*chunk);
    last = chunk->last;
    if (last && !sender) outcome.stream_error = hash.mismatch(*chunk);
    if (sender && source_sent) source_sent(chunk->source_bytes);
    if (extract_here) {
      to_extract.push(std::move(chunk));
    } else {
      pool.give(std::move(chunk));
    }
  }
  if (reader.joinable()) reader.join();
  if (extractor.joinable()) extractor.join();
  outcome.crc = hash.crc();
  outcome.hashed = hashing;
  return outcome;
}

}  // namespace ezpz::stager
