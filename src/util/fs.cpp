#include "util/fs.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "util/error.h"

namespace tf {
namespace fs = std::filesystem;

std::string readTextFile(const fs::path& path, std::string_view what) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    throw UserError(fmt::format("{}: {} not found", path.string(), what));
  }
  if (fs::is_directory(status)) {
    throw UserError(fmt::format("{}: {} is a directory, expected a file", path.string(), what));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot read {}", path.string(), what));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw UserError(fmt::format("{}: error while reading {}", path.string(), what));
  return ss.str();
}

void writeFileAtomic(const fs::path& path, std::string_view content) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) {
    throw UserError(fmt::format("{}: cannot create directory: {}", path.parent_path().string(),
                                ec.message()));
  }
  fs::path tmp = path;
  tmp += fmt::format(".tmp{}", static_cast<long>(getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError(fmt::format("{}: cannot write file", path.string()));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw UserError(fmt::format("{}: error while writing file", path.string()));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw UserError(fmt::format("{}: cannot write file: {}", path.string(), ec.message()));
  }
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
