#include "util/temp_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "util/error.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

// Slot states. A slot goes kFree -> kFilling -> kLive (registered), then back to kFree when
// unregistered, or to kRemoving when the signal handler claims it (the process is ending).
enum : int { kFree = 0, kFilling = 1, kLive = 2, kRemoving = 3 };

constexpr int kSlots = 64;
constexpr size_t kPathBytes = 4096;

struct Slot {
  std::atomic<int> state{kFree};
  char path[kPathBytes];
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the slots without locks");

Slot g_slots[kSlots];

int claimSlot(const std::string& path) {
  if (path.empty() || path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kLive, std::memory_order_release);
    return i;
  }
  return -1;
}

void freeSlot(int slot) {
  if (slot < 0) return;
  // Fails only when the handler has claimed the slot: the process is ending, leave it.
  int expected = kLive;
  g_slots[slot].state.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel);
}

// --- inside the signal handler: async-signal-safe calls only -----------------------------

struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

constexpr int kMaxDepth = 48;

bool isDotOrDotDot(const char* n) { return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')); }

// Removes `name` (relative to `dir_fd`, or absolute) and, for a folder, everything in it.
void removeTree(int dir_fd, const char* name, int depth) {
  if (unlinkat(dir_fd, name, 0) == 0 || errno == ENOENT) return;
  if (depth > kMaxDepth) return;
  int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[2048];
  // Entries removed while a listing is read may make the listing skip others, so the
  // folder is listed again from the start until a pass finds nothing (a bounded number of
  // times: something may keep writing into it).
  for (int pass = 0; pass < 16; ++pass) {
    bool found = false;
    if (lseek(fd, 0, SEEK_SET) != 0) break;
    for (;;) {
      long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        const auto* d = reinterpret_cast<const LinuxDirent64*>(buf + off);
        off += d->d_reclen;
        if (isDotOrDotDot(d->d_name)) continue;
        found = true;
        removeTree(fd, d->d_name, depth + 1);
      }
    }
    if (!found) break;
  }
  close(fd);
  unlinkat(dir_fd, name, AT_REMOVEDIR);
}

void removeRegistered() {
  for (int i = 0; i < kSlots; ++i) {
    int expected = kLive;
    if (!g_slots[i].state.compare_exchange_strong(expected, kRemoving, std::memory_order_acquire)) continue;
    removeTree(AT_FDCWD, g_slots[i].path, 0);
  }
}

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

void onSignal(int sig) {
  int saved = errno;
  removeRegistered();
  // The default action once the handler returns: the signal is blocked while the handler
  // runs, so raise() leaves it pending until then, and the process ends as if never caught.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
  errno = saved;
}

}  // namespace

fs::path tempRoot() {
  const char* env = std::getenv("TMPDIR");
  fs::path root = env && *env ? fs::path(env) : fs::path("/tmp");
  std::error_code ec;
  fs::path abs = fs::absolute(root, ec);
  return ec ? root : abs;
}

SignalCleanupPath::SignalCleanupPath(const fs::path& path) : slot_(claimSlot(path.string())) {}

SignalCleanupPath::~SignalCleanupPath() { release(); }

SignalCleanupPath::SignalCleanupPath(SignalCleanupPath&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }

SignalCleanupPath& SignalCleanupPath::operator=(SignalCleanupPath&& other) noexcept {
  if (this != &other) {
    release();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void SignalCleanupPath::release() {
  freeSlot(slot_);
  slot_ = -1;
}

TempDir::TempDir(std::string_view prefix) {
  fs::path root = tempRoot();
  std::string pattern = (root / (std::string(prefix) + "XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    throw EnvironmentError(fmt::format("{}: cannot create a temporary folder there: {} (set TMPDIR to a writable folder)",
                                       root.string(), std::strerror(errno)));
  }
  path_ = buf.data();
  cleanup_ = SignalCleanupPath(path_);
}

TempDir::~TempDir() {
  if (!keep_ && !path_.empty()) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  // Only now: a signal between the removal and this still finds the path registered.
  cleanup_.release();
}

TempDir::TempDir(TempDir&& other) noexcept
    : path_(std::move(other.path_)), cleanup_(std::move(other.cleanup_)), keep_(other.keep_) {
  other.path_.clear();
}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    TempDir old(std::move(*this));
    path_ = std::move(other.path_);
    cleanup_ = std::move(other.cleanup_);
    keep_ = other.keep_;
    other.path_.clear();
  }
  return *this;
}

void TempDir::keep() {
  keep_ = true;
  cleanup_.release();
}

void installSignalCleanup() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  // One cleanup at a time: a second signal waits until the first has removed everything.
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);
  for (int s : kSignals) {
    struct sigaction old {};
    sigaction(s, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;  // nohup: stays ignored
    sigaction(s, &sa, nullptr);
  }
}

}  // namespace tf
