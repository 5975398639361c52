#include "cli/commands.h"
#include "util/paths.h"
#include "worker/worker_process.h"

namespace tf {

WorkerOptions workerOptionsFor(const GlobalOptions& global, bool probe_torch) {
  WorkerOptions w;
  w.python = choosePython(global.python);
  w.package_dir = workerPackageDir();
  w.hello_args = {{"probe_torch", probe_torch}};
  return w;
}

}  // namespace tf
