// What this binary is: its version (CMake's project VERSION, also the Python package's) and the
// git commit it was built from, for `--version`, result.json and the results database.
//
// The commit is written at build time by cmake/build_info.cmake into a generated source file,
// so that a new commit relinks the binary without recompiling everything that includes this.
#pragma once

#include <string>

namespace tf {

// `git rev-parse --short HEAD` of the source tree at build time, "-dirty" appended when
// tracked files had changes; "unknown" when the sources were not a git checkout.
const char* toolCommit();

// TRITONFORGE_VERSION, e.g. "0.1.0".
inline const char* toolVersion() { return TRITONFORGE_VERSION; }

// "tritonforge 0.1.0 (commit 7b6df92)": what `tritonforge --version` prints.
inline std::string toolVersionLine() {
  return std::string("tritonforge ") + toolVersion() + " (commit " + toolCommit() + ")";
}

}  // namespace tf
