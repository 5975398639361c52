// The overlay of a capture: which tuned kernels `tritonforge run --overlay DIR` serves to the
// program, built from the capture's replay tasks (DIR/tasks/) and their optimized results
// (DIR/optimized/<task>/result.json).
//
// DIR/overlay/ (made anew on each build) holds overlay.json (schema tritonforge.overlay/1, read
// by python/tritonforge_worker/capture/overlay.py), and per served kernel a folder with the tuned
// copy of its module (the search's result: the kernel with the replay launcher it tuned) and,
// when the search changed the kernel's own source, a patch of the original file for users who
// prefer to apply it (launch parameters live in the program's own launch, which no patch
// reaches: the manifest's `tuned_launch` shows them).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace tf {

struct OverlayKernel {
  std::string kernel;
  std::string task;             // its folder under DIR/tasks/
  bool served = false;
  std::string why_not;          // not served: not optimized, nothing faster, ...
  double speedup = 1;           // the optimize run's confirmed geometric mean
  double rtol = 0, atol = 0;    // its task's tolerances
  std::filesystem::path patch;  // empty: the search changed only the launch
  std::string note;             // about the patch (a per-shape dispatch, a changed source)
};

struct OverlayBuild {
  std::filesystem::path manifest;  // DIR/overlay/overlay.json
  std::vector<OverlayKernel> kernels;
  size_t served() const;
};

// Builds DIR/overlay/ from DIR/tasks/ and DIR/optimized/. Throws UserError when DIR is not a
// capture folder with replay tasks.
OverlayBuild buildOverlay(const std::filesystem::path& dir);

// One line per kernel, each starting with `prefix`: "serving K (task T, 1.302x on its replay);
// patch: P" (and its note below), or "not serving K: why".
std::string overlayText(const OverlayBuild& build, const std::string& prefix);

}  // namespace tf
