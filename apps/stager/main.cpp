// ezpz-stager: the MPI program behind `ezpz yeet`, one rank per node.
// Rank 0 reads the source once and broadcasts it; every node extracts into a
// staging directory beside DST and the copies are swapped into place only
// when enough nodes hold a verified copy (a two-phase commit over MPI).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ezpz/core/error.hpp"
#include "ezpz/core/json_text.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/stage/destination.hpp"
#include "ezpz/stage/source.hpp"
#include "ezpz/stage/yeet.hpp"
#include "ezpz/sys/paths.hpp"
#include "mpi_comm.hpp"
#include "progress.hpp"
#include "transfer.hpp"

namespace ezpz::stager {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

struct Options {
  std::string source;
  std::string destination;  // may hold {host} and {index}
  bool force = false;
  bool keep_setuid = false;
  bool checksum = false;
  std::string min_success;
  std::string failed_file;
  std::size_t chunk_size = 4u << 20;
  int chunks_in_flight = 8;
  double bwlimit = 0;
  std::string progress = "lines";
  bool cleanup = false;
};

void parse_options(int argc, char** argv, Options& o) {
  CLI::App app{"ezpz-stager: the MPI side of `ezpz yeet` (run by ezpz, one rank per node)"};
  app.add_option("--source", o.source)->required();
  app.add_option("--dst", o.destination)->required();
  app.add_flag("--force", o.force);
  app.add_flag("--keep-setuid", o.keep_setuid);
  app.add_flag("--checksum", o.checksum);
  app.add_option("--min-success", o.min_success);
  app.add_option("--failed-file", o.failed_file);
  app.add_option("--chunk-size", o.chunk_size)->check(CLI::Range(std::size_t{4096}, std::size_t{1} << 30));
  app.add_option("--chunks-in-flight", o.chunks_in_flight)->check(CLI::Range(2, 256));
  app.add_option("--bwlimit", o.bwlimit);
  app.add_option("--progress", o.progress)->check(CLI::IsMember({"tty", "lines", "none"}));
  app.add_flag("--cleanup", o.cleanup);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
}

// Where this rank is, and where its copy goes.
struct Node {
  int rank = 0;
  int size = 1;
  std::string name;         // as the hostfile names it
  std::string machine;      // the real host: simulated nodes share one
  std::string destination;  // DST with {host}/{index} filled in
};

// The variables that name this node (yeet::node_name, yeet::host_in_shell).
Env naming_env() {
  Env env;
  for (const char* name : {"SLURMD_NODENAME", "MPIR_CVAR_CH3_INTERFACE_HOSTNAME"}) {
    if (const char* value = std::getenv(name)) env[name] = value;
  }
  return env;
}

Node this_node(const MpiSession& mpi, const Options& o) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  Node node{mpi.rank(), mpi.size(), yeet::node_name(naming_env(), host), host, ""};
  node.destination =
      yeet::normal_destination(yeet::expand_destination(o.destination, node.name, node.rank));
  return node;
}

// --- phase 1: rank 0 scans the source; everyone learns its fingerprint -----

struct SourceFacts {
  std::string error;
  bool refused = false;  // the source holds an entry yeet refuses: a usage error
  std::string fingerprint;
  bool tarball = false;
  unsigned root_mode = 0755;
  std::uint64_t content_bytes = 0;
  std::uint64_t entries = 0;
};

SourceFacts share_source_facts(const Node& node, const Options& o,
                               std::optional<stage::SourceScan>& scan) {
  Json facts;
  if (node.rank == 0) {
    try {
      scan = stage::scan_source(o.source, o.checksum);
      struct stat st {};
      ::stat(scan->root.c_str(), &st);
      // A copy made with --keep-setuid differs from one without: not up to date.
      std::string fingerprint = scan->fingerprint + (o.keep_setuid ? "+setuid" : "");
      facts = {{"fingerprint", fingerprint},
               {"tarball", scan->tarball},
               {"root_mode", st.st_mode & 07777},
               {"content_bytes", scan->content_bytes},
               {"entries", scan->entries.size()}};
    } catch (const stage::RefusedEntry& e) {
      facts = {{"error", e.what()}, {"refused", true}};
    } catch (const Error& e) {
      facts = {{"error", e.what()}};
    }
  }
  Json shared = Json::parse(broadcast_string(json_text(facts), MPI_COMM_WORLD));
  return {shared.value("error", ""),        shared.value("refused", false),
          shared.value("fingerprint", ""),  shared.value("tarball", false),
          shared.value("root_mode", 0755u), shared.value("content_bytes", 0ull),
          shared.value("entries", 0ull)};
}

