// Machine profiles: YAML text -> MachineProfile, and the choice of one profile
// for this job. yaml-cpp only tokenizes; every key is converted by hand so
// that each error can name its file, line and key path.
#include "ezpz/profile/machine_profile.hpp"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <climits>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <span>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "ezpz/core/error.hpp"
#include "ezpz/core/text.hpp"
#include "ezpz/launch/batch_script.hpp"
#include "ezpz/launchers/launchers.hpp"

namespace ezpz {
namespace {

// Where a value sits, for "<source>:<line>: <path>: <what>".
struct Where {
  int line = 1;      // 1-based
  std::string path;  // "cpu_bind.depth", "launcher_args[2]"; empty for the document
};

// Carries the file name into every error so that readers need not.
struct Reader {
  std::string_view source;

  [[noreturn]] void fail(const Where& at, std::string_view what) const {
    if (at.path.empty()) throw Error(fmt::format("{}:{}: {}", source, at.line, what));
    throw Error(fmt::format("{}:{}: {}: {}", source, at.line, at.path, what));
  }
};

// yaml-cpp places a null value (`key:` with nothing after it) at the next
// token, often on a later line, so such values report their key's line.
int line_of(const YAML::Node& node, int fallback) {
  if (!node.IsDefined() || node.IsNull() || node.Mark().is_null()) return fallback;
  return node.Mark().line + 1;
}

std::string join_path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

// How a value that has the wrong shape is shown after "got".
std::string describe(const YAML::Node& node) {
  if (node.IsScalar()) return fmt::format("\"{}\"", node.Scalar());
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

// ---- scalars -------------------------------------------------------------

std::string read_string(const Reader& r, const YAML::Node& node, const Where& at) {
  if (!node.IsScalar()) r.fail(at, fmt::format("expected a string, got {}", describe(node)));
  return node.Scalar();  // as written: `1` and `"1"` both read "1"
}

// Counts (GPUs, cores, depths) are plain decimal integers >= 0; "0x10", "4.0"
// and "four" are mistakes worth reporting rather than guessing at.
int read_count(const Reader& r, const YAML::Node& node, const Where& at) {
  if (!node.IsScalar()) r.fail(at, fmt::format("expected an integer, got {}", describe(node)));
  const std::string& text = node.Scalar();
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  bool numeric = !text.empty() && ptr == end && ec != std::errc::invalid_argument;
  if (!numeric) r.fail(at, fmt::format("expected an integer, got \"{}\"", text));
  if (text.front() == '-' && (ec != std::errc() || value < 0)) {
    r.fail(at, fmt::format("expected an integer >= 0, got \"{}\"", text));
  }
  if (ec != std::errc() || value > INT_MAX) {
    r.fail(at, fmt::format("expected an integer <= {}, got \"{}\"", INT_MAX, text));
  }
  return static_cast<int>(value);
}

std::string read_choice(const Reader& r, const YAML::Node& node, const Where& at,
                        std::span<const std::string_view> allowed) {
  bool ok =
      node.IsScalar() && std::find(allowed.begin(), allowed.end(), node.Scalar()) != allowed.end();
  if (!ok) {
    r.fail(at, fmt::format("expected one of {}, got {}", fmt::join(allowed, ", "), describe(node)));
  }
  return node.Scalar();
}

// ---- collections ---------------------------------------------------------

// A list; an empty `key:` reads as an empty list (all items commented out).
template <auto read_item>
auto read_list(const Reader& r, const YAML::Node& node, const Where& at) {
  using Item = decltype(read_item(r, node, at));
  if (node.IsNull()) return std::vector<Item>{};
  if (!node.IsSequence()) r.fail(at, fmt::format("expected a list, got {}", describe(node)));
  std::vector<Item> items;
  for (std::size_t i = 0; i < node.size(); ++i) {
    Where item_at{line_of(node[i], at.line), fmt::format("{}[{}]", at.path, i)};
    items.push_back(read_item(r, node[i], item_at));
  }
  return items;
}

// One `key: value` of a mapping, located for errors.
struct Entry {
  std::string key;
  YAML::Node value;
  // The key's line, also for errors in its value: `cpu_bind:` is where a bad
  // binding is written, even when its keys sit on the lines below.
  Where at;
};

// Walks a mapping in file order. Keys must be scalars and appear once
// (yaml-cpp keeps both copies of a repeated key; the second would be ignored
// silently). An empty `key:` reads as an empty mapping.
void for_each_entry(const Reader& r, const YAML::Node& node, const Where& at,
                    const std::function<void(const Entry&)>& visit) {
  if (node.IsNull()) return;
  if (!node.IsMap()) r.fail(at, fmt::format("expected a mapping, got {}", describe(node)));
  std::map<std::string, int> first_line;
  for (auto it = node.begin(); it != node.end(); ++it) {
    int line = line_of(it->first, at.line);
    if (!it->first.IsScalar()) {
      r.fail({line, at.path}, fmt::format("expected a key name, got {}", describe(it->first)));
    }
    Entry entry{it->first.Scalar(), it->second, {line, join_path(at.path, it->first.Scalar())}};
    auto [seen, fresh] = first_line.emplace(entry.key, line);
    if (!fresh) r.fail(entry.at, fmt::format("duplicate key (first on line {})", seen->second));
    visit(entry);
  }
}

// NAME: value pairs in file order (env, match.env).
EnvList read_env_map(const Reader& r, const YAML::Node& node, const Where& at) {
  EnvList vars;
  for_each_entry(r, node, at, [&](const Entry& e) {
    if (!is_variable_name(e.key)) {
      r.fail(e.at, "not a variable name (letters, digits and _, not starting with a digit)");
    }
    vars.emplace_back(e.key, read_string(r, e.value, e.at));
  });
  return vars;
}

// ---- keyed structs: a table of fields per struct -------------------------

// How one key is read, and the member it fills: the cache and the view find
// every key's value through `member` (profile_keys below).
template <typename T>
struct Column {
  void (*read)(const Reader&, const YAML::Node&, const Where&, T&);
  KeyMember<T> member{};  // none for a key that is refused
};

template <typename T>
struct Field {
  std::string_view key;
  Column<T> column;
};

template <typename M>
struct MemberOf;
template <typename T, typename V>
struct MemberOf<V T::*> {
  using type = T;
};

template <auto member, auto read>
void read_into(const Reader& r, const YAML::Node& node, const Where& at,
               typename MemberOf<decltype(member)>::type& out) {
  out.*member = read(r, node, at);
}

// The usual row: read the value with `read` and store it in `member`.
template <auto member, auto read>
constexpr Column<typename MemberOf<decltype(member)>::type> assign = {read_into<member, read>,
                                                                      member};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

// Suggests the closest known key when it is a plausible typo: at most 3 edits,
// and fewer edits than the key has letters (so "foo" does not suggest "env").
template <typename T>
std::string unknown_key_message(std::string_view key, std::span<const Field<T>> fields) {
  std::string_view best;
  std::size_t best_distance = 4;
  for (const Field<T>& field : fields) {
    std::size_t distance = edit_distance(key, field.key);
    if (distance < best_distance && distance < key.size()) {
      best = field.key;
      best_distance = distance;
    }
  }
  if (best.empty()) return "unknown key";
  return fmt::format("unknown key; did you mean \"{}\"?", best);
}

template <typename T>
void read_fields(const Reader& r, const YAML::Node& node, const Where& at,
                 std::span<const Field<T>> fields, T& out) {
  for_each_entry(r, node, at, [&](const Entry& e) {
    auto field = std::find_if(fields.begin(), fields.end(),
                              [&](const Field<T>& f) { return f.key == e.key; });
    if (field == fields.end()) r.fail(e.at, unknown_key_message(e.key, fields));
    field->column.read(r, e.value, e.at, out);
  });
}

// ---- the schema ----------------------------------------------------------

constexpr std::array<std::string_view, 4> k_scheduler_names = {"pbs", "slurm", "flux", "local"};
constexpr std::array<std::string_view, 4> k_devices = {"cuda", "xpu", "rocm", "cpu"};
constexpr std::array<std::string_view, 6> k_backends = {"nccl", "rccl", "xccl",
                                                        "ccl",  "gloo", "mpi"};
// Same order as CpuBind::Style, so a name's index is its value.
constexpr std::array<std::string_view, 3> k_bind_styles = {"none", "depth", "list"};

template <const auto& allowed>
std::string read_one_of(const Reader& r, const YAML::Node& node, const Where& at) {
  return read_choice(r, node, at, allowed);
}

// A dialect, or a name users type for one ("mpich", "ompi"): stored as the dialect.
std::string read_launcher(const Reader& r, const YAML::Node& node, const Where& at) {
  if (!node.IsScalar() || !is_known_launcher(node.Scalar())) {
    r.fail(at, fmt::format("expected one of {}, got {}", known_launchers(), describe(node)));
  }
  return canonical_launcher(node.Scalar());
}

std::string read_program(const Reader& r, const YAML::Node& node, const Where& at) {
  std::string program = read_string(r, node, at);
  if (program.empty()) r.fail(at, "expected a program name or path, got an empty string");
  return program;
}

// A library's file name, and the absolute directory the site documents for it.
EnvList read_library_map(const Reader& r, const YAML::Node& node, const Where& at) {
  EnvList libraries;
  for_each_entry(r, node, at, [&](const Entry& e) {
    if (e.key.find('/') != std::string::npos) r.fail(e.at, "expected a file name, without /");
    std::string directory = read_string(r, e.value, e.at);
    if (!directory.starts_with('/')) {
      r.fail(e.at, fmt::format("expected an absolute directory, got \"{}\"", directory));
    }
    libraries.emplace_back(e.key, std::move(directory));
  });
  return libraries;
}

std::optional<SchedulerKind> read_scheduler(const Reader& r, const YAML::Node& node,
                                            const Where& at) {
  return scheduler_from_string(read_choice(r, node, at, k_scheduler_names));
}

CpuBind::Style read_bind_style(const Reader& r, const YAML::Node& node, const Where& at) {
  std::string name = read_choice(r, node, at, k_bind_styles);
  auto index = std::find(k_bind_styles.begin(), k_bind_styles.end(), name) - k_bind_styles.begin();
  return static_cast<CpuBind::Style>(index);
}

constexpr std::array<Field<CpuBind>, 5> k_cpu_bind_fields = {{
    {"style", assign<&CpuBind::style, read_bind_style>},
    {"depth", assign<&CpuBind::depth, read_count>},
    {"sockets", assign<&CpuBind::sockets, read_count>},
    {"cores_per_socket", assign<&CpuBind::cores_per_socket, read_count>},
    {"reserved_cores", assign<&CpuBind::reserved_cores, read_list<read_count>>},
}};

// A style's required numbers: the launcher cannot render the binding without them.
struct BindRule {
  std::string_view key;
  std::string_view what;
  bool (*broken)(const CpuBind&);
};
using Style = CpuBind::Style;
constexpr std::array<BindRule, 3> k_bind_rules = {{
    {"depth", "style depth needs depth > 0 (cores per rank)",
     [](const CpuBind& b) { return b.style == Style::depth && b.depth <= 0; }},
    {"sockets", "style list needs sockets > 0",
     [](const CpuBind& b) { return b.style == Style::list && b.sockets <= 0; }},
    {"cores_per_socket", "style list needs cores_per_socket > 0",
     [](const CpuBind& b) { return b.style == Style::list && b.cores_per_socket <= 0; }},
}};

// Errors point at the offending key when it is written, else at `cpu_bind:`.
int key_line(const YAML::Node& map, std::string_view key, int fallback) {
  if (!map.IsMap()) return fallback;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return line_of(it->first, fallback);
  }
  return fallback;
}

void check_cpu_bind(const Reader& r, const YAML::Node& node, const Where& at, const CpuBind& b) {
  for (const BindRule& rule : k_bind_rules) {
    Where key_at{key_line(node, rule.key, at.line), join_path(at.path, rule.key)};
    if (rule.broken(b)) r.fail(key_at, rule.what);
  }
  if (b.style != Style::list) return;  // only a list names cores
  // Two counts up to INT_MAX each: multiplied in 64 bits. Cores are numbered
  // with ints, so a node with more cores than that cannot be bound.
  const long long cores = static_cast<long long>(b.sockets) * b.cores_per_socket;
  if (cores > INT_MAX) {
    r.fail({key_line(node, "cores_per_socket", at.line), join_path(at.path, "cores_per_socket")},
           fmt::format("sockets x cores_per_socket is {} cores, more than {}", cores, INT_MAX));
  }
  for (std::size_t i = 0; i < b.reserved_cores.size(); ++i) {
    if (b.reserved_cores[i] < cores) continue;
    Where core_at{key_line(node, "reserved_cores", at.line),
                  fmt::format("{}.reserved_cores[{}]", at.path, i)};
    r.fail(core_at,
           fmt::format("core {} is not on the node (cores 0-{})", b.reserved_cores[i], cores - 1));
  }
}

CpuBind read_cpu_bind(const Reader& r, const YAML::Node& node, const Where& at) {
  CpuBind bind;
  read_fields<CpuBind>(r, node, at, k_cpu_bind_fields, bind);
  check_cpu_bind(r, node, at, bind);
  return bind;
}

// A device id as a mask variable takes it: "3", "0.1" (Intel GPU 0, tile 1), "GPU-<uuid>".
std::string read_device(const Reader& r, const YAML::Node& node, const Where& at) {
  std::string id = read_string(r, node, at);
  if (id.empty() || id.find_first_of(",; \t") != std::string::npos) {
    r.fail(at, fmt::format("expected a device id (\"3\", \"0.1\"), got \"{}\"", id));
  }
  return id;
}

std::string read_variable(const Reader& r, const YAML::Node& node, const Where& at) {
  std::string name = read_string(r, node, at);
  if (!is_variable_name(name)) {
    r.fail(at, "not a variable name (letters, digits and _, not starting with a digit)");
  }
  return name;
}

int read_positive(const Reader& r, const YAML::Node& node, const Where& at) {
  int count = read_count(r, node, at);
  if (count < 1) r.fail(at, "expected an integer >= 1, got \"0\"");
  return count;
}

constexpr std::array<Field<GpuBind>, 4> k_gpu_bind_fields = {{
    {"order", assign<&GpuBind::order, read_list<read_device>>},
    {"variables", assign<&GpuBind::variables, read_list<read_variable>>},
    {"launcher_bind", assign<&GpuBind::launcher_bind, read_string>},
    {"ranks_per_gpu", assign<&GpuBind::ranks_per_gpu, read_positive>},
}};

GpuBind read_gpu_bind(const Reader& r, const YAML::Node& node, const Where& at) {
  GpuBind bind;
  read_fields<GpuBind>(r, node, at, k_gpu_bind_fields, bind);
  if (bind.order.empty()) {
    r.fail({key_line(node, "order", at.line), join_path(at.path, "order")},
           "expected the devices in local-rank order (\"order: [3, 2, 1, 0]\")");
  }
  return bind;
}

constexpr std::array<Field<MachineMatch>, 2> k_match_fields = {{
    {"hostnames", assign<&MachineMatch::hostnames, read_list<read_string>>},
    {"env", assign<&MachineMatch::env, read_env_map>},
}};

MachineMatch read_match(const Reader& r, const YAML::Node& node, const Where& at) {
  MachineMatch match;
  read_fields<MachineMatch>(r, node, at, k_match_fields, match);
  return match;
}

// MASTER_ADDR is "<short host name><suffix>", so the suffix must begin a domain.
std::string read_suffix(const Reader& r, const YAML::Node& node, const Where& at) {
  std::string suffix = read_string(r, node, at);
  if (!suffix.empty() && suffix.front() != '.') {
    r.fail(at, fmt::format("expected a domain suffix starting with \".\", got \"{}\"", suffix));
  }
  return suffix;
}

// The profile's name is its file's stem; a `name:` key could only disagree.
void reject_name(const Reader& r, const YAML::Node&, const Where& at, MachineProfile& p) {
  r.fail(at, fmt::format("not allowed: the name is the file name (\"{}\")", p.name));
}

constexpr std::size_t k_max_pattern = 1000;
constexpr double k_max_repeat_product = 1000;

std::size_t digits_at(std::string_view text, std::size_t at) {
  std::size_t end = at;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  return end - at;
}

// The larger bound of the repeat whose text starts at `at` ("2,5}" -> 5,
// "3}" -> 3, "2,}" -> 2, "}" -> 1). A number of more than 4 digits counts as
// 10,000: past any limit, and never parsed.
double repeat_bound(std::string_view regex, std::size_t at) {
  auto number = [&](std::size_t from, std::size_t digits) {
    return digits == 0  ? 0.0
           : digits > 4 ? 1e4
                        : std::stod(std::string(regex.substr(from, digits)));
  };
  std::size_t low = digits_at(regex, at);
  double bound = number(at, low);
  std::size_t comma = at + low;
  if (comma < regex.size() && regex[comma] == ',') {
    bound = std::max(bound, number(comma + 1, digits_at(regex, comma + 1)));
  }
  return std::max(bound, 1.0);
}

// True when the text at `at` repeats what precedes it more than once: *, +,
// or {n,m} with a bound above 1 ("?" and "{1}" repeat nothing).
bool repeats_at(std::string_view regex, std::size_t at) {
  if (at >= regex.size()) return false;
  if (regex[at] == '*' || regex[at] == '+') return true;
  return regex[at] == '{' && repeat_bound(regex, at + 1) > 1;
}

bool is_quantifier(char c) {
  return c == '*' || c == '+' || c == '?' || c == '{';
}

// What std::regex must not be given, or "". libstdc++ reads a back-reference
// (\12) and a repeat's bounds ({2,5}) into a long without checking for
// overflow (undefined behaviour; fuzz_machine_profile found it), and copies a
// repeated part once per count, so nested counts multiply its size. Its
// matcher backtracks: a repeated group that holds a repeat, as in (\w+\s?)*,
// tries every way of splitting a line that almost matches, which took 13 s
// on a 29-character line; every line of a job's stderr is matched.
std::string regex_problem(std::string_view regex) {
  double product = 1;
  bool in_brackets = false;
  std::vector<bool> group_repeats;  // per open group: does it hold a quantifier?
  bool after_repeat = false;        // the previous character ended a quantifier
  for (std::size_t i = 0; i < regex.size(); ++i) {
    const char c = regex[i];
    const bool follows_repeat = after_repeat;
    after_repeat = !in_brackets && (c == '*' || c == '+' || c == '?' || c == '}');
    // libstdc++ takes ".++" as a repeat of a repeat, which backtracks as (a+)+ does
    // (fuzz_machine_profile: a 60 s timeout). "*?" stays: lazy, not a second repeat.
    if (follows_repeat && !in_brackets && (c == '*' || c == '+' || c == '{')) {
      return "a repeat of a repeat (as in a++ or a*{2}): matching can take exponential time";
    }
    if (c == '\\') {
      std::size_t digits = digits_at(regex, i + 1);
      if (digits > 3) return "a back-reference with more than 3 digits";
      i += std::max<std::size_t>(digits, 1);  // the escaped character is never syntax
    } else if (in_brackets) {
      in_brackets = c != ']';
    } else if (c == '[') {
      in_brackets = true;
      if (i + 1 < regex.size() && regex[i + 1] == '^') ++i;
      if (i + 1 < regex.size() && regex[i + 1] == ']') ++i;  // "[]...]": a literal ]
    } else if (c == '{' && (product *= repeat_bound(regex, i + 1)) > k_max_repeat_product) {
      return "repeat counts too large: {n,m} bounds multiply past 1000";
    } else if (c == '(') {
      group_repeats.push_back(false);
      if (i + 1 < regex.size() && regex[i + 1] == '?') ++i;  // (?: (?= (?!: not a repeat
    } else if (c == ')' && !group_repeats.empty()) {
      const bool inner = group_repeats.back();
      group_repeats.pop_back();
      if (inner && repeats_at(regex, i + 1)) {
        return "a repeated group holds a repeat (as in (a+)+): matching can take exponential "
               "time";
      }
      if (!group_repeats.empty()) group_repeats.back() = group_repeats.back() || inner;
    } else if (is_quantifier(c) && !group_repeats.empty()) {
      group_repeats.back() = true;
    }
  }
  return "";
}

// name: regex, compiled here so that a broken one is reported with its file and line.
std::vector<BadNodePattern> read_bad_node_patterns(const Reader& r, const YAML::Node& node,
                                                   const Where& at) {
  std::vector<BadNodePattern> patterns;
  for_each_entry(r, node, at, [&](const Entry& e) {
    std::string regex = read_string(r, e.value, e.at);
    // libstdc++ compiles a regex recursively: a bound keeps a hostile profile from its stack.
    if (regex.size() > k_max_pattern) {
      r.fail(e.at, fmt::format("longer than {} characters", k_max_pattern));
    }
    if (std::string problem = regex_problem(regex); !problem.empty()) r.fail(e.at, problem);
    try {
      std::regex compiled(regex, std::regex::ECMAScript);
      if (compiled.mark_count() < 1) r.fail(e.at, "expected a capture group for the host");
    } catch (const std::regex_error& error) {
      r.fail(e.at, fmt::format("invalid regular expression: {}", error.what()));
    }
    patterns.push_back({e.key, std::move(regex)});
  });
  return patterns;
}

// Batch directives are read by qsub/sbatch line by line: a value that would
// end the line, or split it, is refused here with its file and line.
template <bool allow_spaces>
std::string read_directive(const Reader& r, const YAML::Node& node, const Where& at) {
  std::string value = read_string(r, node, at);
  if (auto problem = directive_problem(value, allow_spaces)) {
    r.fail(at, fmt::format("{} cannot go in a batch directive", *problem));
  }
  return value;
}

// What a machine's jobs must name (ezpz submit warns when one is missing).
constexpr std::array<std::string_view, 3> k_batch_requirements = {"account", "walltime", "queue"};

constexpr std::array<Field<BatchDefaults>, 3> k_batch_fields = {{
    {"filesystems", assign<&BatchDefaults::filesystems, read_directive<false>>},
    {"directives", assign<&BatchDefaults::directives, read_list<read_directive<true>>>},
    {"required", assign<&BatchDefaults::required, read_list<read_one_of<k_batch_requirements>>>},
}};

BatchDefaults read_batch(const Reader& r, const YAML::Node& node, const Where& at) {
  BatchDefaults batch;
  read_fields<BatchDefaults>(r, node, at, k_batch_fields, batch);
  return batch;
}

using P = MachineProfile;
constexpr std::array<Field<MachineProfile>, 19> k_profile_fields = {{
    {"description", assign<&P::description, read_string>},
    {"match", assign<&P::match, read_match>},
    {"scheduler", assign<&P::scheduler, read_scheduler>},
    {"launcher", assign<&P::launcher, read_launcher>},
    {"launcher_program", assign<&P::launcher_program, read_program>},
    {"gpus_per_node", assign<&P::gpus_per_node, read_count>},
    {"device", assign<&P::device, read_one_of<k_devices>>},
    {"backend", assign<&P::backend, read_one_of<k_backends>>},
    {"cpu_bind", assign<&P::cpu_bind, read_cpu_bind>},
    {"gpu_bind", assign<&P::gpu_bind, read_gpu_bind>},
    {"env", assign<&P::env, read_env_map>},
    {"launcher_args", assign<&P::launcher_args, read_list<read_string>>},
    {"mpi_launcher_args", assign<&P::mpi_launcher_args, read_list<read_string>>},
    {"network_suffix", assign<&P::network_suffix, read_suffix>},
    {"master_addr", assign<&P::master_addr, read_string>},
    {"bad_node_patterns", assign<&P::bad_node_patterns, read_bad_node_patterns>},
    {"libraries", assign<&P::libraries, read_library_map>},
    {"batch", assign<&P::batch, read_batch>},
    {"name", {reject_name}},
}};

// The line of a second document's start ("---" at column 0 after content, or
// content after "..."), or 0. Read from the text: yaml-cpp's Load keeps the
// first document and drops the rest without a word, and its LoadAll loops
// forever, allocating, on some malformed input (fuzz_machine_profile's find).
// At column 0 these markers end any block scalar, so no value can hold one.
int second_document_line(std::string_view text) {
  bool content = false;
  bool ended = false;
  const std::vector<std::string_view> lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    auto marker = [&](std::string_view m) {
      return line.starts_with(m) &&
             (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
    };
    const bool blank = line.find_first_not_of(" \t\r") == std::string_view::npos ||
                       line.front() == '#' || line.front() == '%';
    if (marker("---")) {
      if (content) return static_cast<int>(i) + 1;
    } else if (marker("...")) {
      ended = content;
    } else if (!blank) {
      if (ended) return static_cast<int>(i) + 1;
      content = true;
    }
  }
  return 0;
}

YAML::Node load_yaml(const Reader& r, std::string_view text) {
  if (int line = second_document_line(text)) {
    r.fail({line, ""}, "a second YAML document: a profile is one document (remove the '---')");
  }
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    // e.what() starts with yaml-cpp's own "error at line L, column C"; the
    // line is reported in ezpz's form instead, from the same mark.
    int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    r.fail({line, ""}, fmt::format("invalid YAML: {}", e.msg));
  }
}

template <typename T, std::size_t N, std::size_t... I>
constexpr std::array<ProfileKey<T>, N> keys_of(const std::array<Field<T>, N>& fields,
                                               std::index_sequence<I...>) {
  return {{{fields[I].key, fields[I].column.member}...}};
}

template <typename T, std::size_t N>
constexpr std::array<ProfileKey<T>, N> keys_of(const std::array<Field<T>, N>& fields) {
  return keys_of(fields, std::make_index_sequence<N>());
}

constexpr auto k_profile_keys = keys_of(k_profile_fields);
constexpr auto k_match_keys = keys_of(k_match_fields);
constexpr auto k_cpu_bind_keys = keys_of(k_cpu_bind_fields);
constexpr auto k_gpu_bind_keys = keys_of(k_gpu_bind_fields);
constexpr auto k_batch_keys = keys_of(k_batch_fields);

}  // namespace

