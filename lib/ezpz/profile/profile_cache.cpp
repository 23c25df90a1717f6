#include "ezpz/profile/profile_cache.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "ezpz/core/content_hash.hpp"
#include "ezpz/core/varint.hpp"

namespace ezpz {
namespace {

// The cache is derived from the YAML reader's key tables (profile_keys): each type a
// key can hold is encoded once below, and a keyed struct is its members in key order,
// without the names. Every value is a varint or a varint length and its bytes: decoding
// is a walk over the text, with no parser and no tree (a JSON cache was a third of a
// launch's instructions). The tables themselves are part of the cache key
// (cache_layout), so a cache written before a key was added, moved or retyped is never
// read by position.

constexpr std::string_view k_magic = "ezpz-profile-cache\n";

template <typename T>
concept Keyed = std::same_as<T, MachineMatch> || std::same_as<T, CpuBind> ||
    std::same_as<T, GpuBind> || std::same_as<T, BatchDefaults>;

// A cache cut short or of another shape: the cache misses.
struct Malformed {};

class Reader {
 public:
  explicit Reader(std::string_view text) : rest_(text) {}
  std::uint64_t number() {
    if (auto value = take_varint(rest_)) return *value;
    throw Malformed{};
  }
  std::string_view bytes() {
    const std::uint64_t size = number();
    if (size > rest_.size()) throw Malformed{};
    std::string_view taken = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return taken;
  }
  std::size_t remaining() const { return rest_.size(); }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// Signed numbers as zigzag varints (-1 -> 1, 1 -> 2).
std::uint64_t zigzag(int value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 31);
}
int unzigzag(std::uint64_t value) {
  return static_cast<int>(static_cast<std::int64_t>(value >> 1) ^
                          -static_cast<std::int64_t>(value & 1));
}

void append_bytes(std::string& out, std::string_view bytes) {
  append_varint(out, bytes.size());
  out += bytes;
}

void encode(std::string& out, const std::string& value) {
  append_bytes(out, value);
}
void encode(std::string& out, int value) {
  append_varint(out, zigzag(value));
}
void encode(std::string& out, CpuBind::Style style) {
  append_varint(out, static_cast<std::uint64_t>(style));
}
void encode(std::string& out, const std::optional<SchedulerKind>& scheduler) {
  append_bytes(out, scheduler ? to_string(*scheduler) : "");
}
void encode(std::string& out, const std::pair<std::string, std::string>& pair) {
  encode(out, pair.first);
  encode(out, pair.second);
}
void encode(std::string& out, const BadNodePattern& pattern) {
  encode(out, pattern.name);
  encode(out, pattern.regex);
}
template <typename T>
void encode(std::string& out, const std::vector<T>& items);
template <Keyed T>
void encode(std::string& out, const T& value);

// Appends each member that a key of T fills.
template <typename T>
void encode_members(std::string& out, const T& value) {
  for (const ProfileKey<T>& key : profile_keys<T>()) {
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::monostate>)
            encode(out, value.*member);
        },
        key.member);
  }
}

template <typename T>
void encode(std::string& out, const std::vector<T>& items) {
  append_varint(out, items.size());
  for (const T& item : items) encode(out, item);
}
template <Keyed T>
void encode(std::string& out, const T& value) {
  encode_members(out, value);
}

// Each decode throws Malformed for a cache cut short or of another shape.
void decode(Reader& in, std::string& value) {
  value = in.bytes();
}
void decode(Reader& in, int& value) {
  value = unzigzag(in.number());
}
void decode(Reader& in, CpuBind::Style& style) {
  style = static_cast<CpuBind::Style>(in.number());
}
void decode(Reader& in, std::optional<SchedulerKind>& scheduler) {
  scheduler = scheduler_from_string(in.bytes());
}
void decode(Reader& in, std::pair<std::string, std::string>& pair) {
  decode(in, pair.first);
  decode(in, pair.second);
}
void decode(Reader& in, BadNodePattern& pattern) {
  decode(in, pattern.name);
  decode(in, pattern.regex);
}
template <typename T>
void decode(Reader& in, std::vector<T>& items);
template <Keyed T>
void decode(Reader& in, T& value);

// Reads the members that the keys of T fill, in key order.
template <typename T>
void decode_members(Reader& in, T& value) {
  for (const ProfileKey<T>& key : profile_keys<T>()) {
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::monostate>)
            decode(in, value.*member);
        },
        key.member);
  }
}

template <typename T>
void decode(Reader& in, std::vector<T>& items) {
  const std::uint64_t count = in.number();
  // Every item takes at least one byte: a count beyond that is a damaged cache, not a
  // reason to allocate.
  if (count > in.remaining()) throw Malformed{};
  items.resize(count);
  for (T& item : items) decode(in, item);
}
template <Keyed T>
void decode(Reader& in, T& value) {
  decode_members(in, value);
}

