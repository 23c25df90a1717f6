#include "ezpz/stage/extract.hpp"

#include <cerrno>
#include <cstring>

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>
#include <unistd.h>

#include "ezpz/stage/yeet.hpp"

namespace ezpz::stage {
namespace {

// Refuse "../x", "/x" and writing through a symlink; keep modes and times.
// Symlinks themselves may point anywhere (a venv's bin/python -> /usr/bin/python3).
constexpr int k_extract_flags = ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS;

// Feeds libarchive from the chunk queue and keeps the receiving side's crc.
struct StreamReader {
  ChunkQueue& in;
  ChunkPool& pool;
  ChunkPtr current;
  bool ended = false;
  bool aborted = false;
  std::uint64_t bytes = 0;

  // The next chunk's bytes, or an empty view at the end of the stream.
  std::pair<const char*, std::size_t> next() {
    if (current) pool.give(std::move(current));
    if (ended) return {nullptr, 0};
    current = in.pop();
    bytes += current->size;
    if (current->last) {
      ended = true;
      aborted = current->aborted;
    }
    return {current->bytes.data(), current->size};
  }
  void drain() {
    while (!ended) next();
    if (current) pool.give(std::move(current));
  }
};

la_ssize_t read_from_chunks(struct archive*, void* context, const void** buffer) {
  auto* reader = static_cast<StreamReader*>(context);
  auto [data, size] = reader->next();
  if (reader->aborted) return ARCHIVE_FATAL;
  *buffer = data;
  return static_cast<la_ssize_t>(size);
}

std::string archive_problem(struct archive* archive) {
  const char* text = archive_error_string(archive);
  std::string problem = text ? text : "unknown libarchive error";
  int error = archive_errno(archive);
  // libarchive's text for a failed write is only "Write failed": say why.
  if (error > 0 && problem.find(std::strerror(error)) == std::string::npos) {
    problem += fmt::format(" ({})", std::strerror(error));
  }
  return problem;
}

struct Archives {
  struct archive* in = archive_read_new();
  struct archive* disk = archive_write_disk_new();
  ~Archives() {
    archive_read_free(in);
    archive_write_free(disk);
  }
  Archives() = default;
  Archives(const Archives&) = delete;
  Archives& operator=(const Archives&) = delete;
};

std::string copy_data(struct archive* in, struct archive* disk) {
  const void* block = nullptr;
  std::size_t size = 0;
  la_int64_t offset = 0;
  for (;;) {
    int status = archive_read_data_block(in, &block, &size, &offset);
    if (status == ARCHIVE_EOF) return "";
    if (status < ARCHIVE_WARN) return archive_problem(in);
    // A failed write (a full disk) is only ARCHIVE_WARN to libarchive; a copy
    // missing bytes is a failure here.
    if (archive_write_data_block(disk, block, size, offset) != ARCHIVE_OK) {
      return archive_problem(disk);
    }
  }
}

// What every node enforces, whatever the stream holds: libarchive's disk
// writer makes a device node for any entry that says it is one (no flag turns
// that off), and keeps setuid bits on files it writes as root.
std::string admit(struct archive_entry* entry, bool keep_setuid) {
  if (auto why = yeet::refused_entry_type(archive_entry_mode(entry))) return *why;
  archive_entry_set_perm(entry, yeet::staged_mode(archive_entry_perm(entry), keep_setuid));
  return "";
}

// Extracts every entry; returns the first problem, or "".
std::string extract_entries(Archives& a, ExtractResult& result, bool keep_setuid) {
  struct archive_entry* entry = nullptr;
  for (;;) {
    int status = archive_read_next_header(a.in, &entry);
    if (status == ARCHIVE_EOF) break;
    if (status < ARCHIVE_WARN) return fmt::format("reading the stream: {}", archive_problem(a.in));
    std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "?";
    if (std::string refused = admit(entry, keep_setuid); !refused.empty()) {
      return fmt::format("{}: {}", name, refused);
    }
    if (archive_write_header(a.disk, entry) != ARCHIVE_OK) {
      return fmt::format("{}: {}", name, archive_problem(a.disk));
    }
    if (archive_entry_size(entry) > 0) {
      std::string problem = copy_data(a.in, a.disk);
      if (!problem.empty()) return fmt::format("{}: {}", name, problem);
    }
    if (archive_write_finish_entry(a.disk) != ARCHIVE_OK) {
      return fmt::format("{}: {}", name, archive_problem(a.disk));
    }
    ++result.entries;
  }
  // Directory modes and times are applied last, here.
  if (archive_write_close(a.disk) != ARCHIVE_OK) return archive_problem(a.disk);
  return "";
}

std::string open_stream(Archives& a, StreamReader& reader, bool tarball) {
  if (tarball) {
    archive_read_support_filter_all(a.in);
  }
  archive_read_support_format_tar(a.in);
  archive_write_disk_set_options(a.disk, k_extract_flags);
  if (archive_read_open(a.in, &reader, nullptr, read_from_chunks, nullptr) != ARCHIVE_OK) {
    return fmt::format("reading the stream: {}", archive_problem(a.in));
  }
  return "";
}

}  // namespace

ExtractResult extract_stream(ChunkQueue& in, ChunkPool& pool, const std::string& directory,
                             bool tarball, bool keep_setuid) {
  ExtractResult result;
  StreamReader reader{in, pool, nullptr};
  if (::chdir(directory.c_str()) != 0) {
    result.error = fmt::format("{}: {}", directory, std::strerror(errno));
  } else {
    Archives archives;
    result.error = open_stream(archives, reader, tarball);
    if (result.error.empty()) result.error = extract_entries(archives, result, keep_setuid);
  }
  reader.drain();
  result.bytes = reader.bytes;
  if (reader.aborted) result.error = "the source could not be read (see the first node's message)";
  return result;
}

}  // namespace ezpz::stage
