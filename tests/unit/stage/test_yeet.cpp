#include <sys/stat.h>

#include "ezpz/core/error.hpp"
#include "ezpz/stage/yeet.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using namespace ezpz::yeet;

TEST_CASE("the source defaults to the active venv, then conda", "[yeet]") {
  CHECK(default_source({{"VIRTUAL_ENV", "/v"}, {"CONDA_PREFIX", "/c"}}) == "/v");
  CHECK(default_source({{"VIRTUAL_ENV", ""}, {"CONDA_PREFIX", "/c"}}) == "/c");
  CHECK_FALSE(default_source({}).has_value());
}

// Beside doctor's failed-nodes file, never in the current directory (it was
// ./ezpz-yeet-failed-nodes.txt, left in whatever checkout yeet ran from).
TEST_CASE("the failed-nodes file goes to the run directory, else the cache", "[yeet]") {
  CHECK(default_failed_file({{"EZPZ_RUN_DIR", "/r"}, {"HOME", "/h"}}, "17.pbs") ==
        "/r/yeet-failed-nodes-17.pbs.txt");
  CHECK(default_failed_file({{"HOME", "/h"}}, "") ==
        "/h/.cache/ezpz/yeet/yeet-failed-nodes-local.txt");
  CHECK(default_failed_file({{"XDG_CACHE_HOME", "/c"}, {"HOME", "/h"}}, "9") ==
        "/c/ezpz/yeet/yeet-failed-nodes-9.txt");
  CHECK(default_failed_file({{"EZPZ_RUN_DIR", ""}}, "9") == std::nullopt);
  CHECK(default_failed_file({}, "9") == std::nullopt);
}

TEST_CASE("names and default destinations drop the tarball suffix", "[yeet]") {
  struct Row {
    const char* source;
    const char* name;
    bool tarball;
  };
  const Row rows[] = {
      {"/p/venv", "venv", false},
      {"/p/venv/", "venv", false},
      {"/p/venv.tar.gz", "venv", true},
      {"/p/venv.tgz", "venv", true},
      {"/p/venv.tar.zst", "venv", true},
      {"/p/venv.tar", "venv", true},
      {"/p/venv.tar.xz", "venv", true},
      {"/p/venv.tar.bz2", "venv", true},
      {"relative.tar.gz", "relative", true},
      {"/p/.tar", ".tar", true},
      {"/p/env.gz", "env.gz", false},
  };
  for (const Row& row : rows) {
    INFO(row.source);
    CHECK(source_name(row.source) == row.name);
    CHECK(is_tarball_name(row.source) == row.tarball);
    CHECK(default_destination(row.source) == std::string("/tmp/") + row.name);
  }
}

TEST_CASE("the destination may name the node", "[yeet]") {
  CHECK(expand_destination("/tmp/env", "n01", 0) == "/tmp/env");
  CHECK(expand_destination("/lus/{host}/env-{index}", "x4102c5s2b0n0", 17) ==
        "/lus/x4102c5s2b0n0/env-17");
  CHECK(expand_destination("/a/{host}/{host}", "n", 1) == "/a/n/n");
}

TEST_CASE("the node name comes from Slurm, then Hydra, then the host name", "[yeet]") {
  CHECK(node_name({{"SLURMD_NODENAME", "n03"}, {"MPIR_CVAR_CH3_INTERFACE_HOSTNAME", "x"}},
                  "login.example.org") == "n03");
  CHECK(node_name({{"MPIR_CVAR_CH3_INTERFACE_HOSTNAME", "n02"}}, "h.example.org") == "n02");
  CHECK(node_name({}, "x4102c5s2b0n0.hostmgmt2000.cm.aurora.alcf.anl.gov") == "x4102c5s2b0n0");
}

