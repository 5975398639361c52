// Wall-clock timestamps for what the tool writes (result.json, the results database, the
// ceilings cache): ISO-8601 in UTC, to the second, e.g. "2026-12-01T09:30:00Z".
#pragma once

#include <string>

namespace tf {

// `format` is strftime's (a folder name: "%Y%m%d-%H%M%S").
std::string utcTimestamp(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace tf
