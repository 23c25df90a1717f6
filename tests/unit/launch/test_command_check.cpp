#include "ezpz/launch/command_check.hpp"
#include "tests/catch.hpp"

using namespace ezpz;

TEST_CASE("a command that will start has no problem", "[command_check]") {
  CHECK_FALSE(command_problem({.word = "python3", .runnable = true}));
  CHECK_FALSE(command_problem({.word = "./a.out", .runnable = true, .exists = true}));
}

TEST_CASE("a command the ranks cannot find is one line with a hint", "[command_check]") {
  struct Row {
    CommandLookup lookup;
    std::string message;
  };
  const Row rows[] = {
      {{.word = "ddp.py"},
       "ddp.py: command not found on the ranks' PATH; did you mean python3 ddp.py?"},
      {{.word = "ddp.py", .exists = true, .in_current_dir = true},
       "ddp.py: command not found on the ranks' PATH; did you mean ./ddp.py or python3 ddp.py?"},
      {{.word = "train", .exists = true, .in_current_dir = true},
       "train: command not found on the ranks' PATH; did you mean ./train?"},
      {{.word = "pyhton3"}, "pyhton3: command not found on the ranks' PATH"},
      {{.word = "./ddp.py"}, "./ddp.py: no such file"},
      {{.word = "./ddp.py", .exists = true},
       "./ddp.py: not an executable file; did you mean python3 ./ddp.py?"},
      {{.word = "bin/train", .exists = true}, "bin/train: not an executable file"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.lookup.word);
    CHECK(command_problem(row.lookup) == row.message);
  }
}
