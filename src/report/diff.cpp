#include "report/diff.h"

#include <fmt/format.h>

#include <dtl/dtl.hpp>
#include <algorithm>
#include <sstream>
#include <vector>

namespace tf {
namespace {

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

}  // namespace

std::string unifiedDiff(const std::string& from, const std::string& to, const std::string& from_name,
                        const std::string& to_name, int context) {
  if (from == to) return "";
  std::vector<std::string> a = splitLines(from), b = splitLines(to);
  // An edit script over lines, then hunks with `context` lines around each change.
  dtl::Diff<std::string> d(a, b);
  d.compose();
  struct Line {
    char tag;  // ' ', '-', '+'
    std::string text;
    int a_line, b_line;  // 1-based positions
  };
  std::vector<Line> script;
  const auto ses = d.getSes();
  for (const auto& e : ses.getSequence()) {
    const auto& info = e.second;
    char tag = info.type == dtl::SES_DELETE ? '-' : info.type == dtl::SES_ADD ? '+' : ' ';
    script.push_back({tag, e.first, static_cast<int>(info.beforeIdx), static_cast<int>(info.afterIdx)});
  }
  // Within each run of changed lines, deletions first (dtl may interleave them).
  for (size_t i = 0; i < script.size();) {
    if (script[i].tag == ' ') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < script.size() && script[j].tag != ' ') ++j;
    std::stable_partition(script.begin() + static_cast<long>(i), script.begin() + static_cast<long>(j),
                          [](const Line& l) { return l.tag == '-'; });
    i = j;
  }
  std::ostringstream out;
  out << "--- a/" << from_name << "\n+++ b/" << to_name << "\n";
  size_t i = 0, n = script.size();
  while (i < n) {
    while (i < n && script[i].tag == ' ') ++i;
    if (i >= n) break;
    size_t start = i >= static_cast<size_t>(context) ? i - static_cast<size_t>(context) : 0;
    size_t end = i;
    // Extend the hunk while changes are within 2*context lines of each other.
    while (true) {
      size_t j = end;
      while (j < n && script[j].tag != ' ') ++j;
      size_t k = j;
      while (k < n && script[k].tag == ' ' && k - j < static_cast<size_t>(2 * context)) ++k;
      if (k < n && script[k].tag != ' ') {
        end = k;
        continue;
      }
      end = std::min(n, j + static_cast<size_t>(context));
      break;
    }
    int a_start = 0, b_start = 0, a_count = 0, b_count = 0;
    // Line numbers: from the first line of the hunk that exists on each side.
    int a_next = 1, b_next = 1;
    for (size_t k = 0; k < start; ++k) {
      if (script[k].tag != '+') ++a_next;
      if (script[k].tag != '-') ++b_next;
    }
    a_start = a_next;
    b_start = b_next;
    for (size_t k = start; k < end; ++k) {
      if (script[k].tag != '+') ++a_count;
      if (script[k].tag != '-') ++b_count;
    }
    out << fmt::format("@@ -{},{} +{},{} @@\n", a_count ? a_start : a_start - 1, a_count,
                       b_count ? b_start : b_start - 1, b_count);
    for (size_t k = start; k < end; ++k) out << script[k].tag << script[k].text << "\n";
    i = end;
  }
  return out.str();
}

}  // namespace tf
