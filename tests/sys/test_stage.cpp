// yeet's file work against real files and real libarchive: the source stream
// round-trips a tree exactly; hostile archives are refused with nothing
// written outside; destinations are judged, swapped and cleaned up.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/stage/destination.hpp"
#include "ezpz/stage/extract.hpp"
#include "ezpz/stage/source.hpp"
#include "ezpz/stage/stream_hash.hpp"
#include "tests/catch.hpp"
#include "tests/support/files.hpp"

using namespace ezpz;
using namespace ezpz::stage;
namespace fs = std::filesystem;
using ezpz::testing::TempDir;
using ezpz::testing::read_text_file;
using namespace std::string_literals;

namespace {

void write(const std::string& path, const std::string& text, mode_t mode = 0644) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  ::chmod(path.c_str(), mode);
}

// A small tree with every kind of entry yeet must keep.
void make_tree(const std::string& root) {
  write(root + "/bin/tool", "#!" + root + "/bin/python\nprint(1)\n", 0755);
  write(root + "/bin/activate", "VIRTUAL_ENV=\"" + root + "\"\nexport VIRTUAL_ENV\n");
  write(root + "/pyvenv.cfg", "home = /usr/bin\n");
  write(root + "/lib/pkg/a.py", std::string(100000, 'a'));
  write(root + "/lib/pkg/private", "p", 0600);
  fs::create_directories(root + "/lib/empty");
  fs::create_symlink("/usr/bin/python3", root + "/bin/python");
  fs::create_symlink("python", root + "/bin/python3");
  fs::create_hard_link(root + "/lib/pkg/a.py", root + "/lib/pkg/b.py");
}

// "path type mode size target" for every entry, sorted (what must survive).
std::string listing(const std::string& root) {
  std::vector<std::string> lines;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    struct stat st {};
    ::lstat(entry.path().c_str(), &st);
    std::string target = entry.is_symlink() ? fs::read_symlink(entry.path()).string() : "";
    lines.push_back(fmt::format("{} {:o} {} {} {}", entry.path().lexically_relative(root).string(),
                                st.st_mode, S_ISREG(st.st_mode) ? st.st_size : 0, st.st_nlink,
                                target));
  }
  std::sort(lines.begin(), lines.end());
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// Streams `scan` through a pool and extracts it into `into`, as one rank does.
ExtractResult round_trip(const SourceScan& scan, const std::string& into, StreamResult* sent = nullptr) {
  ChunkPool pool(4, 64 * 1024);
  ChunkQueue queue;
  StreamResult streamed;
  std::thread reader([&] { streamed = stream_source(scan, pool, queue, 0); });
  std::string cwd = fs::current_path();
  ExtractResult result = extract_stream(queue, pool, into, scan.tarball);
  fs::current_path(cwd);
  reader.join();
  if (sent) *sent = streamed;
  return result;
}

// A tar archive in memory, with entries made by `add`.
std::string tar_bytes(const std::function<void(struct archive*)>& add) {
  std::string bytes(1 << 20, '\0');
  std::size_t used = 0;
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_open_memory(a, bytes.data(), bytes.size(), &used);
  add(a);
  archive_write_close(a);
  archive_write_free(a);
  bytes.resize(used);
  return bytes;
}

void add_entry(struct archive* a, const std::string& path, mode_t type, const std::string& data = "",
               const std::string& link = "") {
  struct archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, path.c_str());
  archive_entry_set_filetype(e, type);
  archive_entry_set_perm(e, 0644);
  archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
  if (type == AE_IFLNK) archive_entry_set_symlink(e, link.c_str());
  archive_write_header(a, e);
  if (!data.empty()) archive_write_data(a, data.data(), data.size());
  archive_entry_free(e);
}

// Extracts raw tarball bytes as a node would receive them.
ExtractResult extract_tarball(const std::string& bytes, const std::string& into) {
  std::string tarball = into + "/../in.tar";
  write(tarball, bytes);
  SourceScan scan = scan_source(tarball, false);
  return round_trip(scan, into);
}

}  // namespace

