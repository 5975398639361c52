// Wall-clock timestamps for what the tool writes (result.json, the results database, the
// ceilings cache): ISO-8601 in UTC, to the second, e.g. "2026-12-01T09:30:00Z".
#pragma once

#include <string>

namespace tf {

std::string utcTimestamp();

}  // namespace tf