template <>
std::span<const ProfileKey<MachineProfile>> profile_keys() {
  return k_profile_keys;
}
template <>
std::span<const ProfileKey<MachineMatch>> profile_keys() {
  return k_match_keys;
}
template <>
std::span<const ProfileKey<CpuBind>> profile_keys() {
  return k_cpu_bind_keys;
}
template <>
std::span<const ProfileKey<GpuBind>> profile_keys() {
  return k_gpu_bind_keys;
}
template <>
std::span<const ProfileKey<BatchDefaults>> profile_keys() {
  return k_batch_keys;
}

namespace {

// gpu_bind.order names every GPU of a node, once: a rank given a GPU that is not there, or
// two ranks given one, is a profile mistake, not a launch to attempt.
void check_gpu_count(const Reader& r, const YAML::Node& root, const MachineProfile& p) {
  const std::vector<std::string>& order = p.gpu_bind.order;
  if (order.empty()) return;
  Where at{key_line(root, "gpu_bind", 1), "gpu_bind.order"};
  if (p.gpus_per_node != static_cast<int>(order.size())) {
    r.fail(at, fmt::format("names {} device{}, but gpus_per_node is {}", order.size(),
                           order.size() == 1 ? "" : "s", p.gpus_per_node));
  }
  std::set<std::string> seen;
  for (const std::string& id : order) {
    if (!seen.insert(id).second) r.fail(at, fmt::format("names device \"{}\" twice", id));
  }
}

}  // namespace

