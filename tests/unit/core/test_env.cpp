// The environment codecs: secret names, variable names, NAME=VALUE, sizes.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/catch.hpp"

#include "ezpz/core/env.hpp"
#include "ezpz/core/error.hpp"

using ezpz::CacheFileFacts;
using ezpz::is_secret_name;
using ezpz::trusted_cache_file;

TEST_CASE("every credential word hides a variable's value", "[env]") {
  // One name per word of k_secret_parts and k_secret_words, in the case users write.
  const std::vector<std::string> secrets = {"HF_TOKEN",       "AWS_SECRET_ACCESS_KEY",
                                            "WANDB_API_KEY",  "MY_SECRET",
                                            "DB_PASSWORD",    "SMTP_PASSWD",
                                            "PGPASS",         "PGPASSFILE",
                                            "DB_CREDENTIALS", "GOOGLE_APPLICATION_CREDENTIALS",
                                            "API_AUTH",       "http_auth_user",
                                            "SESSION_COOKIE", "JUPYTER_SESSION",
                                            "SSH_PRIVATE",    "SSL_CERT_FILE",
                                            "GITHUB_PAT",     "pat",
                                            "DB_PW",          "AUTH_JWT",
                                            "WIFI_PSK",       "MFA_OTP"};
  for (const std::string& name : secrets) {
    INFO(name);
    CHECK(is_secret_name(name));
    CHECK(ezpz::shown_value(name, "s3cr3t") == "<redacted>");
  }
}

TEST_CASE("ordinary variables are shown", "[env]") {
  // Short words match only between underscores: PATH holds PAT, PWD holds PW.
  const std::vector<std::string> plain = {
      "PATH", "PWD",      "LD_LIBRARY_PATH", "PYTHONPATH", "MASTER_ADDR", "MASTER_PORT",
      "RANK", "HOSTNAME", "OMP_NUM_THREADS", "PATTERN",    "SPOTLIGHT",   "CPU_BIND"};
  for (const std::string& name : plain) {
    INFO(name);
    CHECK_FALSE(is_secret_name(name));
    CHECK(ezpz::shown_value(name, "v") == "v");
  }
}

// Issue 45: these were printed in dry runs, `ezpz env` and plan.json.
TEST_CASE("secrets by name and by the shape of their value", "[env]") {
  struct Row {
    const char* name;
    const char* value;
    bool secret;
  };
  const std::vector<Row> rows = {
      {"DATABASE_URL", "postgres://u:pw@h/db", true},
      {"REDIS_URL", "redis://:hunter2@cache:6379/0", true},
      {"SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/x", true},
      {"BEARER", "abc", true},
      {"SIGNING_SALT", "abc", true},
      {"X_API_SIG", "abc", true},
      {"NETRC", "/home/you/.netrc", true},
      {"SENTRY_DSN", "https://k@o1.ingest.sentry.io/1", true},
      {"CONN_STR", "Server=db;Database=x;User Id=u;Password=hunter2;", true},
      {"ODBC", "DRIVER={x};PWD=hunter2", true},
      {"EXTRA_HEADER", "Authorization: Bearer abc.def", true},
      {"GH", "ghp_0123456789abcdef", true},
      {"SLACK", "xoxb-1-2-abc", true},
      {"HF", "hf_abcdefghijklmnop", true},
      {"AWS_ID", "AKIAIOSFODNN7EXAMPLE", true},
      {"BLOB", "https://acct.blob.core.windows.net/c?sv=2020&sig=abc", true},
      // Not secrets: shown as they are.
      {"MASTER_ADDR", "x4102c5s2b0n0.hsn.cm.aurora.alcf.anl.gov", false},
      {"HTTP_PROXY", "http://proxy.alcf.anl.gov:3128", false},
      {"REPO_URL", "https://user@github.com/org/repo.git", false},
      {"DATA_URL", "https://example.org/a:b@c", false},
      {"NCCL_SOCKET_IFNAME", "hsn0,hsn1", false},
      {"PYTHONPATH", "/home/you/src:/opt/lib", false},
      {"SIGMA", "0.5", false},
      {"DESIGN", "x", false},
  };
  for (const Row& row : rows) {
    INFO(row.name << "=" << row.value);
    CHECK(ezpz::is_secret(row.name, row.value) == row.secret);
    CHECK(ezpz::shown_value(row.name, row.value) ==
          (row.secret ? std::string("<redacted>") : std::string(row.value)));
  }
}

