#include "kernel/ast.h"

#include <fmt/format.h>

#include <functional>

#include "util/error.h"
#include "util/fs.h"

namespace tf {
namespace {
const std::string kEmpty;
}

SourceText::SourceText(std::string text) : text_(std::move(text)) {
  starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') starts_.push_back(i + 1);
  }
}

size_t SourceText::offset(int line, int col) const {
  if (line < 1) return 0;
  if (static_cast<size_t>(line) > starts_.size()) return text_.size();
  size_t off = starts_[static_cast<size_t>(line - 1)] + static_cast<size_t>(std::max(col, 0));
  return std::min(off, text_.size());
}

Range SourceText::range(const Pos& p) const { return {offset(p.line, p.col), offset(p.end_line, p.end_col)}; }

std::optional<Range> SourceText::range(const Node& node) const {
  auto p = nodePos(node);
  if (!p) return std::nullopt;
  return range(*p);
}

std::string_view SourceText::slice(Range r) const {
  if (r.begin > text_.size() || r.end > text_.size() || r.begin > r.end) return {};
  return std::string_view(text_).substr(r.begin, r.end - r.begin);
}

std::string SourceText::slice(const Node& node) const {
  auto r = range(node);
  return r ? std::string(slice(*r)) : std::string();
}

std::string_view SourceText::line(int line) const {
  if (line < 1 || static_cast<size_t>(line) > starts_.size()) return {};
  size_t b = starts_[static_cast<size_t>(line - 1)];
  size_t e = static_cast<size_t>(line) < starts_.size() ? starts_[static_cast<size_t>(line)] : text_.size();
  std::string_view v = std::string_view(text_).substr(b, e - b);
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.remove_suffix(1);
  return v;
}

std::string SourceText::indentOf(int l) const {
  std::string_view v = line(l);
  size_t i = 0;
  while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
  return std::string(v.substr(0, i));
}

std::string readSourceFile(const std::filesystem::path& path, std::string_view what) {
  std::string text = readTextFile(path, what, kMaxSourceFileBytes);
  size_t bad = 0;
  if (!isValidUtf8(text, &bad)) {
    throw UserError(fmt::format("{}:{}: {} is not valid UTF-8 (byte {})", path.string(), lineOfOffset(text, bad),
                                what, bad));
  }
  bool blank = text.find_first_not_of(" \t\r\n\f") == std::string::npos;
  if (blank) throw UserError(fmt::format("{}: {} is empty", path.string(), what));
  return text;
}

const std::string& nodeType(const Node& n) {
  if (!n.is_object()) return kEmpty;
  auto it = n.find("_t");
  if (it == n.end() || !it->is_string()) return kEmpty;
  return it->get_ref<const std::string&>();
}

bool isType(const Node& n, std::string_view type) { return nodeType(n) == type; }

std::optional<Pos> nodePos(const Node& n) {
  if (!n.is_object()) return std::nullopt;
  auto it = n.find("_p");
  if (it == n.end() || !it->is_array() || it->size() != 4) return std::nullopt;
  const auto& a = *it;
  if (!a[0].is_number() || !a[2].is_number()) return std::nullopt;
  return Pos{a[0].get<int>(), a[1].get<int>(), a[2].get<int>(), a[3].get<int>()};
}

int definitionTopLine(const Node& def) {
  auto d = nodePos(def);
  int top = d ? d->line : 0;
  if (!def.contains("decorator_list")) return top;
  for (const auto& dec : def["decorator_list"]) {
    auto p = nodePos(dec);
    if (p && d && p->line < top) top = p->line;
  }
  return top;
}

std::string dottedName(const Node& n) {
  if (isType(n, "Name")) return n.value("id", "");
  if (isType(n, "Attribute")) {
    std::string base = dottedName(n["value"]);
    if (base.empty()) return "";
    return base + "." + n.value("attr", "");
  }
  return "";
}

std::optional<int64_t> intLiteral(const Node& n) {
  if (isType(n, "Constant") && n.value("vt", "") == "int") return n["value"].get<int64_t>();
  if (isType(n, "UnaryOp") && isType(n["op"], "USub")) {
    if (auto v = intLiteral(n["operand"])) return -*v;
  }
  return std::nullopt;
}

std::optional<std::string> strLiteral(const Node& n) {
  if (isType(n, "Constant") && n.value("vt", "") == "str") return n["value"].get<std::string>();
  return std::nullopt;
}

const Node* keywordArg(const Node& call, std::string_view name) {
  if (!call.contains("keywords")) return nullptr;
  for (const auto& kw : call["keywords"]) {
    if (kw.contains("arg") && kw["arg"].is_string() && kw["arg"].get<std::string>() == name) return &kw["value"];
  }
  return nullptr;
}

void walk(const Node& n, const std::function<bool(const Node&)>& fn) {
  if (n.is_object()) {
    if (!n.contains("_t")) return;
    if (!fn(n)) return;
    for (const auto& [k, v] : n.items()) {
      if (k == "_t" || k == "_p") continue;
      if (v.is_object() || v.is_array()) walk(v, fn);
    }
  } else if (n.is_array()) {
    for (const auto& c : n) walk(c, fn);
  }
}

}  // namespace tf