MachineProfile parse_machine_profile(std::string_view yaml_text, std::string_view source) {
  Reader r{source};
  YAML::Node root = load_yaml(r, yaml_text);
  if (!root.IsMap()) r.fail({line_of(root, 1), ""}, "expected a mapping of keys");
  MachineProfile profile;
  profile.name = std::filesystem::path(std::string(source)).stem().string();
  profile.source = std::string(source);
  read_fields<MachineProfile>(r, root, {}, k_profile_fields, profile);
  if (profile.launcher.empty()) r.fail({1, "launcher"}, "required key is missing");
  check_gpu_count(r, root, profile);
  return profile;
}

std::vector<MachineProfile> load_profiles(const std::vector<ProfileFile>& files) {
  std::map<std::string, MachineProfile> by_name;  // sorted by name; a later stem replaces
  for (const ProfileFile& file : files) {
    if (!file.refused.empty()) throw Error(file.path + ": " + file.refused);
    MachineProfile profile = parse_machine_profile(file.text, file.path);
    by_name.insert_or_assign(profile.name, std::move(profile));
  }
  std::vector<MachineProfile> profiles;
  for (auto& [name, profile] : by_name) profiles.push_back(std::move(profile));
  return profiles;
}

bool is_machine_name(std::string_view name) {
  return !name.empty() && name.front() != '.' && name.front() != '-' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

// stat(2)'s mode bits: write by others; a directory's sticky bit (only a file's owner may
// replace it, as in /tmp).
constexpr unsigned k_others_write = 0002, k_sticky = 01000;

std::string profile_refusal(const ProfileFileFacts& f) {
  const std::string dir = std::filesystem::path(f.path).parent_path().string();
  const std::string name = std::filesystem::path(f.path).stem().string();
  const auto foreign = [&](unsigned owner) { return owner != f.user && owner != 0; };
  if (!is_machine_name(name)) {
    return "its name is not a machine name (letters, digits, '.', '_' and '-'): rename the file";
  }
  if (foreign(f.owner)) return fmt::format("owned by uid {}, not by you or root", f.owner);
  if (foreign(f.dir_owner)) {
    return fmt::format("its directory {} is owned by uid {}, not by you or root", dir, f.dir_owner);
  }
  if (f.mode & k_others_write) {
    return fmt::format("anyone can write it (mode {:04o}): chmod o-w {}", f.mode & 07777, f.path);
  }
  if ((f.dir_mode & k_others_write) && !(f.dir_mode & k_sticky)) {
    return fmt::format("anyone can write its directory (mode {:04o}): chmod o-w {}",
                       f.dir_mode & 07777, dir);
  }
  if (f.size > k_max_profile_bytes) {
    return fmt::format("{} bytes, over the {} a profile may hold", f.size, k_max_profile_bytes);
  }
  return "";
}

LoadedProfiles load_each_profile(const std::vector<ProfileFile>& files) {
  std::map<std::string, std::variant<MachineProfile, BrokenProfile>> by_name;
  for (const ProfileFile& file : files) {
    std::string name = std::filesystem::path(file.path).stem().string();
    if (!file.refused.empty()) {
      by_name.insert_or_assign(name, BrokenProfile{name, file.path + ": " + file.refused});
      continue;
    }
    try {
      by_name.insert_or_assign(name, parse_machine_profile(file.text, file.path));
    } catch (const Error& error) {
      by_name.insert_or_assign(name, BrokenProfile{name, error.what()});
    }
  }
  LoadedProfiles loaded;
  for (auto& [name, entry] : by_name) {
    if (auto* profile = std::get_if<MachineProfile>(&entry))
      loaded.profiles.push_back(*profile);
    else
      loaded.broken.push_back(std::get<BrokenProfile>(entry));
  }
  return loaded;
}

namespace {

const BrokenProfile* find_broken(const LoadedProfiles& loaded, std::string_view name) {
  for (const BrokenProfile& broken : loaded.broken) {
    if (broken.name == name) return &broken;
  }
  return nullptr;
}

const MachineProfile* find_profile(const std::vector<MachineProfile>& profiles,
                                   std::string_view name) {
  auto it = std::find_if(profiles.begin(), profiles.end(),
                         [&](const MachineProfile& p) { return p.name == name; });
  return it == profiles.end() ? nullptr : &*it;
}

std::string known_names(const std::vector<MachineProfile>& profiles) {
  if (profiles.empty()) return "none";
  std::vector<std::string_view> names;
  for (const MachineProfile& p : profiles) names.push_back(p.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

ProfileChoice by_name(const std::vector<MachineProfile>& profiles, const std::string& name,
                      std::string_view origin, std::string rule) {
  return {&profile_named(profiles, name, origin), std::move(rule)};
}

bool glob_matches(const std::string& pattern, std::string_view text, int flags) {
  return fnmatch(pattern.c_str(), std::string(text).c_str(), flags) == 0;
}

// The reason `profile` fits this host, or nullopt: one hostname glob matches
// (host names are case-insensitive) and every env condition holds.
std::optional<std::string> match_rule(const MachineProfile& profile, const Env& env,
                                      std::string_view hostname) {
  const std::vector<std::string>& globs = profile.match.hostnames;
  auto glob = std::find_if(globs.begin(), globs.end(), [&](const std::string& g) {
    return glob_matches(g, hostname, FNM_CASEFOLD);
  });
  if (glob == globs.end()) return std::nullopt;
  std::string rule =
      fmt::format("hostname {} matches \"{}\" in {}", hostname, *glob, profile.source);
  for (const auto& [name, pattern] : profile.match.env) {
    std::optional<std::string> value = get_nonempty(env, name);
    if (!value || !glob_matches(pattern, *value, 0)) return std::nullopt;
    rule += fmt::format(" and {} matches \"{}\"", name, pattern);
  }
  return rule;
}

// Profiles with more env conditions are more specific (sirius: x3* and
// PBS_O_HOST=sirius*) and are tried before the ones they refine (polaris: x3*).
std::optional<ProfileChoice> match_hostname(const std::vector<MachineProfile>& profiles,
                                            const Env& env, std::string_view hostname) {
  std::vector<const MachineProfile*> order;
  for (const MachineProfile& p : profiles) order.push_back(&p);
  std::sort(order.begin(), order.end(), [](const MachineProfile* a, const MachineProfile* b) {
    if (a->match.env.size() != b->match.env.size())
      return a->match.env.size() > b->match.env.size();
    return a->name < b->name;
  });
  for (const MachineProfile* p : order) {
    if (auto rule = match_rule(*p, env, hostname)) return ProfileChoice{p, std::move(*rule)};
  }
  return std::nullopt;
}

constexpr std::array<std::pair<SchedulerKind, std::string_view>, 4> k_generic_profiles = {{
    {SchedulerKind::pbs, "generic-pbs"},
    {SchedulerKind::slurm, "generic-slurm"},
    {SchedulerKind::flux, "generic-flux"},
    {SchedulerKind::local, "local"},
}};

ProfileChoice generic_profile(const std::vector<MachineProfile>& profiles,
                              std::string_view hostname, SchedulerKind scheduler) {
  auto row = std::find_if(k_generic_profiles.begin(), k_generic_profiles.end(),
                          [&](const auto& r) { return r.first == scheduler; });
  std::string_view name = row->second;  // every kind has a row
  const MachineProfile* profile = find_profile(profiles, name);
  if (profile == nullptr) {
    throw Error(fmt::format(
        "no machine profile matched hostname \"{}\" and the generic profile \"{}\" for {} is "
        "missing; known: {}",
        hostname, name, to_string(scheduler), known_names(profiles)));
  }
  return {profile,
          fmt::format("no hostname matched; generic profile for {}", to_string(scheduler))};
}

}  // namespace

const MachineProfile& profile_named(const std::vector<MachineProfile>& profiles,
                                    std::string_view name, std::string_view origin) {
  const MachineProfile* profile = find_profile(profiles, name);
  if (profile == nullptr) {
    throw Error(fmt::format("unknown machine \"{}\" (from {}); known: {}", name, origin,
                            known_names(profiles)));
  }
  return *profile;
}

const MachineProfile& loaded_profile_named(const LoadedProfiles& loaded, std::string_view name,
                                           std::string_view origin) {
  if (const BrokenProfile* broken = find_broken(loaded, name)) throw Error(broken->error);
  return profile_named(loaded.profiles, name, origin);
}

std::optional<SchedulerKind> fallback_for(const MachineProfile& profile) {
  for (const auto& [kind, name] : k_generic_profiles) {
    if (name == profile.name) return kind;
  }
  return std::nullopt;
}

ProfileChoice select_profile(const std::vector<MachineProfile>& profiles,
                             const std::optional<std::string>& flag, const Env& env,
                             std::string_view hostname, SchedulerKind scheduler) {
  if (flag) return by_name(profiles, *flag, "--machine", fmt::format("--machine {}", *flag));
  if (auto named = get_nonempty(env, "EZPZ_MACHINE")) {
    return by_name(profiles, *named, "EZPZ_MACHINE", fmt::format("EZPZ_MACHINE={}", *named));
  }
  if (auto matched = match_hostname(profiles, env, hostname)) return *std::move(matched);
  return generic_profile(profiles, hostname, scheduler);
}

ProfileChoice select_profile(const LoadedProfiles& loaded, const std::optional<std::string>& flag,
                             const Env& env, std::string_view hostname, SchedulerKind scheduler) {
  std::optional<std::string> named = flag ? flag : get_nonempty(env, "EZPZ_MACHINE");
  if (named) {
    if (const BrokenProfile* broken = find_broken(loaded, *named)) throw Error(broken->error);
  } else if (!match_hostname(loaded.profiles, env, hostname)) {
    // The generic profile that would be used is broken (a user's local.yaml): its own error,
    // file and line, not "missing".
    for (const auto& [kind, name] : k_generic_profiles) {
      const BrokenProfile* broken = kind == scheduler ? find_broken(loaded, name) : nullptr;
      if (broken) throw Error(broken->error);
    }
  }
  return select_profile(loaded.profiles, flag, env, hostname, scheduler);
}

}  // namespace ezpz