TEST_CASE("variable names are what a shell accepts", "[env]") {
  for (const char* name : {"A", "_", "a_1", "NCCL_DEBUG", "_X9"}) {
    INFO(name);
    CHECK(ezpz::is_variable_name(name));
  }
  for (const char* name : {"", "1A", "A-B", "A B", "X;touch /tmp/PWNED;Y", "A$(x)", "Ä"}) {
    INFO(name);
    CHECK_FALSE(ezpz::is_variable_name(name));
  }
}

TEST_CASE("-x NAME=VALUE refuses a name that is not a variable name", "[env]") {
  CHECK(ezpz::parse_assignment("A=b=c", "--env") ==
        std::pair<std::string, std::string>{"A", "b=c"});
  CHECK(ezpz::parse_assignment("A=", "--env") == std::pair<std::string, std::string>{"A", ""});
  struct Case {
    std::string text, message;
  };
  const std::vector<Case> cases = {
      {"X;touch /tmp/PWNED;Y=1",
       "--env \"X;touch /tmp/PWNED;Y=1\": \"X;touch /tmp/PWNED;Y\" is not a variable name "
       "(letters, "
       "digits and _, not starting with a digit)"},
      {"1A=2",
       "--env \"1A=2\": \"1A\" is not a variable name (letters, digits and _, not starting with a "
       "digit)"},
      {"A\nB=1",
       "--env \"A\\nB=1\": \"A\\nB\" is not a variable name (letters, digits and _, not starting "
       "with a digit)"},
      {"=1", "--env =1: expected NAME=VALUE"},
      {"NOVALUE", "--env NOVALUE: expected NAME=VALUE"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    REQUIRE_THROWS_WITH(ezpz::parse_assignment(c.text, "--env"), c.message);
  }
}

TEST_CASE("sizes take binary suffixes", "[env]") {
  struct Case {
    const char* text;
    std::optional<std::uint64_t> bytes;
  };
  const std::vector<Case> cases = {
      {"0", 0},
      {"4096", 4096},
      {"100B", 100},
      {"1K", 1024},
      {"1k", 1024},
      {"512M", 512ull << 20},
      {"512MiB", 512ull << 20},
      {"2GB", 2ull << 30},
      {"1G", 1ull << 30},
      {"3T", 3ull << 40},
      {"4194304T", 1ull << 62},  // the most
      {"4194305T", std::nullopt},
      {"", std::nullopt},
      {"M", std::nullopt},
      {"1.5G", std::nullopt},
      {"-1", std::nullopt},
      {"1X", std::nullopt},
      {"1 G", std::nullopt},
      {"99999999999999999999", std::nullopt},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(ezpz::parse_size(c.text) == c.bytes);
  }
}

// Issue 45: a cache another user could have written (or replaced) is never read.
TEST_CASE("a cache file is believed only when nobody else could have written it", "[env]") {
  const CacheFileFacts mine{.regular = true,
                            .owner = 1000,
                            .mode = 0100600,
                            .dir_owner = 1000,
                            .dir_mode = 040700,
                            .user = 1000};
  CHECK(trusted_cache_file(mine));
  struct Row {
    const char* what;
    std::function<void(CacheFileFacts&)> change;
    bool trusted;
  };
  const std::vector<Row> rows = {
      {"a directory readable by all", [](CacheFileFacts& f) { f.dir_mode = 040755; }, true},
      {"in a directory of root's", [](CacheFileFacts& f) { f.dir_owner = 0; }, true},
      {"another user's file", [](CacheFileFacts& f) { f.owner = 1001; }, false},
      {"root's file, read by a user", [](CacheFileFacts& f) { f.owner = 0; }, false},
      {"group-writable", [](CacheFileFacts& f) { f.mode = 0100620; }, false},
      {"writable by others", [](CacheFileFacts& f) { f.mode = 0100602; }, false},
      {"in a directory others can write", [](CacheFileFacts& f) { f.dir_mode = 040777; }, false},
      {"in a sticky /tmp", [](CacheFileFacts& f) { f.dir_mode = 041777; }, false},
      {"in another user's directory", [](CacheFileFacts& f) { f.dir_owner = 1001; }, false},
      {"not a regular file (a FIFO)", [](CacheFileFacts& f) { f.regular = false; }, false},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    CacheFileFacts f = mine;
    row.change(f);
    CHECK(trusted_cache_file(f) == row.trusted);
  }
}