TEST_CASE("a tree streams and extracts exactly: modes, symlinks, hard links, empty dirs", "[stage]") {
  TempDir dir;
  make_tree(dir / "src");
  SourceScan scan = scan_source(dir / "src", false);
  CHECK_FALSE(scan.tarball);
  CHECK(scan.entries.size() == 12);
  std::map<std::uintmax_t, std::uintmax_t> file_bytes;  // inode -> size: hard links once
  for (const auto& entry : fs::recursive_directory_iterator(dir / "src")) {
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) == 0 && S_ISREG(st.st_mode))
      file_bytes[st.st_ino] = st.st_size;
  }
  std::uintmax_t total = 0;
  for (const auto& [inode, size] : file_bytes) total += size;
  CHECK(scan.content_bytes == total);
  fs::create_directories(dir / "out");
  StreamResult sent;
  ExtractResult got = round_trip(scan, dir / "out", &sent);
  CHECK(got.error == "");
  CHECK(sent.error == "");
  CHECK(sent.source_bytes_read == total);  // b.py is a.py: read once
  CHECK(got.bytes == sent.stream_bytes);
  CHECK(got.entries == 12);
  CHECK(listing(dir / "out") == listing(dir / "src"));
  CHECK(fs::equivalent(dir / "out/lib/pkg/a.py", dir / "out/lib/pkg/b.py"));
}

TEST_CASE("chunks count source bytes for progress, not the tar stream's", "[stage]") {
  TempDir dir;
  make_tree(dir / "src");
  write(dir / "src/lib/pkg/big.bin", std::string(300000, 'b'));
  SourceScan scan = scan_source(dir / "src", false);
  ChunkPool pool(4, 64 * 1024);
  ChunkQueue queue;
  StreamResult streamed;
  std::thread reader([&] { streamed = stream_source(scan, pool, queue, 0); });
  std::vector<std::uint64_t> counts;
  for (bool last = false; !last;) {
    ChunkPtr chunk = queue.pop();
    counts.push_back(chunk->source_bytes);
    last = chunk->last;
    pool.give(std::move(chunk));
  }
  reader.join();
  REQUIRE(counts.size() > 2);
  CHECK(std::is_sorted(counts.begin(), counts.end()));
  CHECK(counts.front() > 0);
  // The hard link's second name carries no data: each byte counted once,
  // and the last chunk's count is the progress line's total.
  CHECK(counts.back() == scan.content_bytes);
  CHECK(counts.back() == streamed.source_bytes_read);
  CHECK(streamed.stream_bytes > streamed.source_bytes_read);  // headers
}

TEST_CASE("the fingerprint follows the source", "[stage]") {
  TempDir dir;
  make_tree(dir / "src");
  std::string before = scan_source(dir / "src", false).fingerprint;
  CHECK(scan_source(dir / "src", false).fingerprint == before);
  CHECK(scan_source(dir / "src", true).fingerprint != before);  // contents included
  write(dir / "src/lib/pkg/new.py", "x");
  CHECK(scan_source(dir / "src", false).fingerprint != before);
}

TEST_CASE("sources that cannot be staged are named", "[stage]") {
  TempDir dir;
  write(dir / "notes.txt", "x");
  make_tree(dir / "with-fifo");
  REQUIRE(::mkfifo((dir / "with-fifo/lib/pipe").c_str(), 0644) == 0);
  CHECK_THROWS_AS(scan_source(dir / "with-fifo", false), RefusedEntry);
  CHECK_THROWS_WITH(scan_source(dir / "with-fifo", false),
                    dir /
                        "with-fifo/lib/pipe: is a FIFO; yeet copies only files, directories and "
                        "symlinks");
  CHECK_THROWS_WITH(scan_source(dir / "missing", false), dir / "missing: No such file or directory");
  CHECK_THROWS_WITH(scan_source(dir / "notes.txt", false),
                    dir / "notes.txt: not a directory or a tarball (.tar, .tar.gz, .tgz, "
                          ".tar.zst, .tar.xz, .tar.bz2)");
}

TEST_CASE("a file that vanishes mid-stream aborts every receiver", "[stage]") {
  TempDir dir;
  make_tree(dir / "src");
  SourceScan scan = scan_source(dir / "src", false);
  fs::remove(dir / "src/lib/pkg/private");
  fs::create_directories(dir / "out");
  StreamResult sent;
  ExtractResult got = round_trip(scan, dir / "out", &sent);
  CHECK(sent.error == dir / "src/lib/pkg/private: No such file or directory");
  CHECK(got.error == "the source could not be read (see the first node's message)");
}