TEST_CASE("--min-success takes a count or a fraction", "[yeet]") {
  CHECK(parse_min_success("3").nodes_required(4) == 3);
  CHECK(parse_min_success("0.5").nodes_required(5) == 3);  // ceil
  CHECK(parse_min_success("0.99").nodes_required(100) == 99);
  CHECK(parse_min_success("1").nodes_required(4) == 1);  // a count, not 100%
  CHECK(parse_min_success("1.0").nodes_required(4) == 4);
  CHECK(MinSuccess{}.nodes_required(7) == 7);
  struct Bad {
    const char* text;
    const char* message;
  };
  const Bad bad[] = {
      {"0", "--min-success: expected at least 1 node, got 0"},
      {"1.5", "--min-success: expected a node count or a fraction in (0, 1], got \"1.5\""},
      {"-1", "--min-success: expected a node count or a fraction in (0, 1], got \"-1\""},
      {"half", "--min-success: expected a node count or a fraction in (0, 1], got \"half\""},
      {"", "--min-success: expected a node count or a fraction in (0, 1], got \"\""},
      {"0.0", "--min-success: expected a node count or a fraction in (0, 1], got \"0.0\""},
  };
  for (const Bad& row : bad) {
    INFO(row.text);
    CHECK_THROWS_WITH(parse_min_success(row.text), row.message);
  }
}

TEST_CASE("what a destination holds decides what happens", "[yeet]") {
  Stamp stamp{"f1", "/src", "crc32:0", 10, 2};
  std::string ours = stamp_json(stamp);
  CHECK(classify(std::nullopt, false, false, "f1") == Holding::absent);
  CHECK(classify(std::nullopt, true, true, "f1") == Holding::absent);
  CHECK(classify(ours, true, false, "f1") == Holding::current);
  CHECK(classify(ours, true, false, "f2") == Holding::stale);
  CHECK(classify(std::nullopt, true, false, "f1") == Holding::foreign);
  CHECK(classify(std::string("{\"made_by\":\"someone\"}"), true, false, "f1") == Holding::foreign);
  CHECK(classify(std::string("not json"), true, false, "f1") == Holding::foreign);
  CHECK(classify(std::string("{\"made_by\":1}"), true, false, "f1") == Holding::foreign);

  // --force copies again over ezpz's own copy, and never replaces anything else.
  struct Row {
    Holding holding;
    bool force;
    Action action;
  };
  const Row rows[] = {
      {Holding::absent, false, Action::transfer}, {Holding::absent, true, Action::transfer},
      {Holding::stale, false, Action::transfer},  {Holding::stale, true, Action::transfer},
      {Holding::current, false, Action::skip},    {Holding::current, true, Action::transfer},
      {Holding::foreign, false, Action::refuse},  {Holding::foreign, true, Action::refuse},
  };
  for (const Row& row : rows) {
    INFO(static_cast<int>(row.holding) << " force=" << row.force);
    CHECK(decide(row.holding, row.force) == row.action);
  }
}

TEST_CASE("DST is made normal before any guard sees it", "[yeet]") {
  struct Row {
    const char* given;
    const char* normal;
    const char* label;
  };
  const Row rows[] = {
      {"/tmp/env", "/tmp/env", "/tmp/env"},
      {"/tmp/env/", "/tmp/env", "/tmp/env"},
      {"/tmp/../tmp", "/tmp", "/tmp/../tmp (/tmp)"},
      {"/tmp/../home/user", "/home/user", "/tmp/../home/user (/home/user)"},
      {"/tmp/./x//y/", "/tmp/x/y", "/tmp/./x//y (/tmp/x/y)"},
      {"/..", "/", "/.. (/)"},
      {"/a/{host}/../b", "/a/b", "/a/{host}/../b (/a/b)"},
      {"tmp/env", "tmp/env", "tmp/env"},
      {"", "", ""},
  };
  for (const Row& row : rows) {
    INFO(row.given);
    CHECK(normal_destination(row.given) == row.normal);
    CHECK(destination_label(row.given, normal_destination(row.given)) == row.label);
  }
}