// --- phase 2: every node says what its DST holds; rank 0 decides ----------

constexpr std::string_view action_name(yeet::Action action) {
  switch (action) {
    case yeet::Action::transfer:
      return "transfer";
    case yeet::Action::skip:
      return "skip";
    case yeet::Action::refuse:
      return "refuse";
  }
  return "?";
}

// Why this node's DST cannot take a copy. Judged here, not only by ezpz:
// {host} is filled in and symlinks and mounts resolve as this node sees them.
std::string placement_problem(const Node& node, const Options& o) {
  yeet::ResolvedPath source = sys::resolve_path(o.source, /*follow_last=*/true);
  std::optional<yeet::ResolvedPath> seen = source.exists ? std::optional(source) : std::nullopt;
  yeet::ResolvedPath destination = sys::resolve_path(node.destination, /*follow_last=*/false);
  return yeet::destination_problem(node.destination, destination, seen, o.source).value_or("");
}

Json inspect(const Node& node, const SourceFacts& facts, const Options& o) {
  Json report = {{"node", node.name},
                 {"machine", node.machine},
                 {"dst", node.destination},
                 {"refused", placement_problem(node, o)}};
  if (!report["refused"].get<std::string>().empty()) return report;  // touch nothing there
  stage::remove_stale_staging(node.destination, node.name);
  yeet::Holding holding = stage::inspect_destination(node.destination, facts.fingerprint);
  report["action"] = action_name(yeet::decide(holding, o.force));
  return report;
}

struct Decision {
  std::string abort;           // why nothing is transferred (error)
  std::vector<int> transfer;   // ranks that need a copy
};

// Why one node's report stops the whole run ("" when it does not).
std::string refusal(const Json& r) {
  std::string where = fmt::format("{}: {}: ", std::string(r["node"]), std::string(r["dst"]));
  if (std::string why = r.value("refused", ""); !why.empty()) return where + why + "\n";
  if (r.value("action", "") != "refuse") return "";
  return where + fmt::format(
                     "exists and was not made by ezpz yeet (no {}); yeet replaces only its own "
                     "copies, even with --force: remove it first\n",
                     yeet::k_stamp_name);
}

Decision decide(const std::vector<Json>& reports) {
  Decision decision;
  std::map<std::pair<std::string, std::string>, std::string> seen;  // (machine, dst) -> node
  for (std::size_t rank = 0; rank < reports.size(); ++rank) {
    const Json& r = reports[rank];
    std::string node = r["node"];
    auto [it, fresh] = seen.try_emplace({r["machine"], r["dst"]}, node);
    if (!fresh) {
      decision.abort += fmt::format("{} and {} would write the same {} on {}: put {{host}} in --dst\n",
                                    it->second, node, std::string(r["dst"]), std::string(r["machine"]));
    }
    decision.abort += refusal(r);
    if (r.value("action", "") == "transfer") decision.transfer.push_back(static_cast<int>(rank));
  }
  return decision;
}

Decision share_decision(const Node& node, const Json& report) {
  std::vector<std::string> texts = collect(json_text(report), MPI_COMM_WORLD);
  Json decision;
  if (node.rank == 0) {
    std::vector<Json> reports;
    for (const std::string& text : texts) reports.push_back(Json::parse(text));
    Decision d = decide(reports);
    decision = {{"abort", d.abort}, {"transfer", d.transfer}};
  }
  Json shared = Json::parse(broadcast_string(json_text(decision), MPI_COMM_WORLD));
  return {shared["abort"], shared["transfer"].get<std::vector<int>>()};
}

// --- phase 3: the stream ------------------------------------------------------

struct Prepared {
  std::string staging;
  std::string root;   // what goes to DST: staging, or the one directory a tarball held
  std::string error;
  std::uint64_t entries = 0;
  stage::StreamResult sent;  // rank 0: what was read and broadcast
  std::optional<std::uint32_t> crc;  // of the stream, when it was sent to another node
  std::vector<std::string> warnings;  // what patching the environment had to leave
};

