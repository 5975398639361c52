#include "util/paths.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "util/error.h"

namespace tf {
namespace fs = std::filesystem;

fs::path executablePath() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return p;
}

fs::path workerPackageDir() {
  auto holds = [](const fs::path& dir) {
    std::error_code ec;
    return fs::exists(dir / "tritonforge_worker" / "__init__.py", ec);
  };
  if (const char* env = std::getenv("TRITONFORGE_WORKER_DIR"); env && *env) {
    if (holds(env)) return fs::absolute(env);
    throw EnvironmentError(
        fmt::format("TRITONFORGE_WORKER_DIR={} does not hold tritonforge_worker/__init__.py", env));
  }
  fs::path exe_dir = executablePath().parent_path();
  for (const fs::path& rel : {fs::path("../python"), fs::path("../share/tritonforge/python"),
                              fs::path("../../python"), fs::path("python")}) {
    fs::path dir = (exe_dir / rel).lexically_normal();
    if (holds(dir)) return dir;
  }
  throw EnvironmentError(fmt::format(
      "cannot find the Python worker package (tritonforge_worker) near {}; set TRITONFORGE_WORKER_DIR",
      exe_dir.string()));
}

fs::path userCacheDir() {
  if (const char* env = std::getenv("TRITONFORGE_CACHE_DIR"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "tritonforge";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "tritonforge";
  return fs::temp_directory_path() / "tritonforge-cache";
}

}  // namespace tf