TEST_CASE("DST may not be top-level, the source, inside it, or above it", "[yeet]") {
  // Identities as stat() gives them: / is 1, /x 9, /x/p 2, /x/p/src 3,
  // /x/p/src/copy 4, /x/other 5; /x/link-to-src resolves to /x/p/src.
  auto at = [](const char* path, std::vector<unsigned long long> inodes, bool exists) {
    ResolvedPath resolved{path, {}, exists};
    for (unsigned long long inode : inodes) resolved.chain.push_back({7, inode});
    return resolved;
  };
  const ResolvedPath src = at("/x/p/src", {1, 9, 2, 3}, true);
  struct Row {
    const char* name;
    const char* destination;
    ResolvedPath resolved;
    std::optional<ResolvedPath> source;
    std::optional<std::string> problem;
  };
  const Row rows[] = {
      {"elsewhere", "/x/other/env", at("/x/other/env", {1, 9, 5}, false), src, std::nullopt},
      {"a sibling", "/x/p/copy", at("/x/p/copy", {1, 9, 2}, false), src, std::nullopt},
      {"relative", "tmp/env", at("tmp/env", {}, false), src, "expected an absolute path"},
      {"empty", "", at("", {}, false), src, "expected an absolute path"},
      {"top-level", "/tmp", at("/tmp", {1, 6}, true), src,
       "refusing a top-level directory; name one inside it"},
      {"the root", "/", at("/", {1}, true), src,
       "refusing a top-level directory; name one inside it"},
      {"top-level once resolved", "/lnk/tmp", at("/tmp", {1, 6}, true), src,
       "resolves to the top-level directory /tmp; name one inside it"},
      {"the source", "/x/p/src", at("/x/p/src", {1, 9, 2, 3}, true), src,
       "inside the source /x/p/src"},
      {"inside it", "/x/p/src/copy", at("/x/p/src/copy", {1, 9, 2, 3}, false), src,
       "inside the source /x/p/src"},
      {"inside it, existing", "/x/p/src/copy", at("/x/p/src/copy", {1, 9, 2, 3, 4}, true), src,
       "inside the source /x/p/src"},
      {"inside it through a symlink", "/x/link-to-src/copy",
       at("/x/p/src/copy", {1, 9, 2, 3}, false), src, "inside the source /x/p/src"},
      {"its parent", "/x/p", at("/x/p", {1, 9, 2}, true), src,
       "holds the source /x/p/src; replacing it would delete the source"},
      {"its parent through a bind mount", "/mnt/bind", at("/mnt/bind", {1, 8, 2}, true), src,
       "holds the source /x/p/src; replacing it would delete the source"},
      {"a parent that does not exist yet cannot hold it", "/x/q", at("/x/q", {1, 9}, false), src,
       std::nullopt},
      {"a source this node cannot see", "/x/p/src/copy", at("/x/p/src/copy", {1, 9, 2, 3}, false),
       std::nullopt, std::nullopt},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    CHECK(destination_problem(row.destination, row.resolved, row.source, "/x/p/src") ==
          row.problem);
  }
}

TEST_CASE("devices, FIFOs and sockets are refused; setuid bits dropped unless kept", "[yeet]") {
  struct Row {
    unsigned mode;
    std::optional<std::string> why;
  };
  const Row rows[] = {
      {S_IFREG | 0644, std::nullopt},
      {S_IFDIR | 0755, std::nullopt},
      {S_IFLNK | 0777, std::nullopt},
      {S_IFCHR | 0666, "is a character device; yeet copies only files, directories and symlinks"},
      {S_IFBLK | 0660, "is a block device; yeet copies only files, directories and symlinks"},
      {S_IFIFO | 0644, "is a FIFO; yeet copies only files, directories and symlinks"},
      {S_IFSOCK | 0755, "is a socket; yeet copies only files, directories and symlinks"},
  };
  for (const Row& row : rows) {
    INFO(std::oct << row.mode);
    CHECK(refused_entry_type(row.mode) == row.why);
  }
  CHECK(staged_mode(S_IFREG | 04755, false) == (S_IFREG | 0755));
  CHECK(staged_mode(S_IFREG | 02755, false) == (S_IFREG | 0755));
  CHECK(staged_mode(S_IFDIR | 03775, false) == (S_IFDIR | 01775));  // the sticky bit stays
  CHECK(staged_mode(06755, false) == 0755);
  CHECK(staged_mode(06755, true) == 06755);
  CHECK(staged_mode(0644, false) == 0644);
}

TEST_CASE("the stamp round-trips", "[yeet]") {
  Stamp stamp{"0123456789abcdef", "/lus/env", "crc32:9e856721", 1073741824, 20002};
  auto parsed = parse_stamp(stamp_json(stamp));
  REQUIRE(parsed.has_value());
  CHECK(parsed->fingerprint == stamp.fingerprint);
  CHECK(parsed->source == stamp.source);
  CHECK(parsed->stream_hash == stamp.stream_hash);
  CHECK(parsed->bytes == stamp.bytes);
  CHECK(parsed->entries == stamp.entries);
  CHECK_FALSE(parse_stamp("{\"made_by\":\"ezpz yeet\"}").has_value());  // no fingerprint
}

