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
  for (size_t i = 0; i < sorted.size(); ++i) {
    const Edit& e = sorted[i];
    if (e.range.begin < at) {
      throw std::logic_error(fmt::format("overlapping edits at byte {}", e.range.begin));
    }
    out.append(original_.substr(at, e.range.begin - at));
    out.append(e.text);
    at = e.range.end;
  }
  out.append(original_.substr(at));
  return out;
}

}  // namespace tf