TEST_CASE("hostile archives are refused and nothing is written outside", "[stage]") {
  TempDir dir;
  fs::create_directories(dir / "outside");
  struct Row {
    const char* name;
    std::function<void(struct archive*)> entries;
    std::string error;
  };
  const std::string outside = dir / "outside";
  const Row rows[] = {
      {"dotdot", [](struct archive* a) { add_entry(a, "../escape", AE_IFREG, "x"); },
       "../escape: Path contains '..'"},
      {"absolute", [&](struct archive* a) { add_entry(a, outside + "/abs", AE_IFREG, "x"); },
       outside + "/abs: Path is absolute"},
      {"through a symlink",
       [&](struct archive* a) {
         add_entry(a, "link", AE_IFLNK, "", outside);
         add_entry(a, "link/pwned", AE_IFREG, "x");
       },
       "link/pwned: Cannot extract through symlink link/pwned"},
      {"hard link out",
       [&](struct archive* a) {
         struct archive_entry* e = archive_entry_new();
         archive_entry_set_pathname(e, "hl");
         archive_entry_set_hardlink(e, "../../etc/passwd");
         archive_write_header(a, e);
         archive_entry_free(e);
       },
       "hl: Path contains '..'"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    fs::remove_all(dir / "out");
    fs::create_directories(dir / "out");
    ExtractResult got = extract_tarball(tar_bytes(row.entries), dir / "out");
    CHECK(got.error == row.error);
    CHECK(fs::is_empty(outside));
    CHECK_FALSE(fs::exists(dir / "escape"));
  }
}

TEST_CASE("device nodes and FIFOs in a tarball are refused on every node", "[stage]") {
  struct Row {
    const char* name;
    mode_t type;
    std::string error;
  };
  const Row rows[] = {
      {"dev/mem", AE_IFCHR,
       "dev/mem: is a character device; yeet copies only files, directories and symlinks"},
      {"dev/sda", AE_IFBLK,
       "dev/sda: is a block device; yeet copies only files, directories and symlinks"},
      {"lib/pipe", AE_IFIFO,
       "lib/pipe: is a FIFO; yeet copies only files, directories and symlinks"},
  };
  TempDir dir;
  for (const Row& row : rows) {
    INFO(row.name);
    fs::remove_all(dir / "out");
    fs::create_directories(dir / "out");
    ExtractResult got = extract_tarball(tar_bytes([&](struct archive* a) {
                                          add_entry(a, "ok.py", AE_IFREG, "x");
                                          struct archive_entry* e = archive_entry_new();
                                          archive_entry_set_pathname(e, row.name);
                                          archive_entry_set_filetype(e, row.type);
                                          archive_entry_set_perm(e, 0666);
                                          archive_entry_set_rdev(e, makedev(1, 1));
                                          archive_write_header(a, e);
                                          archive_entry_free(e);
                                        }),
                                        dir / "out");
    CHECK(got.error == row.error);
    CHECK_FALSE(fs::exists(fs::symlink_status(dir / ("out/" + std::string(row.name)))));
  }
}

TEST_CASE("setuid and setgid bits are dropped on the copy unless kept", "[stage]") {
  TempDir dir;
  std::string bytes = tar_bytes([](struct archive* a) {
    const std::pair<const char*, mode_t> files[] = {
        {"bin/su", 04755}, {"bin/sg", 02755}, {"bin/plain", 0755}};
    for (auto [name, perm] : files) {
      struct archive_entry* e = archive_entry_new();
      archive_entry_set_pathname(e, name);
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, perm);
      archive_entry_set_uid(e, ::geteuid());  // ours: libarchive keeps the bits when asked
      archive_entry_set_gid(e, ::getegid());
      archive_entry_set_size(e, 1);
      archive_write_header(a, e);
      archive_write_data(a, "x", 1);
      archive_entry_free(e);
    }
  });
  auto perm_of = [&](const std::string& path) {
    struct stat st {};
    ::lstat(path.c_str(), &st);
    return st.st_mode & 07777;
  };
  for (bool keep : {false, true}) {
    INFO("keep_setuid=" << keep);
    fs::remove_all(dir / "out");
    fs::create_directories(dir / "out");
    write(dir / "in.tar", bytes);
    SourceScan scan = scan_source(dir / "in.tar", false);
    ChunkPool pool(4, 64 * 1024);
    ChunkQueue queue;
    std::thread reader([&] { stream_source(scan, pool, queue, 0); });
    std::string cwd = fs::current_path();
    ExtractResult got = extract_stream(queue, pool, dir / "out", true, keep);
    fs::current_path(cwd);
    reader.join();
    CHECK(got.error == "");
    CHECK(perm_of(dir / "out/bin/su") == (keep ? 04755u : 0755u));
    CHECK(perm_of(dir / "out/bin/sg") == (keep ? 02755u : 0755u));
    CHECK(perm_of(dir / "out/bin/plain") == 0755u);
  }
}

