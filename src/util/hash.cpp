#include "util/hash.h"

#include <fmt/format.h>

namespace tf {

uint64_t fnv1a64(std::string_view data, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hashHex(std::string_view data) { return fmt::format("{:016x}", fnv1a64(data)); }

}  // namespace tf
