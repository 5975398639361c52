// Small filesystem helpers whose failures name the file (they throw UserError).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace tf {

// Reads a whole regular file. Throws UserError naming `path` when it is missing, a
// directory, or unreadable. `what` says what the file is for ("task file").
std::string readTextFile(const std::filesystem::path& path, std::string_view what);

// Writes `content` to `path` through a temporary file and a rename, so that a reader
// never sees half a file. Creates parent directories. Throws UserError on failure.
void writeFileAtomic(const std::filesystem::path& path, std::string_view content);

// True when `text` is valid UTF-8. On failure `bad_offset` gets the first bad byte.
bool isValidUtf8(std::string_view text, size_t* bad_offset = nullptr);

// The line (1-based) holding byte `offset` of `text`.
int lineOfOffset(std::string_view text, size_t offset);

}  // namespace tf