TEST_CASE("the stream check catches a changed byte or a lost chunk", "[stage]") {
  auto chunk_of = [](const std::string& text) {
    Chunk chunk;
    chunk.bytes.assign(text.begin(), text.end());
    chunk.size = text.size();
    return chunk;
  };
  Chunk first = chunk_of("the first chunk"), last = chunk_of("the last");
  last.last = true;
  StreamHash sent;
  sent.add(first);
  sent.add(last);
  sent.seal(last);
  CHECK(last.total == 23);

  StreamHash intact;
  intact.add(first);
  intact.add(last);
  CHECK(intact.mismatch(last) == "");
  CHECK(intact.crc() == sent.crc());

  Chunk flipped = first;
  flipped.bytes[3] ^= 1;
  StreamHash corrupted;
  corrupted.add(flipped);
  corrupted.add(last);
  CHECK(corrupted.mismatch(last) ==
        fmt::format("stream check failed: received 23 bytes with crc32 {:08x}, sent 23 bytes with "
                    "crc32 {:08x}",
                    corrupted.crc(), sent.crc()));

  StreamHash short_stream;
  short_stream.add(last);
  CHECK_THAT(short_stream.mismatch(last), Catch::StartsWith("stream check failed: received 8 bytes"));
}

TEST_CASE("destinations: judged, swapped in one step, and only ezpz's own removed", "[stage]") {
  TempDir dir;
  std::string dst = dir / "env";
  CHECK(inspect_destination(dst, "f1") == yeet::Holding::absent);
  fs::create_directories(dst);
  CHECK(inspect_destination(dst, "f1") == yeet::Holding::absent);  // empty
  write(dst + "/theirs", "x");
  CHECK(inspect_destination(dst, "f1") == yeet::Holding::foreign);

  std::string staging = make_staging_dir(dst, "n01");
  CHECK(fs::path(staging).parent_path() == fs::path(dst).parent_path());
  CHECK_THAT(fs::path(staging).filename().string(), Catch::StartsWith(".env.ezpz-yeet-n01-"));
  write(staging + "/new", "y");
  write_stamp(staging, {"f1", "/src", "crc32:0", 1, 1});
  commit_staging(staging, dst);
  discard_staging(staging);
  CHECK(read_text_file(dst + "/new") == "y");
  CHECK_FALSE(fs::exists(dst + "/theirs"));
  CHECK_FALSE(fs::exists(staging));
  CHECK(inspect_destination(dst, "f1") == yeet::Holding::current);
  CHECK(inspect_destination(dst, "f2") == yeet::Holding::stale);

  // A staging directory nobody holds is a dead run's: removed. One this
  // process holds (a live run) and other hosts' are kept.
  fs::create_directories(dir / ".env.ezpz-yeet-n01-999999-dead");
  fs::create_directories(dir / ".env.ezpz-yeet-n02-999999-other");
  std::string live = make_staging_dir(dst, "n01");
  CHECK(remove_stale_staging(dst, "n01") == 1);
  CHECK_FALSE(fs::exists(dir / ".env.ezpz-yeet-n01-999999-dead"));
  CHECK(fs::exists(dir / ".env.ezpz-yeet-n02-999999-other"));
  CHECK(fs::exists(live));
}

