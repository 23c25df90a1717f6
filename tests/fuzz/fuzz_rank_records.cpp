// libFuzzer target for the rank records (lib/ezpz/output/rank_records.hpp). The input is a
// script: ranks write bytes (short texts, long runs of one byte, '\r' and '\n' included) and
// go quiet (the relay's flush) in any order; their records share one stream, as the launcher's
// pipe holds them, which the assembler reads in chunks of any size, going quiet itself at any
// point. Oracle: every byte of every rank comes back once, in order per rank; no record is
// longer than k_record_max; no text holds a '\n'; only records reach the stream. With the first
// byte odd, the input is fed to the assembler as it is (garbage): it must not crash; and to
// Open MPI's tag splitter, whole and in chunks: each rank gets the same bytes either way. The
// labelled console of the lines, with its rank index (ranks.idx, rank_index.hpp), gives each
// rank's bytes back, and a cut of both (--record-limit) a prefix of them; garbage as an index
// must not crash; the line cutter hands on the same lines one by one and in runs. The
// de-duplicated console, with bounds and a clock from the input, shows each rank's lines (their
// '\r' left off) every one once, in the rank's order.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ezpz/output/console.hpp"
#include "ezpz/output/rank_index.hpp"
#include "ezpz/output/rank_records.hpp"
#include "tests/support/dedup_lines.hpp"

