// Seeded mutations of byte strings, for the fuzz harness (README.md beside this file).
//
// Entry points: Rng (splitmix64: the same seed gives the same inputs on every machine),
// mutate (1 to 8 stacked edits of an input: bit flips, interesting bytes and numbers,
// insertions, deletions, copies within the input, splices with another input, dictionary
// tokens, whole lines). Nothing here depends on the time or the address space.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tf::fuzz {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, n); 0 when n is 0.
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
  bool oneIn(size_t n) { return below(n) == 0; }

 private:
  uint64_t state_;
};

struct MutationSpace {
  std::vector<std::string> dictionary;   // tokens of the format (keys, separators, magic bytes)
  size_t max_size = 4096;                // inputs never grow beyond this
  // Binary formats (an SQLite file): edits that keep the size are preferred, and edits that
  // insert or delete bytes (which shift every page) are rare.
  bool binary = false;
  // Offsets worth hitting in a binary format (header fields, page headers).
  std::vector<size_t> hot_offsets;
  // A mutation of the target's own (an SQL edit of a database); returns false when it did
  // not apply. Called for about one mutation in eight when set.
  std::function<bool(std::string&, Rng&)> custom;
};

// A mutated copy of `input`; `others` (may be empty) are the inputs it may be spliced with.
std::string mutate(const std::string& input, const std::vector<const std::string*>& others,
                   const MutationSpace& space, Rng& rng);

}  // namespace tf::fuzz