// A tarball made with `tar -C parent -czf env.tar.gz env` holds one directory:
// that directory becomes DST (tar --strip-components=1, without losing
// libarchive's path checks by rewriting names).
std::string staged_root(const std::string& staging, bool tarball) {
  if (!tarball) return staging;
  std::vector<fs::directory_entry> top{fs::directory_iterator(staging), fs::directory_iterator()};
  if (top.size() == 1 && top[0].is_directory() && !top[0].is_symlink()) return top[0].path().string();
  return staging;
}

void finish_copy(Prepared& p, const Node& node, const Options& o, const SourceFacts& facts,
                 const stage::ExtractResult& extracted, std::optional<std::uint32_t> crc) {
  p.root = staged_root(p.staging, facts.tarball);
  if (!facts.tarball) fs::permissions(p.root, static_cast<fs::perms>(facts.root_mode));
  // A directory that does not say where it was made is taken to be where it
  // was made; a tarball's path says nothing about that.
  std::string old_prefix = stage::python_env_prefix(p.root).value_or(facts.tarball ? "" : o.source);
  p.warnings = stage::patch_python_env(p.root, old_prefix, node.destination).warnings;
  stage::write_stamp(p.root, {facts.fingerprint, o.source, crc ? fmt::format("crc32:{:08x}", *crc) : "none (one node)",
                              extracted.bytes, extracted.entries});
}

Prepared stream(const Node& node, const Options& o, const SourceFacts& facts,
                const Decision& decision, const stage::SourceScan* scan, Progress& progress) {
  Prepared prepared;
  bool needs_copy = std::count(decision.transfer.begin(), decision.transfer.end(), node.rank) > 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, needs_copy || node.rank == 0 ? 0 : MPI_UNDEFINED, node.rank, &comm);
  if (comm == MPI_COMM_NULL) return prepared;
  if (needs_copy) {
    try {
      prepared.staging = stage::make_staging_dir(node.destination, node.name);
    } catch (const Error& e) {
      prepared.error = e.what();
    }
  }
  StreamSettings settings{o.chunk_size, o.chunks_in_flight, o.bwlimit, facts.tarball,
                          o.keep_setuid};
  StreamOutcome outcome = run_stream(comm, scan, settings, prepared.staging,
                                     [&](std::uint64_t bytes) { progress.bytes(bytes); });
  MPI_Comm_free(&comm);
  prepared.sent = outcome.sent;
  if (outcome.hashed) prepared.crc = outcome.crc;
  if (!prepared.sent.error.empty()) prepared.error = prepared.sent.error;
  if (!needs_copy || !prepared.error.empty()) return prepared;
  prepared.error = outcome.stream_error.empty() ? outcome.extracted->error : outcome.stream_error;
  prepared.entries = outcome.extracted->entries;
  if (prepared.error.empty()) {
    try {
      finish_copy(prepared, node, o, facts, *outcome.extracted,
                  outcome.hashed ? std::optional(outcome.crc) : std::nullopt);
    } catch (const std::exception& e) {
      prepared.error = e.what();
    }
  }
  // Every node patches the same files the same way: the first to copy speaks for all.
  if (node.rank == decision.transfer.front()) {
    for (const std::string& warning : prepared.warnings) {
      std::fprintf(stderr, "ezpz yeet: warning: %s: %s\n", node.name.c_str(), warning.c_str());
    }
  }
  return prepared;
}

// --- phase 4: commit where enough nodes succeeded -----------------------------

struct Tally {
  std::vector<std::string> failures;  // "node: why"
  std::vector<std::string> failed_nodes;
  int copied = 0;
  int current = 0;
  int discarded = 0;  // ready, but not committed because too few were
};

Tally tally(const std::vector<Json>& reports) {
  Tally t;
  for (const Json& r : reports) {
    std::string error = r.value("error", "");
    if (!error.empty()) {
      t.failures.push_back(fmt::format("{}: {}: {}", std::string(r["node"]), std::string(r["dst"]), error));
      t.failed_nodes.push_back(r["node"]);
    } else if (r.value("copied", false)) {
      ++t.copied;
    } else if (r.value("discarded", false)) {
      ++t.discarded;
    } else {
      ++t.current;
    }
  }
  return t;
}

