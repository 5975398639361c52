// Where things live: the worker package, the per-user cache.
//
// Environment variables read here:
//   TRITONFORGE_WORKER_DIR  folder that holds tritonforge_worker/ (overrides the search)
//   TRITONFORGE_CACHE_DIR   the per-user cache (default $XDG_CACHE_HOME/tritonforge or ~/.cache/tritonforge)
#pragma once

#include <filesystem>

namespace tf {

std::filesystem::path executablePath();

// The folder that holds the Python package tritonforge_worker/. Looks at
// TRITONFORGE_WORKER_DIR, then beside the executable (../python, ../share/tritonforge/python,
// ../../python). Throws EnvironmentError when none holds it.
std::filesystem::path workerPackageDir();

// The per-user cache folder (created on demand by its users).
std::filesystem::path userCacheDir();

}  // namespace tf
