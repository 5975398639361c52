// Python's ast, as the worker's `parse` op returns it (JSON), and the source text it
// came from. Positions are (line 1-based, column in UTF-8 bytes), so a node's exact text
// is a byte slice of the source.
#pragma once

#include <cstdint>
#include <functional>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tf {

using Node = nlohmann::json;

struct Pos {
  int line = 0, col = 0, end_line = 0, end_col = 0;
};

// Byte ranges in a source text: [begin, end).
struct Range {
  size_t begin = 0, end = 0;
  bool operator==(const Range&) const = default;
};

class SourceText {
 public:
  explicit SourceText(std::string text = {});
  const std::string& text() const { return text_; }
  // Byte offset of (line, col); clamps to the text.
  size_t offset(int line, int col) const;
  Range range(const Pos& p) const;
  std::optional<Range> range(const Node& node) const;
  std::string_view slice(Range r) const;
  std::string slice(const Node& node) const;  // "" for nodes without positions
  int lineCount() const { return static_cast<int>(starts_.size()); }
  // The text of line `line` (1-based), without its newline.
  std::string_view line(int line) const;
  // The indentation (leading spaces and tabs) of line `line`.
  std::string indentOf(int line) const;

 private:
  std::string text_;
  std::vector<size_t> starts_;
};

// A parsed source file.
struct ParsedSource {
  std::filesystem::path path;
  SourceText source;
  Node ast;  // the Module node
};

// Reads `path` and checks that it can be parsed at all: not empty, UTF-8. Throws UserError
// naming it and `what` it is ("kernel source", "harness").
std::string readSourceFile(const std::filesystem::path& path, std::string_view what);

// --- node helpers -----------------------------------------------------------------------
const std::string& nodeType(const Node& n);
bool isType(const Node& n, std::string_view type);
std::optional<Pos> nodePos(const Node& n);
// The first line of a definition as written: its first decorator above the `def`, else the
// `def` line (decorators applied by a later `k = triton.jit(k)` are not above it).
int definitionTopLine(const Node& def);
// The dotted name of a Name / Attribute chain ("tl.arange"), "" for anything else.
std::string dottedName(const Node& n);
// An int literal (also -5), nullopt otherwise.
std::optional<int64_t> intLiteral(const Node& n);
// A string literal, nullopt otherwise.
std::optional<std::string> strLiteral(const Node& n);
// The keyword argument `name` of a Call node, or nullptr.
const Node* keywordArg(const Node& call, std::string_view name);
// Calls `fn` on every node below `n` (pre-order), `n` included. Returning false from fn
// skips that node's children.
void walk(const Node& n, const std::function<bool(const Node&)>& fn);

}  // namespace tf
