// Tasks from a capture: for each of the kernels that cost most, a task that replays its saved
// launches (one case per saved distinct launch), ready for `tritonforge optimize`.
//
// DIR/tasks/<kernel>/ holds: a copy of the kernel's module with a launcher appended
// (`tritonforge_replay`, launching the kernel as the program did: what the program passed
// becomes the launcher's parameters, except constexprs and launch options that were the same in
// every case, which are written at the launch where the search can tune them; the grid is
// rebuilt from the parameters when one of a few common forms reproduces every recorded grid),
// task.toml (with `package`/`package_root` when the module belongs to a package, so that its
// relative imports find the installed package), harness.py (replay_harness.py of the worker)
// and replay.json (the saved memory of each case). The expected outputs are the memory the
// launch changed, as the launch left it.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "capture/capture_record.h"

namespace tf {

struct ReplayTask {
  std::string kernel;
  std::filesystem::path task;   // empty when not written
  std::string why_not;          // why no task was written
  int cases = 0;
  std::vector<std::string> notes;  // what the replay could not keep as the program had it
};

// Writes the tasks of the `top` tunable kernels with the most GPU time under dir/tasks/.
// `worker_dir` holds tritonforge_worker/ (its capture/replay_harness.py is copied).
std::vector<ReplayTask> writeReplayTasks(const CaptureSummary& summary, const std::filesystem::path& dir, size_t top,
                                         const std::filesystem::path& worker_dir);

}  // namespace tf
