// lib/ezpz/output/rank_records.hpp: the records ezpz-rankenv writes and ezpz reads back.
#include <map>
#include <string>
#include <vector>

#include "tests/catch.hpp"

#include "ezpz/output/rank_records.hpp"

using ezpz::output::encode_records;
using ezpz::output::k_direct_write_max;
using ezpz::output::k_pending_max;
using ezpz::output::k_record_max;
using ezpz::output::LineCutter;
using ezpz::output::pipe_record;
using ezpz::output::pipe_record_rank;
using ezpz::output::RankLine;
using ezpz::output::RecordAssembler;
using ezpz::output::RecordEncoder;
using Records = std::vector<std::string>;

namespace {

Records encode(long rank, std::string_view text, bool complete) {
  Records records;
  encode_records(rank, text, complete, [&](std::string_view r) { records.emplace_back(r); });
  return records;
}

struct Line {
  long rank;
  std::string text;
  bool complete;
  bool operator==(const Line&) const = default;
};
using Lines = std::vector<Line>;

std::ostream& operator<<(std::ostream& out, const Line& line) {
  return out << "{" << line.rank << ", \"" << line.text << "\", " << line.complete << "}";
}

// The stream fed in chunks of `chunk` bytes (0: all at once), then finished.
Lines assemble(std::string_view stream, std::size_t chunk = 0, bool finish = true) {
  Lines lines;
  RecordAssembler assembler([&](const RankLine& l) {
    lines.push_back({l.rank, std::string(l.text), l.complete});
  });
  if (chunk == 0) chunk = stream.size() + 1;
  for (std::size_t at = 0; at < stream.size(); at += chunk)
    assembler.feed(stream.substr(at, chunk));
  if (finish) assembler.finish();
  return lines;
}

// What the encoder of `rank` writes for `chunks` fed one after another, flushed at the end.
std::string relay(long rank, const std::vector<std::string>& chunks, bool flush = true) {
  std::string out;
  RecordEncoder encoder(rank, [&](std::string_view r) { out.append(r); });
  for (const auto& chunk : chunks) encoder.feed(chunk);
  flush ? encoder.flush() : encoder.send();
  return out;
}

// A rank's bytes as the RankLines give them back.
std::map<long, std::string> bytes_per_rank(const Lines& lines) {
  std::map<long, std::string> bytes;
  for (const auto& l : lines) bytes[l.rank] += l.text + (l.complete ? "\n" : "");
  return bytes;
}

}  // namespace

TEST_CASE("a line is one record: ':' ends it, '+' is a piece", "[rank_records]") {
  CHECK(encode(3, "hello", true) == Records{"3: hello\n"});
  CHECK(encode(0, "", true) == Records{"0: \n"});
  CHECK(encode(12, "50%", false) == Records{"12+ 50%\n"});
  CHECK(encode(12, "", false).empty());
  CHECK(encode(1, "a\nb", true) == Records{"1: a\n", "1: b\n"});
  CHECK(encode(1, "a\nb", false) == Records{"1: a\n", "1+ b\n"});
  CHECK(encode(1, "a\n", false) == Records{"1: a\n"});
}

TEST_CASE("a line longer than a record is cut at k_record_max", "[rank_records]") {
  const std::size_t room = k_record_max - 4;  // "7+ " and the newline
  const std::string fits(room, 'x');
  CHECK(encode(7, fits, true) == Records{"7: " + fits + "\n"});
  CHECK(encode(7, fits + "y", true) == Records{"7+ " + fits + "\n", "7: y\n"});
  CHECK(encode(7, fits + fits, false) == Records{"7+ " + fits + "\n", "7+ " + fits + "\n"});
  for (const auto& r : encode(4095, std::string(3 * k_record_max, 'z'), true)) {
    CHECK(r.size() <= k_record_max);
  }
}