TEST_CASE("a moved venv names its new home", "[stage]") {
  TempDir dir;
  make_tree(dir / "old");
  fs::create_directory_symlink(dir / "old/lib", dir / "old/bin/libdir");  // into the old prefix
  EnvPatch patch = patch_python_env(dir / "old", dir / "old", "/tmp/new");
  CHECK(patch.kind == yeet::EnvKind::venv);
  CHECK(patch.warnings.empty());
  CHECK(read_text_file(dir / "old/bin/activate") == "VIRTUAL_ENV=\"/tmp/new\"\nexport VIRTUAL_ENV\n");
  CHECK(read_text_file(dir / "old/bin/tool") == "#!/tmp/new/bin/python\nprint(1)\n");
  CHECK((fs::status(dir / "old/bin/tool").permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK(fs::read_symlink(dir / "old/bin/python") == "/usr/bin/python3");  // outside: kept
  CHECK(fs::read_symlink(dir / "old/bin/libdir") == "/tmp/new/lib");
  CHECK(python_env_prefix(dir / "old") == "/tmp/new");
  CHECK(patch_python_env(dir / "old/lib", "/x", "/y").kind == yeet::EnvKind::other);
}

TEST_CASE("a moved conda env gets the same treatment", "[stage]") {
  TempDir dir;
  fs::create_directories(dir / "conda/conda-meta");
  write(dir / "conda/bin/jupyter", "#!" + (dir / "conda") + "/bin/python\nimport x\n", 0755);
  write(dir / "conda/bin/binary", std::string("\x7f" "ELF") + (dir / "conda"), 0755);
  CHECK(patch_python_env(dir / "conda", dir / "conda", "/tmp/c").kind == yeet::EnvKind::conda);
  CHECK(read_text_file(dir / "conda/bin/jupyter") == "#!/tmp/c/bin/python\nimport x\n");
  // Not in a conda-meta record: conda never wrote the prefix there, ezpz leaves it.
  CHECK(read_text_file(dir / "conda/bin/binary") == std::string("\x7f" "ELF") + (dir / "conda"));
}

// A conda env as conda leaves it: files its conda-meta records say hold the prefix.
void make_conda_env(const std::string& root) {
  fs::create_directories(root + "/conda-meta");
  std::string placeholder = "/home/conda/feedstock_root/_h_env_placehold";
  write(root + "/conda-meta/demo-1.0-0.json",
        fmt::format(R"({{"name": "demo", "paths_data": {{"paths_version": 1, "paths": [
          {{"_path": "etc/conda/activate.d/demo.sh", "file_mode": "text", "prefix_placeholder": "{0}"}},
          {{"_path": "lib/pkgconfig/demo.pc", "file_mode": "text", "prefix_placeholder": "{0}"}},
          {{"_path": "bin/demo-config", "file_mode": "text", "prefix_placeholder": "{0}"}},
          {{"_path": "lib/libdemo.so", "file_mode": "binary", "prefix_placeholder": "{0}"}},
          {{"_path": "lib/plain.txt", "path_type": "hardlink"}}]}}}})",
                    placeholder));
  write(root + "/conda-meta/history", "==> 2026-11-23 <==\n");
  write(root + "/etc/conda/activate.d/demo.sh", "export DEMO_HOME=" + root + "/share/demo\n");
  write(root + "/lib/pkgconfig/demo.pc", "prefix=" + root + "\nlibdir=${prefix}/lib\n");
  write(root + "/bin/demo-config", "#!/bin/sh\necho " + root + "/include\n", 0755);
  write(root + "/lib/libdemo.so", "\x7f" "ELF\0"s + root + "/share\0end"s, 0755);
  write(root + "/lib/plain.txt", root + "\n");
}

TEST_CASE("a conda env says where it was made through its scripts' #!", "[stage]") {
  TempDir dir;
  std::string root = dir / "env";
  make_conda_env(root);
  CHECK_FALSE(python_env_prefix(root).has_value());  // no Python: nothing says
  write(root + "/bin/python3.11",
        "\x7f"
        "ELF",
        0755);
  write(root + "/bin/pip", "#!/made/here/bin/python3.11\nimport pip\n", 0755);
  write(root + "/bin/ipython",
        "#!/bin/sh\n'''exec' \"/made/here/bin/python3.11\" \"$0\" \"$@\"\n' '''\n", 0755);
  // Outvoted, and naming a Python the env does not hold.
  write(root + "/bin/stray", "#!/usr/bin/python3\n", 0755);
  write(root + "/bin/other", "#!/elsewhere/bin/python3.11\n", 0755);
  CHECK(python_env_prefix(root) == "/made/here");
  fs::remove(root + "/bin/pip");
  fs::remove(root + "/bin/ipython");
  write(root + "/bin/only-stray", "#!/usr/bin/python3\n", 0755);
  CHECK(python_env_prefix(root) == "/elsewhere");  // /usr: no bin/python3 here
}

