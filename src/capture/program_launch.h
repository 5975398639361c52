// How `capture` and `run --overlay` start the user's program: unchanged, with the worker's
// capture/boot/ first on its PYTHONPATH, whose sitecustomize.py installs the recorder (and the
// overlay) once the program imports triton.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "util/subprocess.h"

namespace tf {

struct ProgramLaunch {
  std::vector<std::string> argv;
  std::filesystem::path capture_dir;    // empty: no recording
  std::string capture_options;          // TRITONFORGE_CAPTURE_OPTIONS ("save=0,...")
  std::filesystem::path overlay;        // empty: no overlay (else its overlay.json)
  std::filesystem::path overlay_stats;  // where the overlay writes what it served (optional)
};

SpawnOptions programSpawn(const ProgramLaunch& launch);

}  // namespace tf
