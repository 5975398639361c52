#include "capture/output_compare.h"

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <sstream>
#include <vector>

#include "util/error.h"

namespace tf {
namespace {

struct Line {
  size_t number;          // 1-based, in its output
  std::string text;       // with every number replaced by '#'
  std::vector<double> values;
  std::string raw;
};

const std::regex& numberPattern() {
  static const std::regex re(R"((^|[^\w.])([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf))(?![\w.]))",
                             std::regex::icase);
  return re;
}

std::vector<Line> linesOf(const std::string& out, const std::optional<std::regex>& filter) {
  std::vector<Line> lines;
  std::istringstream in(out);
  std::string raw;
  for (size_t n = 1; std::getline(in, raw); ++n) {
    if (filter && !std::regex_search(raw, *filter)) continue;
    Line l{n, "", {}, raw};
    size_t last = 0;
    for (auto it = std::sregex_iterator(raw.begin(), raw.end(), numberPattern()); it != std::sregex_iterator(); ++it) {
      const auto& m = *it;
      const size_t at = static_cast<size_t>(m.position(2));
      l.text += raw.substr(last, at - last) + "#";
      last = at + static_cast<size_t>(m.length(2));
      l.values.push_back(std::strtod(m.str(2).c_str(), nullptr));
    }
    l.text += raw.substr(last);
    lines.push_back(std::move(l));
  }
  return lines;
}

}  // namespace

OutputComparison compareOutputs(const std::string& as_written, const std::string& tuned, double rtol, double atol,
                                const std::string& line_filter) {
  std::optional<std::regex> filter;
  if (!line_filter.empty()) {
    try {
      filter.emplace(line_filter);
    } catch (const std::regex_error& e) {
      throw UserError(fmt::format("--lines '{}': not a regular expression ({})", line_filter, e.what()));
    }
  }
  const std::vector<Line> a = linesOf(as_written, filter), b = linesOf(tuned, filter);
  OutputComparison c;
  auto differ = [&](std::string why) {
    if (c.same) c.difference = std::move(why);
    c.same = false;
  };
  if (a.size() != b.size()) {
    differ(fmt::format("{} lines as written against {} with the overlay", a.size(), b.size()));
  }
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    ++c.lines;
    if (a[i].text != b[i].text || a[i].values.size() != b[i].values.size()) {
      differ(fmt::format("line {}: '{}' against '{}'", a[i].number, a[i].raw, b[i].raw));
      continue;
    }
    for (size_t v = 0; v < a[i].values.size(); ++v) {
      const double x = a[i].values[v], y = b[i].values[v];
      ++c.values;
      if (std::isnan(x) && std::isnan(y)) continue;
      if (std::isinf(x) || std::isinf(y)) {
        if (x != y) differ(fmt::format("line {}: {} against {}", a[i].number, x, y));
        continue;
      }
      const double diff = std::fabs(x - y);
      c.max_abs = std::max(c.max_abs, diff);
      if (x != 0) c.max_rel = std::max(c.max_rel, diff / std::fabs(x));
      if (!(diff <= atol + rtol * std::fabs(x))) {
        differ(fmt::format("line {}: {} as written against {} with the overlay", a[i].number, x, y));
      }
    }
  }
  return c;
}

}  // namespace tf