namespace {

using ezpz::output::RankLine;

void check(bool ok) {
  if (!ok) std::abort();
}

struct Script {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at = 0;
  bool done() const { return at >= size; }
  std::uint8_t next() { return at < size ? data[at++] : 0; }
  std::string_view take(std::size_t n) {
    n = std::min(n, size - at);
    std::string_view out(reinterpret_cast<const char*>(data + at), n);
    at += n;
    return out;
  }
};

// The stream as the launcher's pipe would hold it, and what each rank wrote.
std::string run_ranks(Script& script, std::map<long, std::string>& wrote) {
  std::string stream;
  const long ranks = 1 + script.next() % 4;
  std::vector<ezpz::output::RecordEncoder> encoders;
  for (long rank = 0; rank < ranks; ++rank) {
    encoders.emplace_back(rank * 1000, [&](std::string_view record) {
      check(record.size() <= ezpz::output::k_write_max && record.back() == '\n');
      stream.append(record);
    });
  }
  while (!script.done()) {
    const std::uint8_t op = script.next();
    const long rank = op % ranks;
    std::string bytes;
    switch ((op >> 2) % 4) {
      case 0:
      case 1:
        bytes = script.take(script.next());
        break;
      case 2:
        bytes.assign(std::size_t{script.next()} * 64, static_cast<char>(script.next()));
        break;
      case 3:  // a quiet spell (the partial line goes too), or the end of one read
        (op >> 4) & 1 ? encoders[rank].flush() : encoders[rank].send();
        continue;
    }
    encoders[rank].feed(bytes);
    wrote[rank * 1000] += bytes;
  }
  for (auto& encoder : encoders) encoder.flush();
  return stream;
}

// Each rank's bytes back from a console (labelled, or de-duplicated) and its index; from a cut
// of both, a prefix.
void check_index(const std::string& shown, const std::string& index, std::string_view header_text,
                 const std::map<long, std::string>& wrote, std::uint32_t state) {
  const std::string header(header_text);
  const std::size_t cut = state % (shown.size() + 1);
  const std::string cut_entries = ezpz::output::cut_index(index, cut);
  for (const auto& [rank, bytes] : wrote) {
    check(ezpz::output::indexed_rank_output(shown, header + index, rank) == bytes);
    const std::string part =
        ezpz::output::indexed_rank_output(shown.substr(0, cut), header + cut_entries, rank);
    check(bytes.compare(0, part.size(), part) == 0);
  }
}

// The line cutter hands on the same lines and pieces whether whole lines go one by one or in
// runs (the labelled console's feed), for any bytes in any chunks.
void check_cutter(std::string_view stream, std::uint8_t seed) {
  using Pieces = std::vector<std::pair<std::string, bool>>;
  Pieces one_by_one;
  Pieces in_runs;
  ezpz::output::LineCutter one(1 + seed % 16);
  ezpz::output::LineCutter runs(1 + seed % 16);
  const auto put_one = [&](std::string_view text, bool complete) {
    one_by_one.emplace_back(text, complete);
  };
  const auto put_run = [&](std::string_view text, bool complete) {
    in_runs.emplace_back(text, complete);
  };
  const auto put_lines = [&](std::string_view lines) {
    check(!lines.empty() && lines.back() == '\n' && lines.find('\r') == std::string_view::npos);
    for (std::size_t end; (end = lines.find('\n')) != std::string_view::npos;) {
      put_run(lines.substr(0, end), true);
      lines.remove_prefix(end + 1);
    }
  };
  std::uint32_t state = seed | 1u;
  for (std::size_t at = 0; at < stream.size();) {
    state = state * 1103515245u + 12345u;
    const std::string_view chunk = stream.substr(at, 1 + (state >> 8) % 97);
    one.feed(chunk, put_one);
    runs.feed(chunk, put_run, put_lines);
    at += chunk.size();
  }
  one.flush(put_one);
  runs.flush(put_run);
  check(one_by_one == in_runs);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Script script{data + 1, size - 1};
  std::map<long, std::string> wrote;
  std::map<long, std::string> got;
  ezpz::output::Console console(ezpz::output::ConsoleMode::label);
  std::string shown;
  std::string index;
  console.index_into(&index);
  // Tight bounds from the first byte, so that the window and both caps all show lines.
  ezpz::output::Console dedup(ezpz::output::ConsoleMode::dedup,
                              {.window = ezpz::output::Millis(data[0] % 4),
                               .max_lines = 1u + data[0] / 4 % 8,
                               .max_bytes = 256u + data[0] / 32 * 64});
  ezpz::output::Millis now(0);
  std::string deduped;
  std::string dedup_index;
  dedup.index_into(&dedup_index);
  std::map<long, std::vector<std::string>> texts;  // each rank's lines as dedup shows them
  ezpz::output::RecordAssembler assembler([&](const RankLine& line) {
    check(line.text.find('\n') == std::string_view::npos);
    got[line.rank].append(line.text).append(line.complete ? "\n" : "");
    console.line(line, ezpz::output::Millis(0), shown);  // and its entry into `index`
    if (line.rank < 0 || line.control) return;
    dedup.line(line, now, deduped);
    texts[line.rank].emplace_back(
        line.text.ends_with('\r') ? line.text.substr(0, line.text.size() - 1) : line.text);
  });
  const bool garbage = data[0] % 2 == 1;
  const std::string stream = garbage ? std::string(script.take(size)) : run_ranks(script, wrote);
  // Chunks and quiet spells from a generator seeded by the first byte: any cut at all.
  std::uint32_t state = data[0] | 1u;
  for (std::size_t at = 0; at < stream.size();) {
    state = state * 1103515245u + 12345u;
    const std::size_t chunk = 1 + (state >> 8) % (state % 3 == 0 ? 7 : 5000);
    assembler.feed(std::string_view(stream).substr(at, chunk));
    at += chunk;
    if ((state >> 4) % 17 == 0) assembler.flush();
    now += ezpz::output::Millis((state >> 12) % 3);
    dedup.tick(now, deduped);
  }
  assembler.finish();
  dedup.finish(deduped);
  if (garbage) {
    // Open MPI's tag splitter: the same bytes per rank, fed whole or in the chunks above.
    std::map<long, std::string> whole;
    std::map<long, std::string> chunked;
    ezpz::output::OpenMpiTagSplitter one([&](long rank, std::string_view b) { whole[rank] += b; });
    ezpz::output::OpenMpiTagSplitter many(
        [&](long rank, std::string_view b) { chunked[rank] += b; });
    one.feed(stream);
    one.finish();
    state = data[0] | 1u;
    for (std::size_t at = 0; at < stream.size();) {
      state = state * 1103515245u + 12345u;
      const std::size_t chunk = 1 + (state >> 8) % 64;
      many.feed(std::string_view(stream).substr(at, chunk));
      at += chunk;
    }
    many.finish();
    check(whole == chunked);
    check_cutter(stream, data[0]);
    const std::string header(ezpz::output::k_rank_index_header);
    ezpz::output::indexed_rank_output(stream, header + stream, 0);
    return 0;
  }
  std::erase_if(wrote, [](const auto& entry) { return entry.second.empty(); });
  check(got == wrote);
  check(ezpz::testing::texts_per_rank(deduped) == texts);
  check_index(shown, index, ezpz::output::k_rank_index_header, wrote, state);
  check_index(deduped, dedup_index, ezpz::output::k_rank_index_header_groups, wrote, state);
  return 0;
}
