#include "fuzz/mutator.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace tf::fuzz {
namespace {

// Numbers at the edges of what parsers and conversions handle: int and int64 limits and one
// past them, huge and tiny floats, a float that overflows, thousands separators, signs.
constexpr std::string_view kNumbers[] = {
    "0",           "-0",         "1",          "-1",         "2",           "16",          "255",
    "256",         "65535",      "65536",      "65,536",     "1,234,567.5", "2147483647",  "2147483648",
    "-2147483648", "-2147483649", "4294967295", "4294967296", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808",       "18446744073709551615",    "18446744073709551616", "1e308", "-1e308",
    "1e309",       "1e-320",     "0.0",        "1.5",        "1e3",         "0x10",        "nan",
    "inf",         "-inf",       "+1",         "00",         ".5",          "5.",          "1_000",
};

constexpr unsigned char kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0xc0, 0xe0, 0xed, 0xf0, 0xf4,
                                    '\n', '\r', '\t', ' ', '"', '\'', ',', '.', '[', ']', '{', '}',
                                    '=', ':', '\\', '#', '-', '0', '9', 'a', 'z'};

size_t pickPos(const std::string& s, const MutationSpace& space, Rng& rng, bool end_ok) {
  if (s.empty()) return 0;
  if (!space.hot_offsets.empty() && rng.oneIn(3)) {
    size_t p = space.hot_offsets[rng.below(space.hot_offsets.size())];
    if (p < s.size()) return p;
  }
  // Binary files are mostly zeros: look for a byte that is not.
  if (space.binary && rng.oneIn(2)) {
    for (int tries = 0; tries < 16; ++tries) {
      size_t p = rng.below(s.size());
      if (s[p] != 0) return p;
    }
  }
  return rng.below(s.size() + (end_ok ? 1 : 0));
}

void insertAt(std::string& s, size_t pos, std::string_view what, const MutationSpace& space) {
  if (s.size() >= space.max_size) return;
  size_t room = space.max_size - s.size();
  s.insert(pos, what.substr(0, room));
}

void overwriteAt(std::string& s, size_t pos, std::string_view what) {
  if (pos >= s.size()) return;
  size_t n = std::min(what.size(), s.size() - pos);
  s.replace(pos, n, what.substr(0, n));
}

// Replaces a run of digits (with its sign, dot and exponent) by another number.
bool replaceNumber(std::string& s, Rng& rng) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    size_t b = i;
    if (b > 0 && (s[b - 1] == '-' || s[b - 1] == '+')) --b;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' ||
                            s[i] == 'E' || s[i] == ',')) {
      ++i;
    }
    runs.emplace_back(b, i - b);
    if (runs.size() >= 64) break;
  }
  if (runs.empty()) return false;
  auto [pos, len] = runs[rng.below(runs.size())];
  s.replace(pos, len, kNumbers[rng.below(std::size(kNumbers))]);
  return true;
}

// The [begin, end) of each line (without its '\n').
std::vector<std::pair<size_t, size_t>> lines(const std::string& s) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find('\n', b);
    if (e == std::string::npos) e = s.size();
    out.emplace_back(b, e);
    if (e == s.size()) break;
    b = e + 1;
  }
  return out;
}

