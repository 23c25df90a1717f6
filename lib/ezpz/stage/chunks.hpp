#pragma once
// The stream yeet moves: fixed-size chunks from a bounded pool, handed from
// the thread that makes them to the thread that broadcasts them and on to
// the thread that extracts them. The pool's bound is the back-pressure: a
// slow extractor stalls the broadcast instead of filling memory.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace ezpz::stage {

struct Chunk {
  std::vector<char> bytes;  // capacity: the chunk size
  std::size_t size = 0;     // bytes in use
  bool last = false;        // the stream ends with this chunk
  bool aborted = false;     // the source failed: discard everything
  std::uint32_t crc = 0;    // with `last`: crc32 of the whole stream (StreamHash)
  std::uint64_t total = 0;  // with `last`: length of the whole stream
  // On the sender only, not sent: source bytes read when this chunk was
  // handed on. Progress counts these, not stream bytes, which also hold the
  // tar headers and so would not add up to the source's size.
  std::uint64_t source_bytes = 0;
};
using ChunkPtr = std::unique_ptr<Chunk>;

// A blocking FIFO of chunks.
class ChunkQueue {
 public:
  void push(ChunkPtr chunk) {
    {
      std::lock_guard lock(mutex_);
      chunks_.push_back(std::move(chunk));
    }
    ready_.notify_one();
  }
  ChunkPtr pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [this] { return !chunks_.empty(); });
    ChunkPtr chunk = std::move(chunks_.front());
    chunks_.pop_front();
    return chunk;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<ChunkPtr> chunks_;
};

// `count` chunks of `size` bytes, allocated once; take() waits for a free one.
class ChunkPool {
 public:
  ChunkPool(std::size_t count, std::size_t size) {
    for (std::size_t i = 0; i < count; ++i) {
      auto chunk = std::make_unique<Chunk>();
      chunk->bytes.resize(size);
      free_.push(std::move(chunk));
    }
  }
  ChunkPtr take() {
    ChunkPtr chunk = free_.pop();
    chunk->size = 0;
    chunk->last = chunk->aborted = false;
    chunk->crc = 0;
    chunk->total = 0;
    return chunk;
  }
  void give(ChunkPtr chunk) { free_.push(std::move(chunk)); }

 private:
  ChunkQueue free_;
};

}  // namespace ezpz::stage