std::vector<Json> parse_all(const std::vector<std::string>& texts) {
  std::vector<Json> reports;
  for (const std::string& text : texts) reports.push_back(Json::parse(text));
  return reports;
}

long required_nodes(const Options& o, int nodes) {
  if (o.min_success.empty()) return nodes;
  return yeet::parse_min_success(o.min_success).nodes_required(nodes);
}

bool share_commit_decision(const Node& node, const Json& report, const Options& o, Progress& progress) {
  std::vector<std::string> texts =
      collect(json_text(report), MPI_COMM_WORLD, [&](int rank, const std::string& ready) {
        if (Json::parse(ready).value("error", "").empty()) progress.node_done(rank);
      });
  char commit = 0;
  if (node.rank == 0) {
    Tally t = tally(parse_all(texts));
    commit = t.copied + t.current >= required_nodes(o, node.size) ? 1 : 0;
  }
  broadcast(&commit, 1, MPI_COMM_WORLD);
  return commit != 0;
}

Json commit_or_discard(const Node& node, Prepared& p, bool commit) {
  Json report = {{"node", node.name}, {"dst", node.destination}, {"error", p.error}};
  if (p.staging.empty()) return report;
  if (commit && p.error.empty()) {
    try {
      stage::commit_staging(p.root, node.destination);
      report["copied"] = true;
    } catch (const Error& e) {
      report["error"] = e.what();
    }
  } else if (p.error.empty()) {
    report["discarded"] = true;
  }
  stage::discard_staging(p.staging);
  return report;
}

// --- reporting (rank 0) --------------------------------------------------------

