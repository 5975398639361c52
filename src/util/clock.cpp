#include "util/clock.h"

#include <ctime>

namespace tf {

std::string utcTimestamp(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

}  // namespace tf