TEST_CASE("the encoder sends whole lines and redraws, and keeps a partial line", "[rank_records]") {
  CHECK(relay(2, {"one\ntw", "o\nthr"}, false) == "2: one\n2: two\n");
  CHECK(relay(2, {"one\ntw", "o\nthr"}) == "2: one\n2: two\n2+ thr\n");
  // A progress bar redrawn in place: each '\r' sends what it ends.
  CHECK(relay(0, {"10%\r20%\r", "30%\rdone\n"}) == "0+ 10%\r\n0+ 20%\r\n0+ 30%\r\n0: done\n");
  // "\r\n" ends a line, even cut between two chunks.
  CHECK(relay(0, {"dos\r\n"}) == "0: dos\r\n");
  CHECK(relay(0, {"dos\r", "\nnext\n"}) == "0: dos\r\n0: next\n");
  CHECK(relay(0, {"bar\r", "baz\n"}) == "0+ bar\r\n0: baz\n");
  // Never more than a record's text held: full records go out at once.
  const std::size_t room = k_record_max - 4;  // "5+ " and the newline
  const std::string big(3 * room + 10, 'b');
  CHECK(relay(5, {big}, false).size() == 3 * k_record_max);
  CHECK(relay(5, {big}).size() == big.size() + 4 * 4);
}

namespace {

// What a cutter holding at most 8 bytes hands on for `chunks` fed one after another, each
// piece as "text|" and each line as "text$"; flushed at the end when `flush`. `runs`: whole
// lines in runs (the feed ezpz's console uses), each line of a run as "text$" too.
std::string cut(const std::vector<std::string>& chunks, bool flush, bool runs) {
  std::string out;
  LineCutter cutter(8);
  const auto put = [&](std::string_view text, bool complete) {
    out.append(text).append(complete ? "$" : "|");
  };
  const auto put_lines = [&](std::string_view lines) {
    CHECK(lines.ends_with('\n'));
    CHECK(lines.find('\r') == std::string_view::npos);
    for (std::size_t end; (end = lines.find('\n')) != std::string_view::npos;) {
      put(lines.substr(0, end), true);
      lines.remove_prefix(end + 1);
    }
  };
  for (const auto& chunk : chunks) {
    if (runs) {
      cutter.feed(chunk, put, put_lines);
    } else {
      cutter.feed(chunk, put);
    }
  }
  if (!flush) return out;
  cutter.flush(put);
  CHECK_FALSE(cutter.holding());
  return out;
}

}  // namespace

// ezpz cuts the lines of a rank whose pipe it reads as ezpz-rankenv's encoder cuts its records.
TEST_CASE("the line cutter hands on lines, redraws and pieces; the rest waits", "[rank_records]") {
  struct Row {
    std::vector<std::string> chunks;
    bool flush;
    std::string expected;
  };
  const std::vector<Row> rows = {
      {{"one\ntw", "o\nthr"}, false, "one$two$"},
      {{"one\ntw", "o\nthr"}, true, "one$two$thr|"},
      {{"", "\n", "\n"}, false, "$$"},
      {{"10%\r20%\r", "30%\rdone\n"}, false, "10%\r|20%\r|30%\r|done$"},
      {{"dos\r", "\nnext\n"}, false, "dos\r$next$"},  // "\r\n" cut between two chunks
      {{"bar\r", "baz\n"}, false, "bar\r|baz$"},
      {{"bar\r"}, true, "bar\r|"},
      {{"0123456789abcdefXYZ"}, false, "0123456789abcdef|"},  // whole multiples of hold_max
      {{"01234", "56789\n"}, false, "0123456789$"},
      {{"one\ntwo\nthr", "ee\nfour\nfi", "ve"}, true, "one$two$three$four$five|"},
      {{"a\nb\r", "\nc\n"}, false, "a$b\r$c$"},  // the '\r' last: one by one
      {{"0123456789abcdefXYZ", "W\nx\n"}, false, "0123456789abcdef|XYZW$x$"},
  };
  for (const Row& row : rows) {
    INFO(row.expected);
    CHECK(cut(row.chunks, row.flush, false) == row.expected);
    CHECK(cut(row.chunks, row.flush, true) == row.expected);
  }
}

TEST_CASE("the record that passes a pipe names its rank; nothing else does", "[rank_records]") {
  CHECK(pipe_record(12) == "12! pipe\n");
  CHECK(pipe_record_rank(pipe_record(0)) == 0);
  CHECK(pipe_record_rank("4095! pipe\n0! exec 1 n01\n") == 4095);
  for (const char* other : {"", "4! pipe", "4! piped\n", "4: pipe\n", "04! pipe\n", "x! pipe\n",
                            "-1! pipe\n", "4! exec 1\n"}) {
    INFO(other);
    CHECK_FALSE(pipe_record_rank(other).has_value());
  }
}

