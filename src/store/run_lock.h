// Tells a live run from a dead one. A run holds an open-file-description lock (Linux
// F_OFD_SETLK) on one byte of its results database, at kRunLockBase + its run id, for as long
// as it lives; the kernel drops the lock when the process ends, however it ends (SIGKILL
// included). Another process asks whether that byte is locked.
//
// Why this way:
//   - a pid in the row cannot tell a live run from a dead one whose pid was reused, nor see
//     across hosts sharing a file system; a lock is released exactly when its holder dies;
//   - SQLite's own locks are classic POSIX locks on bytes 0x40000000-0x400001FF of the file
//     (and on the -shm file); the run bytes lie far past them, so neither kind ever conflicts;
//   - closing any descriptor of a file drops every classic POSIX lock the process holds on it
//     (SQLite's included). The descriptor that holds run locks is opened once per database
//     file and per process, and never closed: the process's end releases it.
// Within one process (several tasks of one `optimize` on one database), the registry itself
// remembers which runs are live, since a process does not see its own locks as conflicts.
#pragma once

#include <cstdint>
#include <filesystem>

namespace tf {

inline constexpr int64_t kRunLockBase = int64_t{1} << 40;

// Takes the lock of `run_id` on the database at `path` (held until releaseRunLock or the
// process's end). False when the lock could not be taken (another process holds it, or the
// file system has no such locks); the run goes on then, only unmarked.
bool acquireRunLock(const std::filesystem::path& path, int64_t run_id);
void releaseRunLock(const std::filesystem::path& path, int64_t run_id);

// True when a live process (this one included) holds the lock of `run_id`.
bool runIsLive(const std::filesystem::path& path, int64_t run_id);

}  // namespace tf
