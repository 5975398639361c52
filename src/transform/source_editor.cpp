#include "transform/source_editor.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tf {

void SourceEditor::replace(Range r, std::string text) {
  if (r.begin > r.end || r.end > original_.size()) {
    throw std::logic_error(fmt::format("edit range [{}, {}) outside a text of {} bytes", r.begin, r.end,
                                       original_.size()));
  }
  for (const auto& e : edits_) {
    if (e.range == r && e.text == text) return;
  }
  edits_.push_back({r, std::move(text), edits_.size()});
}

void SourceEditor::indent(Range lines, std::string prefix) {
  if (lines.begin > lines.end || lines.end > original_.size()) {
    throw std::logic_error(fmt::format("indent range [{}, {}) outside a text of {} bytes", lines.begin, lines.end,
                                       original_.size()));
  }
  indents_.push_back({lines, std::move(prefix)});
}

std::string SourceEditor::apply() const {
  std::vector<Edit> sorted = edits_;
  std::sort(sorted.begin(), sorted.end(), [](const Edit& a, const Edit& b) {
    if (a.range.begin != b.range.begin) return a.range.begin < b.range.begin;
    if (a.range.end != b.range.end) return a.range.end < b.range.end;
    return a.order < b.order;
  });
  std::string out;
  out.reserve(original_.size() + 256);
  size_t at = 0;
  for (const Edit& e : sorted) {
    if (e.range.begin < at) throw std::logic_error(fmt::format("overlapping edits at byte {}", e.range.begin));
    out.append(original_.substr(at, e.range.begin - at));
    out.append(e.text);
    at = e.range.end;
  }
  out.append(original_.substr(at));
  if (indents_.empty()) return out;

  // Where an original position lands in the output. A region's begin lands after the
  // insertions made at it (they stay outside) and at the start of a replacement that
  // begins there (it is inside); its end lands before insertions made at it.
  auto mapPos = [&](size_t p, bool region_begin) {
    long delta = 0;
    for (const Edit& e : sorted) {
      bool insertion = e.range.begin == e.range.end;
      if (e.range.begin < p && p < e.range.end) {
        throw std::logic_error(fmt::format("an indented region's boundary at byte {} is inside an edit", p));
      }
      bool counted = region_begin ? (e.range.end <= p && (e.range.begin < p || insertion))
                                  : (e.range.end <= p && e.range.begin < p);
      if (counted) delta += static_cast<long>(e.text.size()) - static_cast<long>(e.range.end - e.range.begin);
    }
    return static_cast<size_t>(static_cast<long>(p) + delta);
  };
  std::vector<std::string> prefix_at(out.size() + 1);
  for (const Indent& ind : indents_) {
    size_t b = mapPos(ind.lines.begin, true), e = mapPos(ind.lines.end, false);
    for (size_t p = b; p < e && p < out.size(); ++p) {
      bool line_start = p == b || out[p - 1] == '\n';
      bool blank = out[p] == '\n' || out[p] == '\r';
      if (line_start && !blank) prefix_at[p] += ind.prefix;
    }
  }
  std::string result;
  result.reserve(out.size() + 512);
  for (size_t p = 0; p < out.size(); ++p) {
    result += prefix_at[p];
    result += out[p];
  }
  return result;
}

std::string SourceEditor::insertedAt(size_t p) const {
  std::string out;
  for (const Edit& e : edits_) {
    if (e.range.begin == p && e.range.end == p) out += e.text;
  }
  return out;
}

size_t SourceEditor::outputColumn(size_t p) const {
  // The output up to p: the original up to p with the edits that end at or before it.
  SourceEditor before(original_.substr(0, p));
  for (const Edit& e : edits_) {
    if (e.range.end <= p && !(e.range.begin == p && e.range.end == p)) before.edits_.push_back(e);
  }
  std::string out = before.apply();
  size_t nl = out.rfind('\n');
  return nl == std::string::npos ? out.size() : out.size() - nl - 1;
}

}  // namespace tf
