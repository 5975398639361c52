#include "capture/program_launch.h"

#include <cstdlib>

#include "util/paths.h"

namespace fs = std::filesystem;

namespace tf {

SpawnOptions programSpawn(const ProgramLaunch& launch) {
  SpawnOptions o;
  o.argv = launch.argv;
  const fs::path package = workerPackageDir();
  const fs::path boot = package / "tritonforge_worker" / "capture" / "boot";
  std::string path = boot.string() + ":" + package.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  o.env_set["PYTHONPATH"] = path;
  // Neither inherited from an outer capture or run: each run says for itself.
  o.env_unset = {"TRITONFORGE_CAPTURE_DIR", "TRITONFORGE_CAPTURE_OPTIONS", "TRITONFORGE_OVERLAY",
                 "TRITONFORGE_OVERLAY_STATS"};
  if (!launch.capture_dir.empty()) {
    o.env_set["TRITONFORGE_CAPTURE_DIR"] = fs::absolute(launch.capture_dir).string();
    o.env_set["TRITONFORGE_CAPTURE_OPTIONS"] = launch.capture_options;
    // torch.compile: Inductor's static launcher skips Triton's launch hooks, and a warm FX graph
    // cache hides its kernels' compilation; unless the user chose otherwise, both are turned off.
    for (const char* name : {"TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER", "TORCHINDUCTOR_FX_GRAPH_CACHE"}) {
      if (!std::getenv(name)) o.env_set[name] = "0";
    }
  }
  if (!launch.overlay.empty()) {
    o.env_set["TRITONFORGE_OVERLAY"] = fs::absolute(launch.overlay).string();
    if (!launch.overlay_stats.empty()) o.env_set["TRITONFORGE_OVERLAY_STATS"] = fs::absolute(launch.overlay_stats).string();
  }
  return o;
}

}  // namespace tf