TEST_CASE("the fingerprint changes with anything rsync's quick check sees", "[yeet]") {
  auto of = [](std::string path, unsigned mode, std::uint64_t size, std::int64_t mtime,
               std::string link) {
    Fingerprint f;
    f.add_entry(path, "file", mode, size, mtime, link);
    return f.value();
  };
  std::string base = of("a/b.py", 0644, 10, 5, "");
  CHECK(base == of("a/b.py", 0644, 10, 5, ""));
  CHECK(base != of("a/c.py", 0644, 10, 5, ""));
  CHECK(base != of("a/b.py", 0755, 10, 5, ""));
  CHECK(base != of("a/b.py", 0644, 11, 5, ""));
  CHECK(base != of("a/b.py", 0644, 10, 6, ""));
  CHECK(base != of("a/b.py", 0644, 10, 5, "x"));
  Fingerprint split1, split2;  // field boundaries count
  split1.add_entry("ab", "file", 0, 0, 0, "");
  split2.add_entry("a", "bfile", 0, 0, 0, "");
  CHECK(split1.value() != split2.value());
  Fingerprint content1, content2;
  content1.add_content(1);
  content2.add_content(2);
  CHECK(content1.value() != content2.value());
}

TEST_CASE("a moved venv's texts are rewritten to the new prefix", "[yeet]") {
  CHECK(replace_prefix("VIRTUAL_ENV=\"/old/venv\"\n", "/old/venv", "/tmp/venv") ==
        "VIRTUAL_ENV=\"/tmp/venv\"\n");
  CHECK_FALSE(replace_prefix("nothing here", "/old/venv", "/tmp/venv").has_value());
  CHECK_FALSE(replace_prefix("/same", "/same", "/same").has_value());
  CHECK_FALSE(replace_prefix("text", "", "/x").has_value());
  CHECK(replace_prefix("/o:/o/bin", "/o", "/n") == "/n:/n/bin");

  // Only the "#!" line changes.
  CHECK(rewrite_shebang("#!/old/venv/bin/python3\nimport sys\n# /old/venv stays\n", "/old/venv",
                        "/tmp/venv") == "#!/tmp/venv/bin/python3\nimport sys\n# /old/venv stays\n");
  CHECK_FALSE(rewrite_shebang("#!/usr/bin/env python3\n", "/old/venv", "/tmp/venv").has_value());
  CHECK_FALSE(rewrite_shebang("\x7f"
                              "ELF/old/venv",
                              "/old/venv", "/tmp/venv")
                  .has_value());
  CHECK(rewrite_shebang("#!/old/venv/bin/python", "/old/venv", "/n") == "#!/n/bin/python");

  CHECK(venv_prefix_from_activate("# x\nVIRTUAL_ENV=\"/home/u/venv\"\nexport VIRTUAL_ENV\n") ==
        "/home/u/venv");
  CHECK(venv_prefix_from_activate("# x\nVIRTUAL_ENV='/q/v'\n") == "/q/v");
  CHECK(venv_prefix_from_activate("# x\nVIRTUAL_ENV=/bare\nexport\n") == "/bare");
  CHECK(venv_prefix_from_activate("VIRTUAL_ENV=\"/first/line\"\n") == "/first/line");
  CHECK_FALSE(venv_prefix_from_activate("no venv here\n").has_value());
}

TEST_CASE("a script's #! names the Python, and so the prefix, of a conda env", "[yeet]") {
  struct Row {
    const char* head;
    std::optional<ScriptPython> expected;
  };
  const Row rows[] = {
      {"#!/opt/envs/torch/bin/python3.11\nimport sys\n",
       ScriptPython{"/opt/envs/torch", "python3.11"}},
      {"#!/opt/envs/torch/bin/python\n", ScriptPython{"/opt/envs/torch", "python"}},
      {"#! /e/bin/python3 -E\n", ScriptPython{"/e", "python3"}},
      {"#!/e/bin/python3\r\n", ScriptPython{"/e", "python3"}},
      {"#!/e/bin/python3", ScriptPython{"/e", "python3"}},  // no newline in the head read
      // conda's form when the prefix is too long for a #! line
      {"#!/bin/sh\n'''exec' \"/a/very/long/prefix/bin/python3.12\" \"$0\" \"$@\"\n' '''\n",
       ScriptPython{"/a/very/long/prefix", "python3.12"}},
      {"#!/bin/sh\necho not conda\n", std::nullopt},
      {"#!/bin/sh\n'''exec' \"/no/closing/quote\n", std::nullopt},
      {"#!/usr/bin/env python3\n", std::nullopt},  // names no prefix
      {"#!/bin/python3\n", std::nullopt},          // "/" is no prefix
      {"#!relative/bin/python\n", std::nullopt},
      {"#!/e/bin/python3-config\n", std::nullopt},  // not a Python
      {"#!/e/bin/pythonista\n", std::nullopt},
      {"#!/e/bin/perl\n", std::nullopt},
      {"\x7f"
       "ELF\x02\x01",
       std::nullopt},
      {"", std::nullopt},
  };
  for (const Row& row : rows) {
    CAPTURE(row.head);
    CHECK(python_of_script(row.head) == row.expected);
  }
}