// A profile: its file's name and path, then its keys.
void encode_profile(std::string& out, const MachineProfile& profile) {
  encode(out, profile.name);
  encode(out, profile.source);
  encode_members(out, profile);
}

MachineProfile decode_profile(Reader& in) {
  MachineProfile profile;
  decode(in, profile.name);
  decode(in, profile.source);
  decode_members(in, profile);
  return profile;
}

template <typename T>
void describe_keys(std::string& out) {
  for (const ProfileKey<T>& key : profile_keys<T>())
    out += fmt::format("{}:{};", key.key, key.member.index());
}

// Every key of every keyed struct, in order, with its type.
const std::string& cache_layout() {
  static const std::string layout = [] {
    std::string text;
    describe_keys<MachineProfile>(text);
    describe_keys<MachineMatch>(text);
    describe_keys<CpuBind>(text);
    describe_keys<GpuBind>(text);
    describe_keys<BatchDefaults>(text);
    return text;
  }();
  return layout;
}

void mix(ContentHash& hash, std::string_view bytes) {
  hash.add(bytes);
  hash.add_separator();
}

// A key's hash starts with the encoding's version and the key tables. The encoding of each type
// above: bump the version when one changes. A new key needs no bump.
ContentHash cache_hash() {
  ContentHash hash;
  mix(hash, "ezpz-profile-cache-v9");
  mix(hash, cache_layout());
  return hash;
}

}  // namespace

std::string profile_cache_key(const std::vector<ProfileFile>& files) {
  // Over "path\0text\0" for each file, after the encoding and the key tables.
  ContentHash hash = cache_hash();
  for (const ProfileFile& file : files) {
    mix(hash, file.path);
    mix(hash, file.text);
  }
  return fmt::format("{:016x}-{}", hash.value(), files.size());
}

std::optional<std::string> profile_stamp_key(const std::vector<ProfileStamp>& stamps,
                                             std::int64_t now_ns) {
  ContentHash hash = cache_hash();
  for (const ProfileStamp& stamp : stamps) {
    if (std::max(stamp.mtime_ns, stamp.ctime_ns) > now_ns - k_settled_ns) return std::nullopt;
    mix(hash, stamp.path);
    mix(hash, fmt::format("{} {} {} {} {}", stamp.device, stamp.inode, stamp.size, stamp.mtime_ns,
                          stamp.ctime_ns));
  }
  // "stat-": never equal to a key of the texts, whatever the digests.
  return fmt::format("stat-{:016x}-{}", hash.value(), stamps.size());
}

namespace {

// A digest of everything before it, last in the file: bytes changed on disk (a bad block, a
// hand edit, a torn write) miss, never decode into a profile nobody wrote.
constexpr std::size_t k_sum_size = 16;

// What the YAML reader would have refused, refused here too: a name that is not a machine's,
// a variable that is not a name (the value is quoted where it is printed, the name is not).
bool believable(const MachineProfile& p) {
  return is_machine_name(p.name) &&
         std::all_of(p.env.begin(), p.env.end(),
                     [](const auto& variable) { return is_variable_name(variable.first); });
}
std::string checksum(std::string_view bytes) {
  ContentHash hash;
  hash.add(bytes);
  return fmt::format("{:016x}", hash.value());
}

}  // namespace

std::string serialize_profiles(std::string_view key, const std::vector<MachineProfile>& profiles) {
  std::string out(k_magic);
  append_bytes(out, key);
  append_varint(out, profiles.size());
  for (const MachineProfile& profile : profiles) encode_profile(out, profile);
  return out + checksum(out);
}

std::optional<std::vector<MachineProfile>> deserialize_profiles(std::string_view text,
                                                                std::string_view key) {
  if (text.size() < k_sum_size || !text.starts_with(k_magic)) return std::nullopt;
  const std::string_view body = text.substr(0, text.size() - k_sum_size);
  if (checksum(body) != text.substr(body.size())) return std::nullopt;
  Reader in(body.substr(k_magic.size()));
  try {
    if (in.bytes() != key) return std::nullopt;
    const std::uint64_t count = in.number();
    if (count > in.remaining()) return std::nullopt;
    std::vector<MachineProfile> profiles(count);
    for (MachineProfile& profile : profiles) profile = decode_profile(in);
    if (!in.done() || !std::all_of(profiles.begin(), profiles.end(), believable)) {
      return std::nullopt;
    }
    return profiles;
  } catch (const Malformed&) {
    return std::nullopt;
  }
}

}  // namespace ezpz
