// One drop-in source with a per-shape dispatch (dispatch_source.h).
#include "transform/dispatch_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "transform/source_editor.h"
#include "util/text.h"

namespace tf {
namespace {

using Scope = std::set<std::string>;

const Node* field(const Node& n, const char* name) {
  auto it = n.find(name);
  return it == n.end() || it->is_null() ? nullptr : &*it;
}

std::string nameOf(const Node& n, const char* key = "name") {
  const Node* v = field(n, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

bool isDunder(const std::string& s) { return s.size() > 4 && s.rfind("__", 0) == 0 && s.substr(s.size() - 2) == "__"; }

// Names a target expression stores (Name, Tuple, List, Starred), into `out`.
void targetNames(const Node& t, Scope& out) {
  if (isType(t, "Name")) {
    out.insert(nameOf(t, "id"));
  } else if (isType(t, "Tuple") || isType(t, "List")) {
    if (const Node* elts = field(t, "elts")) {
      for (const auto& e : *elts) targetNames(e, out);
    }
  } else if (isType(t, "Starred")) {
    if (const Node* v = field(t, "value")) targetNames(*v, out);
  }
}

void importNames(const Node& stmt, Scope& out) {
  if (const Node* names = field(stmt, "names")) {
    for (const auto& a : *names) {
      std::string as = nameOf(a, "asname");
      std::string full = nameOf(a);
      if (full == "*") continue;
      out.insert(!as.empty() ? as : full.substr(0, full.find('.')));
    }
  }
}

// What a module's statements bind outside functions and classes (into `bound`), and what its
// imports bind (into `imported`). Compound statements (if, try, with, for) bind at module level.
void moduleBindings(const Node& stmts, Scope& bound, Scope& imported) {
  if (!stmts.is_array()) return;
  for (const auto& s : stmts) {
    const std::string& t = nodeType(s);
    if (t == "FunctionDef" || t == "AsyncFunctionDef" || t == "ClassDef") {
      bound.insert(nameOf(s));
    } else if (t == "Import" || t == "ImportFrom") {
      importNames(s, imported);
    } else if (t == "Assign") {
      for (const auto& target : *field(s, "targets")) targetNames(target, bound);
    } else if (t == "AnnAssign" || t == "AugAssign") {
      if (const Node* target = field(s, "target")) targetNames(*target, bound);
    } else if (t == "For" || t == "AsyncFor") {
      if (const Node* target = field(s, "target")) targetNames(*target, bound);
    } else if (t == "With" || t == "AsyncWith") {
      for (const auto& item : *field(s, "items")) {
        if (const Node* v = field(item, "optional_vars")) targetNames(*v, bound);
      }
    }
    for (const char* block : {"body", "orelse", "finalbody"}) {
      if (const Node* b = field(s, block); b && t != "FunctionDef" && t != "AsyncFunctionDef" && t != "ClassDef") {
        moduleBindings(*b, bound, imported);
      }
    }
    if (const Node* handlers = field(s, "handlers")) {
      for (const auto& h : *handlers) {
        if (std::string n = nameOf(h); !n.empty()) bound.insert(n);
        if (const Node* b = field(h, "body")) moduleBindings(*b, bound, imported);
      }
    }
  }
}

// The names a function (or class) body binds, not looking into nested scopes; `globals`
// gets the names its `global` statements declare.
void scopeLocals(const Node& n, Scope& locals, Scope& globals) {
  if (n.is_array()) {
    for (const auto& x : n) scopeLocals(x, locals, globals);
    return;
  }
  if (!n.is_object()) return;
  const std::string& t = nodeType(n);
  if (t == "FunctionDef" || t == "AsyncFunctionDef" || t == "ClassDef") {
    locals.insert(nameOf(n));
    // Decorators and defaults run in this scope.
    if (const Node* d = field(n, "decorator_list")) scopeLocals(*d, locals, globals);
    return;
  }
  if (t == "Lambda" || t == "ListComp" || t == "SetComp" || t == "DictComp" || t == "GeneratorExp") return;
  if (t == "Name") {
    if (nameOf(n, "ctx") != "Load") locals.insert(nameOf(n, "id"));
    return;
  }
  if (t == "Import" || t == "ImportFrom") return importNames(n, locals);
  if (t == "Global") {
    for (const auto& g : *field(n, "names")) globals.insert(g.get<std::string>());
    return;
  }
  if (t == "Nonlocal") {
    for (const auto& g : *field(n, "names")) locals.insert(g.get<std::string>());
    return;
  }
  if (t == "ExceptHandler" || t == "MatchAs" || t == "MatchStar") {
    if (std::string name = nameOf(n); !name.empty()) locals.insert(name);
  }
  for (const auto& [key, v] : n.items()) {
    if (key == "_t" || key == "_p") continue;
    if (v.is_object() || v.is_array()) scopeLocals(v, locals, globals);
  }
}

void paramNames(const Node& args, Scope& out) {
  for (const char* k : {"posonlyargs", "args", "kwonlyargs"}) {
    if (const Node* list = field(args, k)) {
      for (const auto& a : *list) out.insert(nameOf(a, "arg"));
    }
  }
  for (const char* k : {"vararg", "kwarg"}) {
    if (const Node* a = field(args, k)) out.insert(nameOf(*a, "arg"));
  }
}

// `if __name__ == "__main__":` and `from __future__ import ...`, which an appended section
// drops: the one would run the script twice, the other is a syntax error past the file's top.
bool scriptPart(const ParsedSource& src, const Node& s) {
  if (isType(s, "ImportFrom") && nameOf(s, "module") == "__future__") return true;
  if (!isType(s, "If")) return false;
  std::string test = src.source.slice(s["test"]);
  test.erase(std::remove_if(test.begin(), test.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
             test.end());
  return test == "__name__=='__main__'" || test == "__name__==\"__main__\"" || test == "'__main__'==__name__" ||
         test == "\"__main__\"==__name__";
}

class Renamer {
 public:
  Renamer(const ParsedSource& src, Scope names, std::string suffix, bool drop_script_parts)
      : src_(src), names_(std::move(names)), suffix_(std::move(suffix)), drop_(drop_script_parts),
        editor_(src.source.text()) {}

  void run() {
    std::vector<const Scope*> scopes;
    for (const auto& s : src_.ast["body"]) {
      if (drop_ && scriptPart(src_, s)) {
        if (std::optional<Range> r = src_.source.range(s)) editor_.replace(*r, "pass");
        continue;
      }
      statement(s, scopes);
    }
  }
  const std::string& refused() const { return refused_; }
  std::string text() const { return editor_.apply(); }

 private:
  bool local(const std::string& name, const std::vector<const Scope*>& scopes, const Scope* cls) const {
    if (cls && cls->count(name)) return true;
    return std::any_of(scopes.begin(), scopes.end(), [&](const Scope* s) { return s->count(name) > 0; });
  }

  void rename(Range r, const std::string& name) {
    if (src_.source.slice(r) != name) {
      if (refused_.empty()) {
        refused_ = fmt::format("the name '{}' could not be located in the source (an f-string of an older Python?)", name);
      }
      return;
    }
    editor_.replace(r, name + suffix_);
  }

  // The `def NAME` / `class NAME` of a module-level definition.
  void renameDefinition(const Node& def) {
    std::optional<Range> r = src_.source.range(def);
    if (!r) return;
    std::string_view text = src_.source.text();
    const std::string kw = isType(def, "ClassDef") ? "class" : "def";
    size_t at = r->begin;
    while (at < r->end) {
      at = text.find(kw, at);
      if (at == std::string_view::npos || at >= r->end) return;
      bool word = (at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_')) &&
                  at + kw.size() < text.size() && std::isspace(static_cast<unsigned char>(text[at + kw.size()]));
      if (word) break;
      at += kw.size();
    }
    size_t b = at + kw.size();
    while (b < text.size() && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
    std::string name = nameOf(def);
    rename({b, b + name.size()}, name);
  }

  void renameInGlobal(const Node& stmt) {
    std::optional<Range> r = src_.source.range(stmt);
    if (!r) return;
    std::string_view text = src_.source.text();
    for (const auto& g : *field(stmt, "names")) {
      std::string name = g.get<std::string>();
      if (!names_.count(name)) continue;
      for (size_t at = text.find(name, r->begin); at != std::string_view::npos && at < r->end;
           at = text.find(name, at + name.size())) {
        auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
        if ((at > 0 && ident(text[at - 1])) || (at + name.size() < text.size() && ident(text[at + name.size()]))) continue;
        rename({at, at + name.size()}, name);
      }
    }
  }

  void statement(const Node& s, std::vector<const Scope*>& scopes) { visit(s, scopes, nullptr); }

  void visitChildren(const Node& n, std::vector<const Scope*>& scopes, const Scope* cls,
                     std::initializer_list<const char*> skip = {}) {
    for (const auto& [key, v] : n.items()) {
      if (key == "_t" || key == "_p") continue;
      if (std::any_of(skip.begin(), skip.end(), [&](const char* k) { return key == k; })) continue;
      if (v.is_object()) visit(v, scopes, cls);
      else if (v.is_array()) {
        for (const auto& x : v) {
          if (x.is_object()) visit(x, scopes, cls);
        }
      }
    }
  }

  // What a function's signature evaluates in the enclosing scope: decorators, defaults,
  // annotations.
  void signature(const Node& fn, std::vector<const Scope*>& scopes, const Scope* cls) {
    if (const Node* d = field(fn, "decorator_list")) {
      for (const auto& x : *d) visit(x, scopes, cls);
    }
    if (const Node* r = field(fn, "returns")) visit(*r, scopes, cls);
    const Node* args = field(fn, "args");
    if (!args) return;
    for (const char* k : {"defaults", "kw_defaults"}) {
      if (const Node* list = field(*args, k)) {
        for (const auto& x : *list) {
          if (x.is_object()) visit(x, scopes, cls);
        }
      }
    }
    for (const char* k : {"posonlyargs", "args", "kwonlyargs"}) {
      if (const Node* list = field(*args, k)) {
        for (const auto& a : *list) {
          if (const Node* ann = field(a, "annotation")) visit(*ann, scopes, cls);
        }
      }
    }
    for (const char* k : {"vararg", "kwarg"}) {
      if (const Node* a = field(*args, k)) {
        if (const Node* ann = field(*a, "annotation")) visit(*ann, scopes, cls);
      }
    }
  }

  void visit(const Node& n, std::vector<const Scope*>& scopes, const Scope* cls) {
    const std::string& t = nodeType(n);
    const bool module_level = scopes.empty() && cls == nullptr;
    if (t == "FunctionDef" || t == "AsyncFunctionDef" || t == "Lambda") {
      if (t != "Lambda" && module_level && names_.count(nameOf(n))) renameDefinition(n);
      if (t == "Lambda") {
        if (const Node* args = field(n, "args")) {
          for (const char* k : {"defaults", "kw_defaults"}) {
            if (const Node* list = field(*args, k)) {
              for (const auto& x : *list) {
                if (x.is_object()) visit(x, scopes, cls);
              }
            }
          }
        }
      } else {
        signature(n, scopes, cls);
      }
      Scope locals, globals;
      if (const Node* args = field(n, "args")) paramNames(*args, locals);
      if (const Node* body = field(n, "body")) scopeLocals(*body, locals, globals);
      for (const auto& g : globals) locals.erase(g);
      scopes.push_back(&locals);
      if (const Node* body = field(n, "body")) {
        if (body->is_array()) {
          for (const auto& x : *body) visit(x, scopes, nullptr);
        } else {
          visit(*body, scopes, nullptr);
        }
      }
      scopes.pop_back();
      return;
    }
    if (t == "ClassDef") {
      if (module_level && names_.count(nameOf(n))) renameDefinition(n);
      visitChildren(n, scopes, cls, {"body"});
      Scope locals, globals;
      scopeLocals(n["body"], locals, globals);
      for (const auto& g : globals) locals.erase(g);
      for (const auto& x : n["body"]) visit(x, scopes, &locals);
      return;
    }
    if (t == "ListComp" || t == "SetComp" || t == "DictComp" || t == "GeneratorExp") {
      Scope locals;
      for (const auto& g : n["generators"]) targetNames(g["target"], locals);
      scopes.push_back(&locals);
      visitChildren(n, scopes, cls);
      scopes.pop_back();
      return;
    }
    if (t == "Name") {
      std::string id = nameOf(n, "id");
      if (names_.count(id) && !local(id, scopes, cls)) {
        if (std::optional<Range> r = src_.source.range(n)) rename(*r, id);
      }
      return;
    }
    if (t == "Global") return renameInGlobal(n);
    visitChildren(n, scopes, cls);
  }

  const ParsedSource& src_;
  Scope names_;
  std::string suffix_;
  bool drop_ = false;
  SourceEditor editor_;
  std::string refused_;
};

// Whether `name` is bound at the module's top level (a def, a class, an assignment).
bool boundAtTopLevel(const ParsedSource& src, const std::string& name) {
  Scope bound, imported;
  moduleBindings(src.ast["body"], bound, imported);
  return bound.count(name) > 0;
}

}  // namespace

MergedSource renameModuleNames(const ParsedSource& source, const std::string& suffix, bool drop_script_parts) {
  Scope bound, imported;
  moduleBindings(source.ast["body"], bound, imported);
  for (const auto& name : bound) {
    if (imported.count(name)) {
      return {"", fmt::format("the module binds '{}' both by an import and by an assignment or a definition", name)};
    }
  }
  Scope names;
  for (const auto& name : bound) {
    if (!isDunder(name)) names.insert(name);
  }
  Renamer r(source, names, suffix, drop_script_parts);
  r.run();
  if (!r.refused().empty()) return {"", r.refused()};
  return {r.text(), ""};
}

MergedSource mergeDispatch(const ParsedSource& as_written, const std::vector<const ParsedSource*>& variants,
                           const DispatchSourceSpec& spec) {
  // The launcher: a module-level name (a function, or an alias such as `f = _F.apply`), or
  // one attribute of one (`_F.apply`, an autograd Function's).
  const std::string& launcher = spec.launcher;
  const size_t dot = launcher.find('.');
  const std::string L = launcher.substr(0, dot);
  const std::string attr = dot == std::string::npos ? "" : launcher.substr(dot + 1);
  if (!isIdentifier(L) || (dot != std::string::npos && !isIdentifier(attr)) || !boundAtTopLevel(as_written, L)) {
    return {"", fmt::format("the launcher '{}' is not a name bound at the module's top level, or one attribute of one",
                            launcher)};
  }
  if (as_written.source.text().find("_tfv") != std::string::npos || as_written.source.text().find("_tf_" + L) != std::string::npos) {
    return {"", "the source already uses the names a dispatch would add (_tfv, _tf_)"};
  }
  std::string out = as_written.source.text();
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "\n\n# " + std::string(88, '=') + "\n";
  out += "# tritonforge: a per-shape dispatch. The module above is the kernel as written, unchanged. Below it,\n";
  out += fmt::format("# each variant's whole module with its names suffixed, then `{}` again: it runs the variant\n", L);
  out += "# verified fastest for the shape it is called with, and the kernel as written for any shape\n";
  out += "# outside the buckets measured.\n";
  if (!spec.header_note.empty()) out += "# " + spec.header_note + "\n";
  out += "# " + std::string(88, '=') + "\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    const ParsedSource& v = *variants[i];
    if (!boundAtTopLevel(v, L)) return {"", fmt::format("variant {} has no launcher '{}' at its top level", i + 1, L)};
    if (v.source.text().find("_tfv") != std::string::npos) {
      return {"", fmt::format("variant {} already uses the suffix _tfv", i + 1)};
    }
    MergedSource renamed = renameModuleNames(v, fmt::format("_tfv{}", i + 1), true);
    if (!renamed.refused.empty()) return {"", fmt::format("variant {}: {}", i + 1, renamed.refused)};
    const std::string& text = renamed.text;
    out += fmt::format("\n\n# {} variant {}: {}\n", std::string(20, '-'), i + 1,
                       oneLine(i < spec.variant_notes.size() ? spec.variant_notes[i] : std::string()));
    out += text;
    if (!out.empty() && out.back() != '\n') out += '\n';
  }
  const std::string feature_expr =
      spec.dim >= 0 ? fmt::format("{}.shape[{}]", spec.arg_name.empty() ? fmt::format("argument {}", spec.arg_index) : spec.arg_name, spec.dim)
                    : (spec.arg_name.empty() ? fmt::format("argument {}", spec.arg_index) : spec.arg_name);
  out += fmt::format("\n\n# {} the launcher: picks by {}\n", std::string(20, '-'), feature_expr);
  out += "import functools as _tf_functools  # noqa: E402\n\n";
  out += fmt::format("_tf_{}_as_written = {}\n\n\n", L, launcher);
  out += fmt::format("def _tf_{}_feature(args, kwargs):\n", L);
  out += fmt::format("    v = args[{0}] if len(args) > {0} else {1}\n", spec.arg_index,
                     spec.arg_name.empty() ? std::string("None") : fmt::format("kwargs.get(\"{}\")", spec.arg_name));
  if (spec.dim >= 0) {
    out += "    shape = getattr(v, \"shape\", None)\n";
    out += fmt::format("    return int(shape[{0}]) if shape is not None and len(shape) > {0} else None\n", spec.dim);
  } else {
    out += "    return v if isinstance(v, int) and not isinstance(v, bool) else None\n";
  }
  out += fmt::format("\n\n# ({}: lowest, highest, launcher)\n", feature_expr);
  out += fmt::format("_tf_{}_routes = (\n", L);
  for (const auto& r : spec.routes) {
    out += fmt::format("    ({}, {}, {}_tfv{}{}),", r.lo, r.hi, L, r.variant + 1, attr.empty() ? "" : "." + attr);
    if (!r.note.empty()) out += "  # " + oneLine(r.note);
    out += "\n";
  }
  out += ")\n\n\n";
  out += fmt::format("@_tf_functools.wraps(_tf_{}_as_written)\n", L);
  out += fmt::format("def {}(*args, **kwargs):\n", attr.empty() ? L : "_tf_" + L + "_dispatch");
  out += fmt::format("    f = _tf_{}_feature(args, kwargs)\n", L);
  out += "    if f is not None:\n";
  out += fmt::format("        for lo, hi, run in _tf_{}_routes:\n", L);
  out += "            if lo <= f <= hi:\n";
  out += "                return run(*args, **kwargs)\n";
  out += fmt::format("    return _tf_{}_as_written(*args, **kwargs)\n", L);
  if (!attr.empty()) {
    // Callers reach the launcher through the name as written (`_F.apply(...)`): it now picks.
    out += fmt::format("\n\n{}.{} = staticmethod(_tf_{}_dispatch)\n", L, attr, L);
  }
  return {out, ""};
}

}  // namespace tf