void mutateOnce(std::string& s, const std::vector<const std::string*>& others, const MutationSpace& space,
                Rng& rng) {
  if (space.custom && rng.oneIn(8) && space.custom(s, rng)) return;
  const bool resize_ok = !space.binary || rng.oneIn(16);
  switch (rng.below(14)) {
    case 0:  // flip a bit
      if (!s.empty()) s[pickPos(s, space, rng, false)] ^= static_cast<char>(1u << rng.below(8));
      return;
    case 1:  // an interesting byte
      if (!s.empty()) s[pickPos(s, space, rng, false)] = static_cast<char>(kBytes[rng.below(std::size(kBytes))]);
      return;
    case 2:  // a random byte
      if (!s.empty()) s[pickPos(s, space, rng, false)] = static_cast<char>(rng.below(256));
      return;
    case 3: {  // insert random bytes
      if (!resize_ok) return;
      std::string bytes(1 + rng.below(8), '\0');
      for (char& c : bytes) c = static_cast<char>(rng.oneIn(2) ? kBytes[rng.below(std::size(kBytes))] : rng.below(256));
      insertAt(s, pickPos(s, space, rng, true), bytes, space);
      return;
    }
    case 4: {  // delete a range
      if (!resize_ok || s.empty()) return;
      size_t pos = pickPos(s, space, rng, false);
      s.erase(pos, 1 + rng.below(std::min<size_t>(64, s.size() - pos)));
      return;
    }
    case 5: {  // copy a range of the input over another place of it
      if (s.size() < 2) return;
      size_t from = rng.below(s.size()), n = 1 + rng.below(std::min<size_t>(64, s.size() - from));
      std::string chunk = s.substr(from, n);
      if (resize_ok && rng.oneIn(2)) insertAt(s, pickPos(s, space, rng, true), chunk, space);
      else overwriteAt(s, pickPos(s, space, rng, false), chunk);
      return;
    }
    case 6:
    case 7: {  // a dictionary token, inserted or written over
      if (space.dictionary.empty()) return;
      const std::string& tok = space.dictionary[rng.below(space.dictionary.size())];
      if (resize_ok && (s.empty() || rng.oneIn(2))) insertAt(s, pickPos(s, space, rng, true), tok, space);
      else overwriteAt(s, pickPos(s, space, rng, false), tok);
      return;
    }
    case 8: {  // splice: the head of this input, the tail of another
      if (others.empty()) return;
      const std::string& o = *others[rng.below(others.size())];
      if (space.binary && o.size() == s.size()) {
        size_t from = rng.below(s.size() + 1), n = rng.below(s.size() - from + 1);
        s.replace(from, n, o.substr(from, n));
        return;
      }
      if (!resize_ok) return;
      size_t cut = rng.below(s.size() + 1), ocut = rng.below(o.size() + 1);
      s = s.substr(0, cut) + o.substr(ocut);
      if (s.size() > space.max_size) s.resize(space.max_size);
      return;
    }
    case 9:  // another number
      if (!space.binary) replaceNumber(s, rng);
      return;
    case 10: {  // a line dropped, doubled, or taken from another input
      if (space.binary) return;
      auto ls = lines(s);
      auto [b, e] = ls[rng.below(ls.size())];
      size_t k = rng.below(3);
      if (k == 0) {
        s.erase(b, std::min(e + 1, s.size()) - b);
      } else if (k == 1) {
        insertAt(s, b, s.substr(b, e - b) + "\n", space);
      } else if (!others.empty()) {
        const std::string& o = *others[rng.below(others.size())];
        auto ol = lines(o);
        auto [ob, oe] = ol[rng.below(ol.size())];
        insertAt(s, b, o.substr(ob, oe - ob) + "\n", space);
      }
      return;
    }
    case 11:  // cut short
      if (resize_ok && !s.empty()) s.resize(rng.below(s.size()));
      return;
    case 12: {  // a 1, 2 or 4 byte big-endian integer at an edge value (binary headers)
      if (s.empty()) return;
      static constexpr uint32_t kInts[] = {0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x200, 0x1000, 0x7fff, 0x8000,
                                           0xffff, 0x10000, 0x7fffffff, 0x80000000u, 0xffffffffu};
      uint32_t v = kInts[rng.below(std::size(kInts))];
      if (rng.oneIn(4)) v += static_cast<uint32_t>(rng.below(3)) - 1;
      size_t width = size_t{1} << rng.below(3);
      std::string bytes(width, '\0');
      for (size_t i = 0; i < width; ++i) bytes[i] = static_cast<char>((v >> (8 * (width - 1 - i))) & 0xff);
      overwriteAt(s, pickPos(s, space, rng, false), bytes);
      return;
    }
    default: {  // swap two ranges of equal length
      if (s.size() < 4) return;
      size_t n = 1 + rng.below(std::min<size_t>(16, s.size() / 2));
      size_t a = rng.below(s.size() - n + 1), b = rng.below(s.size() - n + 1);
      std::string ca = s.substr(a, n), cb = s.substr(b, n);
      overwriteAt(s, a, cb);
      overwriteAt(s, b, ca);
      return;
    }
  }
}

}  // namespace

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string mutate(const std::string& input, const std::vector<const std::string*>& others,
                   const MutationSpace& space, Rng& rng) {
  std::string s = input.size() > space.max_size ? input.substr(0, space.max_size) : input;
  // Mostly one or two edits (they keep an input close to valid, so that it gets deep into
  // the loader), sometimes up to eight.
  size_t n = 1 + (rng.oneIn(3) ? rng.below(8) : rng.below(2));
  for (size_t i = 0; i < n; ++i) mutateOnce(s, others, space, rng);
  return s;
}

}  // namespace tf::fuzz