TEST_CASE("the encoder gathers whole records into writes of at most k_write_max",
          "[rank_records]") {
  std::vector<std::string> writes;
  RecordEncoder encoder(3, [&](std::string_view w) { writes.emplace_back(w); });
  const std::string line(99, 'l');  // a record of 103 bytes: 39 to a write
  std::string expected;
  for (int i = 0; i < 100; ++i) {
    encoder.feed(line + "\n");
    expected += "3: " + line + "\n";
  }
  CHECK(writes.size() == 2);  // the third waits for send()
  encoder.control("exec 1");
  encoder.feed("last\n");
  encoder.send();
  encoder.send();  // nothing gathered: no write
  REQUIRE(writes.size() == 3);
  CHECK(writes[0].size() == 39 * 103);
  CHECK(writes[2].ends_with("3: " + line + "\n3! exec 1\n3: last\n"));
  std::string all;
  for (const auto& w : writes) all += w;
  CHECK(all == expected + "3! exec 1\n3: last\n");
}

// Straight to ezpz (a connection of the rank's own), writes need not be atomic: up to
// k_direct_write_max each, whole records all the same.
TEST_CASE("straight to ezpz, the encoder gathers writes of up to k_direct_write_max",
          "[rank_records]") {
  std::vector<std::string> writes;
  RecordEncoder encoder(
      3, [&](std::string_view w) { writes.emplace_back(w); }, k_direct_write_max);
  const std::string line(99, 'l');  // 103 bytes a record: 636 to a write of 64 KiB
  for (int i = 0; i < 1000; ++i) encoder.feed(line + "\n");
  encoder.send();
  REQUIRE(writes.size() == 2);
  CHECK(writes[0].size() == 636 * 103);
  CHECK(writes[1].size() == 364 * 103);
  CHECK(writes[1].ends_with("3: " + line + "\n"));
}

TEST_CASE("the assembler joins each rank's pieces, whatever the chunks", "[rank_records]") {
  const std::string stream = "0+ hel\n1: one\n0+ lo \n1+ tw\n0: world\n1: o\n";
  const Lines expected{{1, "one", true}, {0, "hello world", true}, {1, "two", true}};
  for (std::size_t chunk : {0, 1, 2, 3, 5, 7, 13}) {
    CAPTURE(chunk);
    CHECK(assemble(stream, chunk) == expected);
  }
}

TEST_CASE("lines that are not records are the launcher's: rank -1", "[rank_records]") {
  CHECK(assemble("srun: error: node1: task 1: Exited\n0: ok\n") ==
        Lines{{-1, "srun: error: node1: task 1: Exited", true}, {0, "ok", true}});
  for (const char* garbage : {"01: zero-padded", "-1: signed", "3:no space", "3- marker", ": x", "",
                              "x", "1234567890123456789: too many digits"}) {
    CAPTURE(garbage);
    CHECK(assemble(std::string(garbage) + "\n") == Lines{{-1, garbage, true}});
  }
  // Too long to be a record: handed on as it comes, whatever the chunks.
  const std::string long_line = "1: " + std::string(k_record_max, 'q');
  for (std::size_t chunk : {0, 100, 4096}) {
    const Lines lines = assemble(long_line + "\n2: after\n", chunk);
    CHECK(bytes_per_rank(lines) ==
          std::map<long, std::string>{{-1, long_line + "\n"}, {2, "after\n"}});
  }
}

TEST_CASE("finish() hands on what a rank left unfinished", "[rank_records]") {
  CHECK(assemble("0+ partial\n1: done\n") == Lines{{1, "done", true}, {0, "partial", false}});
  CHECK(assemble("0+ partial\n1: done\n", 0, false) == Lines{{1, "done", true}});
  CHECK(assemble("2: cut off mid-rec") == Lines{{2, "cut off mid-rec", false}});
  CHECK(assemble("no newline at all") == Lines{{-1, "no newline at all", false}});
}

TEST_CASE("a redraw, a quiet spell and a runaway line are handed on at once", "[rank_records]") {
  CHECK(assemble("0+ 10%\r\n0+ 20%\r\n0: done\n", 0, false) ==
        Lines{{0, "10%\r", false}, {0, "20%\r", false}, {0, "done", true}});
  Lines lines;
  RecordAssembler assembler([&](const RankLine& l) {
    lines.push_back({l.rank, std::string(l.text), l.complete});
  });
  assembler.feed("3+ Loading... \n");
  CHECK(lines.empty());
  assembler.flush();
  assembler.feed("3: done\n");
  CHECK(lines == Lines{{3, "Loading... ", false}, {3, "done", true}});
  // A rank's line without end is bounded by k_pending_max.
  const std::string piece = "9+ " + std::string(k_record_max - 4, 'r') + "\n";
  lines.clear();
  for (std::size_t sent = 0; sent < k_pending_max; sent += k_record_max - 4) assembler.feed(piece);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].text.size() >= k_pending_max);
  CHECK_FALSE(lines[0].complete);
}

