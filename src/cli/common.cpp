#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cli/commands.h"
#include "util/error.h"
#include "util/paths.h"
#include "worker/worker_process.h"

namespace tf {
namespace {
std::vector<RegisteredCommand>& registry() {
  static std::vector<RegisteredCommand> r;
  return r;
}
}  // namespace

CommandRegistration::CommandRegistration(const char* name, int order, CommandRegistrar registrar) {
  registry().push_back({name, order, registrar});
}

std::vector<RegisteredCommand> registeredCommands() {
  auto r = registry();
  std::sort(r.begin(), r.end(), [](const RegisteredCommand& a, const RegisteredCommand& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return r;
}

namespace {
std::string numberText(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}
}  // namespace

void checkTimeoutFlag(std::string_view flag, double seconds) {
  constexpr double kWeek = 7 * 24 * 3600;
  if (!(std::isfinite(seconds) && seconds > 0 && seconds <= kWeek)) {
    throw UserError(fmt::format("{} must be a number of seconds > 0 and at most {} (a week), not {}", flag, kWeek,
                                numberText(seconds)));
  }
}

void checkPositiveFlag(std::string_view flag, double value, double max) {
  if (!(std::isfinite(value) && value > 0 && value <= max)) {
    throw UserError(fmt::format("{} must be a number > 0 and at most {}, not {}", flag, max, numberText(value)));
  }
}

void checkJobsFlag(int jobs) {
  if (jobs < 0 || jobs > 1024) {
    throw UserError(fmt::format("--jobs must be between 1 and 1024 (or 0: every CPU core but the one the measurement worker needs), not {}",
                                jobs));
  }
}

WorkerOptions workerOptionsFor(const GlobalOptions& global, bool probe_torch) {
  WorkerOptions w;
  w.python = choosePython(global.python);
  w.package_dir = workerPackageDir();
  w.hello_args = {{"probe_torch", probe_torch}};
  return w;
}

}  // namespace tf
