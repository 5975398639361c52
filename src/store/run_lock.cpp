#include "store/run_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace tf {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::pair<dev_t, ino_t>, int> fds;               // one descriptor per file, never closed
  std::set<std::pair<std::pair<dev_t, ino_t>, int64_t>> live;  // runs of this process
};

Registry& registry() {
  static Registry* r = new Registry;  // outlives every static destructor: the fds stay open
  return *r;
}

// The file's identity and its registry descriptor (opened on first use); -1 when the file
// cannot be opened. Called with the registry's lock held.
int descriptorOf(Registry& r, const std::filesystem::path& path, std::pair<dev_t, ino_t>* id) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  *id = {st.st_dev, st.st_ino};
  auto it = r.fds.find(*id);
  if (it != r.fds.end()) return it->second;
  // Taking a write lock needs a descriptor open for writing; a read-only one can still ask.
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);  // can still ask
  if (fd < 0) return -1;
  r.fds[*id] = fd;
  return fd;
}

struct flock byteOf(int64_t run_id, short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(kRunLockBase + run_id);
  fl.l_len = 1;
  fl.l_pid = 0;  // required by F_OFD_*
  return fl;
}

}  // namespace

bool acquireRunLock(const std::filesystem::path& path, int64_t run_id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::pair<dev_t, ino_t> id;
  int fd = descriptorOf(r, path, &id);
  if (fd < 0) return false;
  struct flock fl = byteOf(run_id, F_WRLCK);
  if (::fcntl(fd, F_OFD_SETLK, &fl) != 0) return false;
  r.live.insert({id, run_id});
  return true;
}

void releaseRunLock(const std::filesystem::path& path, int64_t run_id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::pair<dev_t, ino_t> id;
  int fd = descriptorOf(r, path, &id);
  if (fd < 0) return;
  struct flock fl = byteOf(run_id, F_UNLCK);
  ::fcntl(fd, F_OFD_SETLK, &fl);
  r.live.erase({id, run_id});
}

bool runIsLive(const std::filesystem::path& path, int64_t run_id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::pair<dev_t, ino_t> id;
  int fd = descriptorOf(r, path, &id);
  if (fd < 0) return false;
  if (r.live.count({id, run_id})) return true;
  struct flock fl = byteOf(run_id, F_WRLCK);
  if (::fcntl(fd, F_OFD_GETLK, &fl) != 0) return false;
  return fl.l_type != F_UNLCK;
}

}  // namespace tf