TEST_CASE("conda-meta records name the files that hold the prefix", "[yeet]") {
  // The shape conda writes (conda-meta/NAME-VERSION-BUILD.json), trimmed.
  const char* record = R"({
    "name": "python", "version": "3.11.6",
    "files": ["bin/python3.11", "bin/2to3", "lib/python3.11/os.py"],
    "paths_data": {"paths_version": 1, "paths": [
      {"_path": "bin/2to3", "path_type": "hardlink", "file_mode": "text",
       "prefix_placeholder": "/home/conda/feedstock_root/build_artifacts/python_1/_h_env_placehold"},
      {"_path": "bin/python3.11", "path_type": "hardlink", "file_mode": "binary",
       "prefix_placeholder": "/home/conda/feedstock_root/build_artifacts/python_1/_h_env_placehold"},
      {"_path": "lib/python3.11/os.py", "path_type": "hardlink"},
      {"_path": "/etc/passwd", "file_mode": "text", "prefix_placeholder": "/p"},
      {"_path": "lib/../../escape", "file_mode": "text", "prefix_placeholder": "/p"},
      {"_path": "etc/conda/activate.d/x.sh", "prefix_placeholder": "/p"},
      {"file_mode": "text", "prefix_placeholder": "/p"},
      "not an entry"
    ]}})";
  CHECK(conda_prefix_files(record) == std::vector<CondaPrefixFile>{
                                          {"bin/2to3", false},
                                          {"bin/python3.11", true},
                                          {"etc/conda/activate.d/x.sh", false},
                                      });
  CHECK(conda_prefix_files(R"({"name": "old", "files": ["bin/x"]})").empty());
  CHECK(conda_prefix_files(R"({"paths_data": {"paths": "x"}})").empty());
  CHECK_THROWS_WITH(conda_prefix_files("{not json"), "not a JSON document");
}

TEST_CASE("binaries get conda's NUL-padded prefix rewrite", "[yeet]") {
  using namespace std::string_literals;
  struct Row {
    std::string data;
    const char* old_prefix;
    const char* new_prefix;
    std::optional<std::string> expected;
  };
  const Row rows[] = {
      // One C string: replaced and padded, the NUL after it kept.
      {"\x7f"
       "ELF\0/old/env/lib\0tail"s,
       "/old/env", "/n",
       "\x7f"
       "ELF\0/n/lib\0\0\0\0\0\0\0tail"s},
      // Two occurrences in one string: both replaced, the padding after the string.
      {"/old/env/a:/old/env/b\0"s, "/old/env", "/new", "/new/a:/new/b\0\0\0\0\0\0\0\0\0"s},
      // No NUL at the end of the data.
      {"x/old/env"s, "/old/env", "/tmp/ab", "x/tmp/ab\0"s},
      // The same length: nothing to pad.
      {"\0/old/env\0"s, "/old/env", "/new/env", "\0/new/env\0"s},
      // Unchanged, or a longer prefix that cannot fit: nothing written.
      {"no prefix\0"s, "/old/env", "/n", std::nullopt},
      {"/old/env\0"s, "/old/env", "/a/much/longer/prefix", std::nullopt},
      {"/old/env\0"s, "/old/env", "/old/env", std::nullopt},
      {"/old/env\0"s, "", "/n", std::nullopt},
  };
  for (const Row& row : rows) {
    INFO(row.old_prefix << " -> " << row.new_prefix);
    auto got = replace_prefix_padded(row.data, row.old_prefix, row.new_prefix);
    CHECK(got == row.expected);
    if (got) CHECK(got->size() == row.data.size());
  }
}