TEST_CASE("interleaved ranks come back byte for byte, in order per rank", "[rank_records]") {
  const std::vector<std::string> writes = {"alpha\nbe",
                                           "ta\r\n",
                                           "progress 1\rprogress 2\r",
                                           "gamma " + std::string(9000, 'g') + "\n",
                                           "",
                                           "last without newline"};
  std::map<long, std::string> wrote;
  std::string stream;
  std::vector<RecordEncoder> encoders;
  for (long rank = 0; rank < 3; ++rank) {
    encoders.emplace_back(rank, [&](std::string_view r) { stream.append(r); });
  }
  for (std::size_t i = 0; i < writes.size(); ++i) {
    for (long rank = 0; rank < 3; ++rank) {
      encoders[rank].feed(writes[(i + rank) % writes.size()]);
      encoders[rank].send();
      wrote[rank] += writes[(i + rank) % writes.size()];
    }
  }
  for (auto& encoder : encoders) encoder.flush();
  for (std::size_t chunk : {0, 1, 64, 4095, 4096, 4097}) {
    CAPTURE(chunk);
    CHECK(bytes_per_rank(assemble(stream, chunk)) == wrote);
  }
}

namespace {

// Each rank's bytes as the splitter hands them on, the stream fed in chunks of `chunk` bytes.
std::map<long, std::string> split_tags(std::string_view stream, std::size_t chunk = 0) {
  std::map<long, std::string> bytes;
  ezpz::output::OpenMpiTagSplitter splitter(
      [&](long rank, std::string_view piece) { bytes[rank] += piece; });
  if (chunk == 0) chunk = stream.size() + 1;
  for (std::size_t at = 0; at < stream.size(); at += chunk) splitter.feed(stream.substr(at, chunk));
  splitter.finish();
  return bytes;
}

}  // namespace

TEST_CASE("Open MPI's tags give each byte its rank, even inside a line", "[rank_records]") {
  using Bytes = std::map<long, std::string>;
  // As Open MPI 4.1 printed two ranks of tests/integration/output_lines.py: a piece of rank 0's
  // line, one of rank 1's, then the rest of rank 0's.
  const std::string stream =
      "[1,0]<stdout>:rank 0 li[1,1]<stdout>:rank 1 line\n[1,0]<stdout>:ne\n[1,1]<stderr>:e\n";
  for (std::size_t chunk : {0, 1, 2, 3, 7, 15}) {
    CAPTURE(chunk);
    CHECK(split_tags(stream, chunk) == Bytes{{0, "rank 0 line\n"}, {1, "rank 1 line\ne\n"}});
  }
  CHECK(split_tags("before [1] [a,1]<stdout>: [1,2]<stdin>:\n[3,4]<stdout>:x [5,6]") ==
        Bytes{{-1, "before [1] [a,1]<stdout>: [1,2]<stdin>:\n"}, {4, "x [5,6]"}});
  CHECK(split_tags("[1,0]<stdout>:x[1,0]<std") == Bytes{{0, "x[1,0]<std"}});
  CHECK(split_tags("[1,12345678901234567890]<stdout>:y") ==
        Bytes{{-1, "[1,12345678901234567890]<stdout>:y"}});
}

TEST_CASE("Open MPI's pieces, re-encoded per rank, come back as whole lines", "[rank_records]") {
  Lines lines;
  RecordAssembler assembler([&](const RankLine& l) {
    lines.push_back({l.rank, std::string(l.text), l.complete});
  });
  std::map<long, RecordEncoder> encoders;
  ezpz::output::OpenMpiTagSplitter splitter([&](long rank, std::string_view piece) {
    auto [it, added] = encoders.try_emplace(rank, rank < 0 ? 0 : rank,
                                            [&](std::string_view r) { assembler.feed(r); });
    it->second.feed(piece);
    it->second.send();
  });
  splitter.feed("[1,0]<stdout>:rank 0 li[1,1]<stdout>:rank 1 line\n[1,0]<stdout>:ne\n");
  CHECK(lines == Lines{{1, "rank 1 line", true}, {0, "rank 0 line", true}});
}
