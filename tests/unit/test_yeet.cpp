#include "ezpz/error.hpp"
#include "ezpz/yeet.hpp"
#include "tests/catch.hpp"

using namespace ezpz;
using namespace ezpz::yeet;

TEST_CASE("the source defaults to the active venv, then conda", "[yeet]") {
  CHECK(default_source({{"VIRTUAL_ENV", "/v"}, {"CONDA_PREFIX", "/c"}}) == "/v");
  CHECK(default_source({{"VIRTUAL_ENV", ""}, {"CONDA_PREFIX", "/c"}}) == "/c");
  CHECK_FALSE(default_source({}).has_value());
}

TEST_CASE("names and default destinations drop the tarball suffix", "[yeet]") {
  struct Row {
    const char* source;
    const char* name;
    bool tarball;
  };
  const Row rows[] = {
      {"/p/venv", "venv", false},          {"/p/venv/", "venv", false},
      {"/p/venv.tar.gz", "venv", true},    {"/p/venv.tgz", "venv", true},
      {"/p/venv.tar.zst", "venv", true},   {"/p/venv.tar", "venv", true},
      {"/p/venv.tar.xz", "venv", true},    {"/p/venv.tar.bz2", "venv", true},
      {"relative.tar.gz", "relative", true}, {"/p/.tar", ".tar", true},
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
  CHECK(parse_min_success("1").nodes_required(4) == 1);     // a count, not 100%
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

  CHECK(decide(Holding::absent, false) == Action::transfer);
  CHECK(decide(Holding::stale, false) == Action::transfer);
  CHECK(decide(Holding::current, false) == Action::skip);
  CHECK(decide(Holding::current, true) == Action::skip);
  CHECK(decide(Holding::foreign, false) == Action::refuse);
  CHECK(decide(Holding::foreign, true) == Action::transfer);
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
  CHECK_FALSE(rewrite_shebang("\x7f" "ELF/old/venv", "/old/venv", "/tmp/venv").has_value());
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
      {"\x7f" "ELF\0/old/env/lib\0tail"s, "/old/env", "/n", "\x7f" "ELF\0/n/lib\0\0\0\0\0\0\0tail"s},
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

TEST_CASE("progress shows bytes, rate, nodes and ETA", "[yeet]") {
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(1073741824.0) == "1.0 GiB");
  CHECK(progress_line({512ull << 20, 1024ull << 20, 2.0, 1, 4}) ==
        "512.0 MiB of 1.0 GiB (50%), 256.0 MiB/s, nodes 1/4 done, ETA 2 s");
  CHECK(progress_line({100, 0, 1.0, 0, 2}) == "100 B, 100 B/s, nodes 0/2 done");
  CHECK(progress_line({10, 10, 0.0, 2, 2}) == "10 B of 10 B (100%), 0 B/s, nodes 2/2 done");
}
