// Private temporary folders and files that never outlive the process, even when it is
// interrupted.
//
//   TempDir            a folder made exclusively (mkdtemp, mode 0700) under tempRoot(),
//                      removed with everything in it when the object is destroyed
//   SignalCleanupPath  registers any path (a temporary file beside its target, as
//                      writeFileAtomic makes) for removal if a signal ends the process
//   installSignalCleanup  called once by main: on SIGINT, SIGTERM or SIGHUP every registered
//                      path is removed, then the signal is raised again with its default
//                      action, so that the exit status still says which signal ended it
//
// The handler does the removal itself, in the handler, with async-signal-safe system calls
// only (openat, getdents64, unlinkat, lseek, close, sigaction, raise): no allocation, no lock,
// no C++ library. Handing the work to a thread would need a thread that is always there
// and would race with the default action; removing in the handler is bounded work (a
// folder of candidate sources) and needs nothing else to run. The registered paths live in
// a fixed table of slots claimed with atomic compare-and-swap, which the handler reads
// without locking; a path longer than the slot or a full table is still removed by the
// destructor, only not on a signal.
//
// Environment variables read here: TMPDIR (the folder temporary folders go in; default /tmp).
#pragma once

#include <filesystem>
#include <string_view>

namespace tf {

// $TMPDIR when it is set and not empty, else /tmp.
std::filesystem::path tempRoot();

// Registers `path` for removal (recursively, for a folder) if SIGINT, SIGTERM or SIGHUP ends
// the process while this object lives. Destroying it unregisters the path, it does not
// remove it.
class SignalCleanupPath {
 public:
  SignalCleanupPath() = default;
  explicit SignalCleanupPath(const std::filesystem::path& path);
  ~SignalCleanupPath();
  SignalCleanupPath(SignalCleanupPath&& other) noexcept;
  SignalCleanupPath& operator=(SignalCleanupPath&& other) noexcept;
  SignalCleanupPath(const SignalCleanupPath&) = delete;
  SignalCleanupPath& operator=(const SignalCleanupPath&) = delete;

  // Unregisters now (the path was renamed away or is to be kept).
  void release();
  bool registered() const { return slot_ >= 0; }

 private:
  int slot_ = -1;
};

class TempDir {
 public:
  // Makes tempRoot()/<prefix>XXXXXX. Throws EnvironmentError naming the folder when it
  // cannot (TMPDIR missing or not writable).
  explicit TempDir(std::string_view prefix);
  ~TempDir();
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Leaves the folder on disk (--keep-work): neither the destructor nor a signal removes it.
  void keep();
  bool kept() const { return keep_; }

 private:
  std::filesystem::path path_;
  SignalCleanupPath cleanup_;
  bool keep_ = false;
};

// Installs the SIGINT / SIGTERM / SIGHUP handler described above. Call once, early in main,
// before any thread starts. A signal whose disposition is "ignore" (a `nohup` run) stays
// ignored.
void installSignalCleanup();

}  // namespace tf
