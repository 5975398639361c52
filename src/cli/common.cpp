#include <algorithm>

#include "cli/commands.h"
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

WorkerOptions workerOptionsFor(const GlobalOptions& global, bool probe_torch) {
  WorkerOptions w;
  w.python = choosePython(global.python);
  w.package_dir = workerPackageDir();
  w.hello_args = {{"probe_torch", probe_torch}};
  return w;
}

}  // namespace tf
