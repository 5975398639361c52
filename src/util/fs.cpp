#include "util/fs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "util/error.h"
#include "util/temp_dir.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

// Read from /proc: umask() can only be read by setting it, which would race with threads
// creating files.
mode_t processUmask() {
  static const mode_t mask = [] {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    }
    return static_cast<mode_t>(022);
  }();
  return mask;
}

}  // namespace

namespace {

// Opens `path` for reading without blocking (a FIFO's open waits for a writer otherwise) and
// keeps it only when it is a regular file: the type is checked on the opened descriptor, so a
// path swapped between a check and the open cannot slip a device or a FIFO in.
struct RegularFile {
  int fd = -1;
  off_t size = 0;
  ~RegularFile() {
    if (fd >= 0) ::close(fd);
  }
};

std::string describeType(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Throws UserError for a missing, directory, non-regular or unreadable path.
void openRegular(const fs::path& path, std::string_view what, RegularFile* f) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw UserError(fmt::format("{}: {} not found", path.string(), what));
    throw UserError(fmt::format("{}: cannot read {}: {}", path.string(), what, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    throw UserError(fmt::format("{}: {} is a directory, expected a file", path.string(), what));
  }
  if (!S_ISREG(st.st_mode)) {
    throw UserError(fmt::format("{}: {} is {}, expected a regular file", path.string(), what, describeType(st.st_mode)));
  }
  f->fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (f->fd < 0) throw UserError(fmt::format("{}: cannot read {}: {}", path.string(), what, std::strerror(errno)));
  if (::fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw UserError(fmt::format("{}: {} is {}, expected a regular file", path.string(), what, describeType(st.st_mode)));
  }
  f->size = st.st_size;
}

std::string sizeText(size_t bytes) {
  if (bytes >= (1u << 20)) return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1u << 20));
  if (bytes >= (1u << 10)) return fmt::format("{:.0f} KiB", static_cast<double>(bytes) / (1u << 10));
  return fmt::format("{} bytes", bytes);
}

// Reads at most `limit` bytes; `*more` says whether the file held more.
bool readUpTo(int fd, size_t limit, std::string* out, bool* more) {
  out->clear();
  char buf[1 << 16];
  for (;;) {
    size_t want = sizeof buf;
    if (out->size() + want > limit + 1) want = limit + 1 - out->size();
    if (want == 0) break;
    ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  *more = out->size() > limit;
  if (*more) out->resize(limit);
  return true;
}

}  // namespace

std::string readTextFile(const fs::path& path, std::string_view what, size_t max_bytes) {
  RegularFile f;
  openRegular(path, what, &f);
  auto too_large = [&] {
    return UserError(fmt::format("{}: {} is larger than {}, the most this tool reads for it", path.string(), what,
                                 sizeText(max_bytes)));
  };
  if (f.size > 0 && static_cast<size_t>(f.size) > max_bytes) throw too_large();
  std::string text;
  bool more = false;
  if (!readUpTo(f.fd, max_bytes, &text, &more)) {
    throw UserError(fmt::format("{}: error while reading {}: {}", path.string(), what, std::strerror(errno)));
  }
  if (more) throw too_large();  // it grew, or its size was not known (/proc)
  return text;
}

std::optional<std::string> readFileHead(const fs::path& path, size_t n) {
  RegularFile f;
  try {
    openRegular(path, "file", &f);
  } catch (const UserError&) {
    return std::nullopt;
  }
  std::string head;
  bool more = false;
  if (!readUpTo(f.fd, n, &head, &more)) return std::nullopt;
  return head;
}

void writeFileAtomic(const fs::path& path, std::string_view content) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) {
    throw UserError(fmt::format("{}: cannot create directory: {}", path.parent_path().string(),
                                ec.message()));
  }
  // The temporary file must sit beside the target for the rename to be atomic; mkstemp
  // makes it exclusively (never through a link someone left there), and it is registered
  // so that a signal between here and the rename does not leave it behind.
  std::string pattern = path.string() + ".tmpXXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) throw UserError(fmt::format("{}: cannot write file: {}", path.string(), std::strerror(errno)));
  fs::path tmp = name.data();
  SignalCleanupPath cleanup(tmp);
  auto failed = [&](const std::string& why) {
    fs::remove(tmp, ec);
    return UserError(fmt::format("{}: {}", path.string(), why));
  };
  // mkstemp gives 0600: the file keeps the permissions of the one it replaces, else gets
  // those any new file would.
  struct stat old {};
  fchmod(fd, ::stat(path.c_str(), &old) == 0 ? (old.st_mode & 07777) : (0666 & ~processUmask()));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      throw failed("error while writing file: " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) throw failed(std::string("error while writing file: ") + std::strerror(errno));
  fs::rename(tmp, path, ec);
  if (ec) throw failed("cannot write file: " + ec.message());
}

bool sameFile(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec)) return true;
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

void refuseOutputOverInput(const fs::path& out, const fs::path& in, std::string_view in_what) {
  if (out.empty() || in.empty() || !sameFile(out, in)) return;
  throw UserError(fmt::format("{}: the output would be written over the {} this command reads; give another output file",
                              out.string(), in_what));
}

bool isValidUtf8(std::string_view s, size_t* bad_offset) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    if (c < 0x80) n = 0;
    else if ((c >> 5) == 0x6 && c >= 0xC2) n = 1;
    else if ((c >> 4) == 0xE) n = 2;
    else if ((c >> 3) == 0x1E && c <= 0xF4) n = 3;
    else {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) {
        if (bad_offset) *bad_offset = i;
        return false;
      }
    }
    // Well-formed needs more than the byte patterns (RFC 3629): no overlong 3- and 4-byte
    // forms, no surrogates, nothing beyond U+10FFFF. JSON output (nlohmann) refuses them.
    auto second = n >= 2 ? static_cast<unsigned char>(s[i + 1]) : 0x80;
    if ((c == 0xE0 && second < 0xA0) || (c == 0xED && second > 0x9F) || (c == 0xF0 && second < 0x90) ||
        (c == 0xF4 && second > 0x8F)) {
      if (bad_offset) *bad_offset = i;
      return false;
    }
    i += n + 1;
  }
  return true;
}

int lineOfOffset(std::string_view text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
  }
  return line;
}

}  // namespace tf
