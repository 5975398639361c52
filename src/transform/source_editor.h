// Text edits on a source file by byte range, applied all at once. Everything outside the
// edited ranges stays byte for byte as it was (comments, formatting).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernel/ast.h"

namespace tf {

class SourceEditor {
 public:
  explicit SourceEditor(std::string_view original) : original_(original) {}

  // Replaces [r.begin, r.end) with `text` (an empty range inserts). Identical duplicate
  // edits are merged; conflicting overlapping edits make apply() throw std::logic_error.
  // Several insertions at one position keep the order they were made in.
  void replace(Range r, std::string text);
  void insert(size_t at, std::string text) { replace({at, at}, std::move(text)); }
  // Adds `prefix` to every non-empty line that starts inside `lines` (whole lines of the
  // original), including lines of replacement text that lands inside it; text inserted
  // exactly at lines.begin or lines.end stays outside. Used to wrap a block in a loop.
  void indent(Range lines, std::string prefix);
  std::string apply() const;
  // The column (bytes from the line start) that original offset `p` has in the output of
  // the edits made so far (for aligning continuation lines after an edit earlier on the line).
  size_t outputColumn(size_t p) const;
  // The text inserted so far exactly at `p` (empty-range edits), in order.
  std::string insertedAt(size_t p) const;
  bool empty() const { return edits_.empty() && indents_.empty(); }

 private:
  struct Edit {
    Range range;
    std::string text;
    size_t order;
  };
  struct Indent {
    Range lines;
    std::string prefix;
  };
  std::string_view original_;
  std::vector<Edit> edits_;
  std::vector<Indent> indents_;
};

}  // namespace tf
