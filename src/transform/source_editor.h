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
  void replace(Range r, std::string text);
  std::string apply() const;
  bool empty() const { return edits_.empty(); }

 private:
  struct Edit {
    Range range;
    std::string text;
    size_t order;
  };
  std::string_view original_;
  std::vector<Edit> edits_;
};

}  // namespace tf
