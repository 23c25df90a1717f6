#include "ezpz/stage/source.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include "ezpz/core/error.hpp"
#include "ezpz/stage/yeet.hpp"

namespace ezpz::stage {
namespace fs = std::filesystem;
namespace {

std::string errno_text(int error) { return std::strerror(error); }

std::string link_target(const std::string& path) {
  std::string target(PATH_MAX, '\0');
  ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
  if (n < 0) throw Error(fmt::format("{}: {}", path, errno_text(errno)));
  target.resize(static_cast<std::size_t>(n));
  return target;
}

std::string_view type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "dir";
  if (S_ISREG(mode)) return "file";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// A file descriptor that closes itself.
class File {
 public:
  explicit File(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) {
    if (fd_ < 0) throw Error(fmt::format("{}: {}", path, errno_text(errno)));
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  // Reads up to `size` bytes, retrying short reads; 0 at end of file.
  std::size_t read(char* into, std::size_t size, const std::string& path) {
    std::size_t done = 0;
    while (done < size) {
      ssize_t n = ::read(fd_, into + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(fmt::format("{}: {}", path, errno_text(errno)));
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

 private:
  int fd_;
};

std::uint32_t file_crc(const std::string& path) {
  File file(path);
  std::vector<char> buffer(1 << 20);
  uLong crc = crc32(0L, Z_NULL, 0);
  while (std::size_t n = file.read(buffer.data(), buffer.size(), path)) {
    crc = crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(n));
  }
  return static_cast<std::uint32_t>(crc);
}

void scan_tree(SourceScan& scan) {
  std::set<std::pair<dev_t, ino_t>> linked;  // hard-linked files seen: their data is sent once
  std::error_code error;
  fs::recursive_directory_iterator walk(scan.root, error);
  if (error) throw Error(fmt::format("{}: {}", scan.root, error.message()));
  for (; walk != fs::recursive_directory_iterator(); walk.increment(error)) {
    if (error) break;
    SourceEntry entry;
    std::string path = walk->path().string();
    entry.relative = path.substr(scan.root.size() + 1);
    if (entry.relative == yeet::k_stamp_name) continue;  // a yeeted copy staged again
    if (::lstat(path.c_str(), &entry.st) != 0) {
      throw Error(fmt::format("{}: {}", path, errno_text(errno)));
    }
    if (auto why = yeet::refused_entry_type(entry.st.st_mode)) {
      throw RefusedEntry(fmt::format("{}: {}", path, *why));
    }
    if (S_ISLNK(entry.st.st_mode)) entry.link_target = link_target(path);
    if (S_ISREG(entry.st.st_mode) &&
        (entry.st.st_nlink == 1 || linked.emplace(entry.st.st_dev, entry.st.st_ino).second)) {
      scan.content_bytes += static_cast<std::uint64_t>(entry.st.st_size);
    }
    scan.entries.push_back(std::move(entry));
  }
  if (error) throw Error(fmt::format("{}: {}", scan.root, error.message()));
  // A prefix sorts first, so every directory precedes what it holds.
  std::sort(scan.entries.begin(), scan.entries.end(),
            [](const SourceEntry& a, const SourceEntry& b) { return a.relative < b.relative; });
}

// Collects bytes into chunks and hands full ones on, each stamped with the
// source bytes read so far (`source_read`, kept by the caller).
class ChunkWriter {
 public:
  ChunkWriter(ChunkPool& pool, ChunkQueue& out, const std::uint64_t& source_read)
      : pool_(pool), out_(out), source_read_(source_read), chunk_(pool.take()) {}
  void write(const char* data, std::size_t size) {
    while (size > 0) {
      std::size_t n = std::min(size, chunk_->bytes.size() - chunk_->size);
      std::memcpy(chunk_->bytes.data() + chunk_->size, data, n);
      chunk_->size += n;
      data += n;
      size -= n;
      if (chunk_->size == chunk_->bytes.size()) flush();
    }
  }
  // Room for the next bytes in the current chunk, for readers that fill it directly.
  std::pair<char*, std::size_t> space() {
    return {chunk_->bytes.data() + chunk_->size, chunk_->bytes.size() - chunk_->size};
  }
  void commit(std::size_t n) {
    chunk_->size += n;
    if (chunk_->size == chunk_->bytes.size()) flush();
  }
  void finish(bool aborted) {
    total_ += chunk_->size;
    chunk_->source_bytes = source_read_;
    chunk_->last = true;
    chunk_->aborted = aborted;
    out_.push(std::move(chunk_));
  }
  std::uint64_t total() const { return total_; }

 private:
  void flush() {
    total_ += chunk_->size;
    chunk_->source_bytes = source_read_;
    out_.push(std::move(chunk_));
    chunk_ = pool_.take();
  }
  ChunkPool& pool_;
  ChunkQueue& out_;
  const std::uint64_t& source_read_;
  ChunkPtr chunk_;
  std::uint64_t total_ = 0;
};

// Sleeps as long as reading has run ahead of `bytes_per_second`.
class RateLimit {
 public:
  explicit RateLimit(double bytes_per_second) : limit_(bytes_per_second) {}
  void after(std::uint64_t bytes_so_far) {
    if (limit_ <= 0) return;
    auto due = start_ + std::chrono::duration<double>(static_cast<double>(bytes_so_far) / limit_);
    std::this_thread::sleep_until(due);
  }

 private:
  double limit_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void stream_tarball(const SourceScan& scan, ChunkWriter& writer, StreamResult& result,
                    RateLimit& limit) {
  File file(scan.root);
  for (;;) {
    auto [space, room] = writer.space();
    std::size_t n = file.read(space, room, scan.root);
    if (n == 0) break;
    result.source_bytes_read += n;
    writer.commit(n);
    limit.after(result.source_bytes_read);
  }
}

// libarchive hands its output here; it goes into the chunks as is.
la_ssize_t write_to_chunks(struct archive*, void* writer, const void* data, std::size_t size) {
  static_cast<ChunkWriter*>(writer)->write(static_cast<const char*>(data), size);
  return static_cast<la_ssize_t>(size);
}

// libarchive handles (an archive, an entry, a hard-link resolver) that free themselves.
struct TarWriter {
  struct archive* archive = archive_write_new();
  struct archive_entry_linkresolver* links = archive_entry_linkresolver_new();
  struct archive_entry* entry = archive_entry_new();
  TarWriter() { archive_entry_linkresolver_set_strategy(links, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED); }
  ~TarWriter() {
    archive_entry_free(entry);
    archive_entry_linkresolver_free(links);
    archive_write_free(archive);
  }
  TarWriter(const TarWriter&) = delete;
  TarWriter& operator=(const TarWriter&) = delete;
  void check(int status, std::string_view what) const {
    if (status < ARCHIVE_WARN) {
      throw Error(fmt::format("{}: {}", what, archive_error_string(archive)));
    }
  }
};

void write_file_data(TarWriter& tar, const std::string& path, std::uint64_t size,
                     StreamResult& result, RateLimit& limit) {
  File file(path);
  static thread_local std::vector<char> buffer(1 << 20);
  std::uint64_t left = size;
  while (left > 0) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
    std::size_t n = file.read(buffer.data(), want, path);
    if (n < want) throw Error(fmt::format("{}: changed while being staged (shorter than it was)", path));
    result.source_bytes_read += n;
    left -= n;
    if (archive_write_data(tar.archive, buffer.data(), n) < 0) tar.check(ARCHIVE_FATAL, path);
    limit.after(result.source_bytes_read);
  }
}

void stream_tree(const SourceScan& scan, ChunkWriter& writer, StreamResult& result,
                 RateLimit& limit) {
  TarWriter tar;
  tar.check(archive_write_set_format_pax_restricted(tar.archive), "tar format");
  tar.check(archive_write_add_filter_none(tar.archive), "tar filter");
  // No blocking: the chunks are the blocks.
  tar.check(archive_write_set_bytes_per_block(tar.archive, 0), "tar blocking");
  tar.check(archive_write_open2(tar.archive, &writer, nullptr, write_to_chunks, nullptr, nullptr),
            "tar stream");
  for (const SourceEntry& source : scan.entries) {
    std::string path = scan.root + "/" + source.relative;
    archive_entry_clear(tar.entry);
    archive_entry_copy_pathname(tar.entry, source.relative.c_str());
    archive_entry_copy_stat(tar.entry, &source.st);
    if (!source.link_target.empty()) archive_entry_copy_symlink(tar.entry, source.link_target.c_str());
    struct archive_entry* entry = tar.entry;
    struct archive_entry* spare = nullptr;
    if (S_ISREG(source.st.st_mode) && source.st.st_nlink > 1) {
      archive_entry_linkify(tar.links, &entry, &spare);  // later links carry no data
    }
    tar.check(archive_write_header(tar.archive, entry), path);
    if (S_ISREG(source.st.st_mode) && archive_entry_size(entry) > 0) {
      write_file_data(tar, path, static_cast<std::uint64_t>(archive_entry_size(entry)), result, limit);
    }
  }
  tar.check(archive_write_close(tar.archive), "tar stream");
}

}  // namespace

SourceScan scan_source(const std::string& path, bool checksum) {
  SourceScan scan;
  scan.root = path;
  while (scan.root.size() > 1 && scan.root.back() == '/') scan.root.pop_back();
  struct stat st {};
  if (::stat(scan.root.c_str(), &st) != 0) {
    throw Error(fmt::format("{}: {}", scan.root, errno_text(errno)));
  }
  yeet::Fingerprint fingerprint;
  if (S_ISDIR(st.st_mode)) {
    scan_tree(scan);
    for (const SourceEntry& entry : scan.entries) {
      fingerprint.add_entry(entry.relative, type_name(entry.st.st_mode), entry.st.st_mode & 07777,
                            S_ISREG(entry.st.st_mode) ? static_cast<std::uint64_t>(entry.st.st_size) : 0,
                            mtime_ns(entry.st), entry.link_target);
      if (checksum && S_ISREG(entry.st.st_mode)) {
        fingerprint.add_content(file_crc(scan.root + "/" + entry.relative));
      }
    }
  } else if (S_ISREG(st.st_mode) && yeet::is_tarball_name(scan.root)) {
    scan.tarball = true;
    scan.content_bytes = static_cast<std::uint64_t>(st.st_size);
    fingerprint.add_entry("", "tarball", st.st_mode & 07777, scan.content_bytes, mtime_ns(st), "");
    if (checksum) fingerprint.add_content(file_crc(scan.root));
  } else {
    throw Error(fmt::format(
        "{}: not a directory or a tarball (.tar, .tar.gz, .tgz, .tar.zst, .tar.xz, .tar.bz2)",
        scan.root));
  }
  scan.fingerprint = fingerprint.value();
  return scan;
}

StreamResult stream_source(const SourceScan& scan, ChunkPool& pool, ChunkQueue& out,
                           double bytes_per_second) {
  StreamResult result;
  ChunkWriter writer(pool, out, result.source_bytes_read);
  RateLimit limit(bytes_per_second);
  try {
    if (scan.tarball) {
      stream_tarball(scan, writer, result, limit);
    } else {
      stream_tree(scan, writer, result, limit);
    }
  } catch (const Error& e) {
    result.error = e.what();
  }
  writer.finish(!result.error.empty());
  result.stream_bytes = writer.total();
  return result;
}

}  // namespace ezpz::stage
