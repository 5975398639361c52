// Small filesystem helpers whose failures name the file (they throw UserError).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tf {

// Size limits of the files the tool reads. Sources and task files are text a person wrote;
// the larger limit is for what tools write (Nsight Compute CSVs, results, sweeps).
inline constexpr size_t kMaxTaskFileBytes = 1u << 20;      // 1 MiB
inline constexpr size_t kMaxSourceFileBytes = 8u << 20;    // 8 MiB
inline constexpr size_t kMaxDataFileBytes = 256u << 20;    // 256 MiB

// Reads a whole regular file of at most `max_bytes`. Throws UserError naming `path` when it is
// missing, a directory, not a regular file (a FIFO, a device such as /dev/zero: refused
// before anything is read, so nothing blocks or fills memory), larger than `max_bytes`, or
// unreadable. `what` says what the file is for ("task file").
std::string readTextFile(const std::filesystem::path& path, std::string_view what,
                         size_t max_bytes = kMaxDataFileBytes);

// The first `n` bytes of a regular file (fewer when it is shorter); nullopt when `path` is
// not a regular file or cannot be read. Never blocks on a FIFO.
std::optional<std::string> readFileHead(const std::filesystem::path& path, size_t n);

// Writes `content` to `path` through a temporary file and a rename, so that a reader
// never sees half a file. Creates parent directories. Throws UserError on failure.
void writeFileAtomic(const std::filesystem::path& path, std::string_view content);

// True when `a` and `b` name the same file (through links or different spellings), or would
// once created.
bool sameFile(const std::filesystem::path& a, const std::filesystem::path& b);

// Throws UserError when the output `out` would be written over the input `in` (what the user
// gave as `in_what`): an output never replaces what the command read.
void refuseOutputOverInput(const std::filesystem::path& out, const std::filesystem::path& in, std::string_view in_what);

// True when `text` is valid UTF-8. On failure `bad_offset` gets the first bad byte.
bool isValidUtf8(std::string_view text, size_t* bad_offset = nullptr);

// The line (1-based) holding byte `offset` of `text`.
int lineOfOffset(std::string_view text, size_t offset);

}  // namespace tf