// The kernel's count of bytes this process passed through read(2): an
// independent check that the source was read once.
unsigned long long kernel_read_bytes() {
  std::ifstream io("/proc/self/io");
  std::string key;
  unsigned long long value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

void write_failed_file(const std::string& path, const std::vector<std::string>& nodes) {
  std::string temporary = path + ".tmp";
  std::error_code made;  // the default's directory (~/.cache/ezpz/yeet) may not exist yet
  fs::create_directories(fs::path(path).parent_path(), made);
  std::ofstream out(temporary, std::ios::trunc);
  for (const std::string& node : nodes) out << node << '\n';
  out.close();
  std::error_code error;
  if (out) fs::rename(temporary, path, error);
  if (!out || error) {
    fs::remove(temporary, error);
    std::fprintf(stderr, "ezpz yeet: %s: cannot write the failed-nodes file\n", path.c_str());
  }
}

int report(const Node& node, const Options& o, const Tally& t, bool committed, double seconds,
           const stage::StreamResult& sent, std::optional<std::uint32_t> crc) {
  if (!committed) {
    std::fprintf(stderr, "ezpz yeet: nothing changed: %d of %d nodes ready, %ld required%s\n",
                 t.copied + t.current + t.discarded, node.size, required_nodes(o, node.size),
                 o.min_success.empty() ? " (all; see --min-success)" : "");
  }
  if (!o.failed_file.empty()) {
    if (t.failed_nodes.empty()) {
      std::error_code ignored;
      fs::remove(o.failed_file, ignored);
    } else {
      write_failed_file(o.failed_file, t.failed_nodes);
    }
  }
  for (const std::string& failure : t.failures) std::fprintf(stderr, "ezpz yeet: %s\n", failure.c_str());
  std::string summary = fmt::format(
      "ezpz yeet: {} -> {} on {} node{}: {} copied, {} up to date, {} failed ({:.2f} s)", o.source,
      o.destination, node.size, node.size == 1 ? "" : "s", t.copied, t.current,
      t.failed_nodes.size(), seconds);
  std::printf("%s\n", summary.c_str());
  if (sent.stream_bytes > 0) {
    std::string check = crc ? fmt::format("broadcast {} (crc32 {:08x})",
                                          yeet::format_bytes(static_cast<double>(sent.stream_bytes)), *crc)
                            : fmt::format("streamed {} to this node only",
                                          yeet::format_bytes(static_cast<double>(sent.stream_bytes)));
    std::printf("  read %llu source bytes once (kernel read(2) total on this rank: %llu); %s\n",
                static_cast<unsigned long long>(sent.source_bytes_read), kernel_read_bytes(),
                check.c_str());
  } else if (t.failures.empty()) {
    std::printf("  up to date on every node: nothing transferred\n");
  }
  if (!t.failed_nodes.empty() && !o.failed_file.empty()) {
    std::printf("  failed nodes written to %s (ezpz launch --exclude-file %s)\n", o.failed_file.c_str(),
                o.failed_file.c_str());
  }
  if (!committed) return 1;
  std::string example = yeet::expand_destination(o.destination, node.name, 0);
  yeet::EnvKind kind = fs::exists(example + "/conda-meta") ? yeet::EnvKind::conda
                       : fs::exists(example + "/pyvenv.cfg") ? yeet::EnvKind::venv
                                                            : yeet::EnvKind::other;
  const int staged = node.size - static_cast<int>(t.failed_nodes.size());
  std::printf("%s\n", yeet::usage_hint(kind, o.destination, yeet::host_in_shell(naming_env()),
                                       yeet::staged_nodes(staged, node.size))
                          .c_str());
  return 0;
}

// Each line of `text` on stderr, after `prefix`.
void print_lines(std::string_view prefix, std::string_view text) {
  for (std::string_view line : split_lines(text)) {
    std::fprintf(stderr, "%.*s%.*s\n", static_cast<int>(prefix.size()), prefix.data(),
                 static_cast<int>(line.size()), line.data());
  }
}

int run_steps(const MpiSession& mpi, int argc, char** argv) {
  Options o;
  parse_options(argc, argv, o);
  o.source = fs::absolute(o.source).lexically_normal().string();
  Node node = this_node(mpi, o);
  auto started = std::chrono::steady_clock::now();
  Progress progress(node.rank == 0 ? o.progress : "none", node.size);

  if (o.cleanup) {
    // The killed run's ranks may still be exiting: give their locks a moment.
    int removed = stage::remove_stale_staging(node.destination, node.name, 5.0);
    if (removed > 0) std::fprintf(stderr, "ezpz yeet: %s: removed %d leftover staging director%s\n",
                                  node.name.c_str(), removed, removed == 1 ? "y" : "ies");
    return 0;
  }
  std::optional<stage::SourceScan> scan;
  SourceFacts facts = share_source_facts(node, o, scan);
  if (!facts.error.empty()) {
    if (node.rank == 0) {
      std::fprintf(stderr, "%s%s\n",
                   facts.refused ? "ezpz: error: " : "ezpz yeet: ", facts.error.c_str());
    }
    return facts.refused ? 2 : 1;
  }
  progress.total(facts.content_bytes);
  Decision decision = share_decision(node, inspect(node, facts, o));
  if (!decision.abort.empty()) {
    if (node.rank == 0) print_lines("ezpz yeet: ", decision.abort);
    return 1;
  }
  for (int rank = 0; rank < node.size; ++rank) {
    if (!std::count(decision.transfer.begin(), decision.transfer.end(), rank))
      progress.node_done(rank);
  }
  Prepared prepared;
  if (!decision.transfer.empty()) {
    prepared = stream(node, o, facts, decision, scan ? &*scan : nullptr, progress);
  }
  Json ready = {{"node", node.name}, {"dst", node.destination}, {"error", prepared.error}};
  bool commit = share_commit_decision(node, ready, o, progress);
  std::vector<std::string> finals =
      collect(json_text(commit_or_discard(node, prepared, commit)), MPI_COMM_WORLD);
  int status = 0;
  if (node.rank == 0) {
    progress.done();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    status = report(node, o, tally(parse_all(finals)), commit, seconds, prepared.sent, prepared.crc);
  }
  broadcast(&status, sizeof status, MPI_COMM_WORLD);
  return status;
}

int run(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  try {
    return run_steps(mpi, argc, argv);
  } catch (const std::exception& e) {
    // A bug, not a node's failure: say what, and take the whole job down
    // rather than leave the other ranks waiting in a collective.
    std::fprintf(stderr, "ezpz-stager: internal error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 70);
    return 70;
  }
}

}  // namespace
}  // namespace ezpz::stager

int main(int argc, char** argv) { return ezpz::stager::run(argc, argv); }