TEST_CASE("the hint says how to use the copy", "[yeet]") {
  CHECK(usage_hint(EnvKind::venv, "/tmp/v") ==
        "To use it on every node:\n"
        "  deactivate 2>/dev/null; source /tmp/v/bin/activate\n"
        "  ezpz launch -- python3 train.py\n"
        "(the copy is node-local: activate it in the job, where the ranks run)");
  CHECK(usage_hint(EnvKind::conda, "/tmp/c") ==
        "To use it on every node:\n"
        "  conda deactivate; conda activate /tmp/c\n"
        "  ezpz launch -- python3 train.py");
  CHECK(usage_hint(EnvKind::other, "/tmp/data") == "Staged to /tmp/data on every node.");
}

TEST_CASE("the hint says how many nodes have the copy when some failed", "[yeet]") {
  // It said "on every node" after --min-success let a failed node pass.
  CHECK(staged_nodes(8, 8) == "every node");
  CHECK(staged_nodes(7, 8) == "7 of 8 nodes (the failed ones have no copy)");
  CHECK(usage_hint(EnvKind::other, "/tmp/data", "$(hostname -s)", staged_nodes(7, 8)) ==
        "Staged to /tmp/data on 7 of 8 nodes (the failed ones have no copy).");
  CHECK(usage_hint(EnvKind::venv, "/tmp/v", "$(hostname -s)", staged_nodes(3, 4)) ==
        "To use it on 3 of 4 nodes (the failed ones have no copy):\n"
        "  deactivate 2>/dev/null; source /tmp/v/bin/activate\n"
        "  ezpz launch -- python3 train.py\n"
        "(the copy is node-local: activate it in the job, where the ranks run)");
}

TEST_CASE("the hint can be pasted: {host} is how a shell names the node", "[yeet]") {
  // It printed "source /tmp/x-{host}/bin/activate": a path that exists on no node.
  CHECK(usage_hint(EnvKind::venv, "/tmp/x-{host}") ==
        "To use it on every node:\n"
        "  deactivate 2>/dev/null; source \"/tmp/x-$(hostname -s)/bin/activate\"\n"
        "  ezpz launch -- python3 train.py\n"
        "(the copy is node-local: activate it in the job, where the ranks run)");
  CHECK(usage_hint(EnvKind::conda, "/lus/{host}/c", host_in_shell({{"SLURMD_NODENAME", "n1"}})) ==
        "To use it on every node:\n"
        "  conda deactivate; conda activate \"/lus/${SLURMD_NODENAME:-$(hostname -s)}/c\"\n"
        "  ezpz launch -- python3 train.py");
  CHECK(usage_hint(EnvKind::conda, "/lus/{host}-{index}") ==
        "To use it on every node:\n"
        "  conda deactivate; conda activate \"/lus/$(hostname -s)-{index}\"\n"
        "  ezpz launch -- python3 train.py\n"
        "({index} is each node's index in the job, 0 on the first: put it in by hand)");
  CHECK(host_in_shell({{"MPIR_CVAR_CH3_INTERFACE_HOSTNAME", "n02"}}) == "$(hostname -s)");
  // The rest of the path stays what it says, inside double quotes or not.
  CHECK(shell_destination("/tmp/a b/{host}/$HOME`x`\"\\", "$(hostname -s)") ==
        "\"/tmp/a b/$(hostname -s)/\\$HOME\\`x\\`\\\"\\\\\"");
  CHECK(shell_destination("/tmp/a b", "$(hostname -s)") == "'/tmp/a b'");
  CHECK(shell_destination("/tmp/v", "$(hostname -s)") == "/tmp/v");
}

TEST_CASE("progress shows bytes, rate, nodes and ETA", "[yeet]") {
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(1073741824.0) == "1.0 GiB");
  CHECK(progress_line({512ull << 20, 1024ull << 20, 2.0, 1, 4}) ==
        "512.0 MiB of 1.0 GiB (50%), 256.0 MiB/s, nodes 1/4 done, ETA 2 s");
  CHECK(progress_line({100, 0, 1.0, 0, 2}) == "100 B, 100 B/s, nodes 0/2 done");
  CHECK(progress_line({10, 10, 0.0, 2, 2}) == "10 B of 10 B (100%), 0 B/s, nodes 2/2 done");
}
