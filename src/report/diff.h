// Unified diffs of two texts (through dtl, Debian's libdtl-dev).
#pragma once

#include <string>

namespace tf {

// A unified diff with `context` lines, headed "--- a/<from_name>" / "+++ b/<to_name>".
// Empty when the texts are equal.
std::string unifiedDiff(const std::string& from, const std::string& to, const std::string& from_name,
                        const std::string& to_name, int context = 3);

}  // namespace tf