TEST_CASE("an environment whose old prefix is unknown is left as it was, and said", "[stage]") {
  TempDir dir;
  std::string root = dir / "env";
  make_conda_env(root);
  std::string hook = read_text_file(root + "/etc/conda/activate.d/demo.sh");
  EnvPatch patch = patch_python_env(root, "", "/tmp/e");
  CHECK(read_text_file(root + "/etc/conda/activate.d/demo.sh") == hook);
  REQUIRE(patch.warnings.size() == 1);
  CHECK(patch.warnings[0] ==
        "cannot tell where this conda env was made (no bin/activate or bin/ script names its "
        "Python): files that name that path are left as they were");
  write(dir / "venv/pyvenv.cfg", "home = /usr/bin\n");
  CHECK(patch_python_env(dir / "venv", "", "/tmp/v")
            .warnings.at(0)
            .rfind("cannot tell where this venv was made", 0) == 0);
}

TEST_CASE("a moved conda env: every file its conda-meta records name is rewritten", "[stage]") {
  TempDir dir;
  std::string root = dir / "a-long-conda-env-prefix";
  make_conda_env(root);
  EnvPatch patch = patch_python_env(root, root, "/tmp/e");
  CHECK(patch.kind == yeet::EnvKind::conda);
  CHECK(patch.warnings.empty());
  CHECK(read_text_file(root + "/etc/conda/activate.d/demo.sh") == "export DEMO_HOME=/tmp/e/share/demo\n");
  CHECK(read_text_file(root + "/lib/pkgconfig/demo.pc") == "prefix=/tmp/e\nlibdir=${prefix}/lib\n");
  // The whole script, not only its "#!" line; its mode kept.
  CHECK(read_text_file(root + "/bin/demo-config") == "#!/bin/sh\necho /tmp/e/include\n");
  CHECK((fs::status(root + "/bin/demo-config").permissions() & fs::perms::owner_exec) != fs::perms::none);
  // The binary keeps its length: the string padded with NULs.
  std::string binary = read_text_file(root + "/lib/libdemo.so");
  std::string padding(root.size() - std::string("/tmp/e").size(), '\0');
  CHECK(binary == "\x7f" "ELF\0/tmp/e/share"s + padding + "\0end"s);
  // A file conda never patched is left alone.
  CHECK(read_text_file(root + "/lib/plain.txt") == root + "\n");
}

TEST_CASE("a moved conda env: a new prefix containing the old one is applied once", "[stage]") {
  TempDir dir;
  std::string root = dir / "env";
  make_conda_env(root);
  write(root + "/bin/tool", "#!" + root + "/bin/python\n", 0755);  // pip's: no record
  std::string longer = root + "-local";
  EnvPatch patch = patch_python_env(root, root, longer);
  CHECK(read_text_file(root + "/bin/demo-config") == "#!/bin/sh\necho " + longer + "/include\n");
  CHECK(read_text_file(root + "/bin/tool") == "#!" + longer + "/bin/python\n");
  // A binary cannot take a longer prefix: left as it was, and said.
  CHECK(read_text_file(root + "/lib/libdemo.so") ==
        "\x7f" "ELF\0"s + root + "/share\0end"s);
  REQUIRE(patch.warnings.size() == 1);
  CHECK(
      patch.warnings[0] ==
      fmt::format("1 binary file keeps the old prefix {}: the new one ({} bytes) is longer than it "
                  "({} bytes) and cannot be written over it; choose a --dst no longer than the "
                  "source path",
                  root, longer.size(), root.size()));
}

TEST_CASE("a moved conda env: a record that is not JSON is named, the rest still patched",
          "[stage]") {
  TempDir dir;
  std::string root = dir / "env";
  make_conda_env(root);
  write(root + "/conda-meta/broken-1.0-0.json", "{\"paths_data\": ");
  EnvPatch patch = patch_python_env(root, root, "/tmp/e");
  CHECK(read_text_file(root + "/lib/pkgconfig/demo.pc") == "prefix=/tmp/e\nlibdir=${prefix}/lib\n");
  CHECK(patch.warnings == std::vector<std::string>{
                              "conda-meta/broken-1.0-0.json: not a JSON document; its files keep "
                              "the old prefix"});
}
