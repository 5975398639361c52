// Content hashes for caching and database keys (not for security).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tf {

// 64-bit FNV-1a of `data`, continued from `seed`.
uint64_t fnv1a64(std::string_view data, uint64_t seed = 0xcbf29ce484222325ULL);

// 16 hex digits of fnv1a64(data).
std::string hashHex(std::string_view data);

}  // namespace tf
