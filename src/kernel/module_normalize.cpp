#include "kernel/module_normalize.h"

#include <map>
#include <set>

namespace tf {
namespace {

bool isDefinition(const Node& stmt) {
  return isType(stmt, "FunctionDef") || isType(stmt, "AsyncFunctionDef") || isType(stmt, "ClassDef");
}

// The names a statement binds at module level (definitions and plain assignments).
std::set<std::string> boundNames(const Node& stmt) {
  std::set<std::string> out;
  if (isDefinition(stmt)) {
    out.insert(stmt.value("name", ""));
  } else if (isType(stmt, "Assign")) {
    for (const auto& t : stmt["targets"]) {
      if (isType(t, "Name")) out.insert(t.value("id", ""));
    }
  } else if (isType(stmt, "AnnAssign") && isType(stmt["target"], "Name")) {
    out.insert(stmt["target"].value("id", ""));
  }
  return out;
}

void appendStatements(const Node& from, Node& out, std::set<std::string>* bound, bool only_new);

// Whether `stmt` binds no name of `names`.
bool bindsNoneOf(const Node& stmt, const std::set<std::string>& names) {
  for (const auto& n : boundNames(stmt)) {
    if (names.count(n)) return false;
  }
  return true;
}

// `if __name__ == "__main__":`: a script's own code, not the module's definitions.
bool isMainGuard(const Node& stmt) {
  if (!isType(stmt, "If") || !isType(stmt["test"], "Compare")) return false;
  bool name = false;
  walk(stmt["test"], [&](const Node& n) {
    if (isType(n, "Name") && n.value("id", "") == "__name__") name = true;
    return true;
  });
  return name;
}

bool isGate(const Node& stmt) {
  return (isType(stmt, "If") && !isMainGuard(stmt)) || isType(stmt, "Try") || isType(stmt, "TryStar");
}

// The statements of a module-level `if` or `try` that define or assign something, flattened.
void hoist(const Node& stmt, Node& out, std::set<std::string>* bound) {
  std::set<std::string> before = *bound;
  if (isType(stmt, "If")) {
    appendStatements(stmt["body"], out, bound, false);
    std::set<std::string> first = *bound;
    // The else branch's definitions of names the if branch did not define.
    *bound = before;
    Node orelse = Node::array();
    appendStatements(stmt["orelse"], orelse, bound, false);
    for (auto& s : orelse) {
      if (bindsNoneOf(s, first)) out.push_back(std::move(s));
    }
    bound->insert(first.begin(), first.end());
    return;
  }
  // try / try*: the body, its else and finally, then handlers' definitions of new names.
  appendStatements(stmt["body"], out, bound, false);
  if (stmt.contains("orelse")) appendStatements(stmt["orelse"], out, bound, false);
  if (stmt.contains("finalbody")) appendStatements(stmt["finalbody"], out, bound, false);
  if (stmt.contains("handlers")) {
    for (const auto& h : stmt["handlers"]) appendStatements(h["body"], out, bound, true);
  }
}

void appendStatements(const Node& from, Node& out, std::set<std::string>* bound, bool only_new) {
  if (!from.is_array()) return;
  for (const auto& s : from) {
    if (isGate(s)) {
      hoist(s, out, bound);
      continue;
    }
    if (!isDefinition(s) && !isType(s, "Assign") && !isType(s, "AnnAssign")) continue;
    if (only_new && !bindsNoneOf(s, *bound)) continue;
    for (const auto& n : boundNames(s)) bound->insert(n);
    out.push_back(s);
  }
}

bool isWrapper(const Node& f) {
  const Node& target = isType(f, "Call") ? f["func"] : f;
  std::string name = dottedName(target);
  std::string last = name.substr(name.rfind('.') + 1);
  return last == "jit" || last == "heuristics" || last == "autotune";
}

// `k = W(k)`: the wrapper W, or nullptr.
const Node* selfWrap(const Node& stmt, std::string* name) {
  if (!isType(stmt, "Assign") || stmt["targets"].size() != 1 || !isType(stmt["targets"][0], "Name")) return nullptr;
  const Node& v = stmt["value"];
  if (!isType(v, "Call") || v["args"].size() != 1 || !v["keywords"].empty()) return nullptr;
  const Node& arg = v["args"][0];
  *name = stmt["targets"][0].value("id", "");
  if (!isType(arg, "Name") || arg.value("id", "") != *name || !isWrapper(v["func"])) return nullptr;
  return &v["func"];
}

}  // namespace

void normalizeModule(Node& module) {
  if (!module.is_object() || !module.contains("body") || !module["body"].is_array()) return;
  Node& body = module["body"];
  bool gated = false;
  for (const auto& s : body) gated = gated || isGate(s);
  if (gated) {
    Node flat = Node::array();
    std::set<std::string> bound;
    for (auto& s : body) {
      if (isGate(s)) {
        // The gate itself stays (its imports and other statements are read as before).
        flat.push_back(s);
        hoist(s, flat, &bound);  // only definitions and assignments
      } else {
        for (const auto& n : boundNames(s)) bound.insert(n);
        flat.push_back(std::move(s));
      }
    }
    body = std::move(flat);
  }
  // Functional decoration: each `k = W(k)` after `def k` puts W outermost.
  std::map<std::string, size_t> defs;
  for (size_t i = 0; i < body.size(); ++i) {
    const Node& s = body[i];
    if (isType(s, "FunctionDef") || isType(s, "AsyncFunctionDef")) {
      defs[s.value("name", "")] = i;
      continue;
    }
    std::string name;
    const Node* wrapper = selfWrap(s, &name);
    if (!wrapper) continue;
    auto it = defs.find(name);
    if (it == defs.end()) continue;
    Node& decorators = body[it->second]["decorator_list"];
    if (!decorators.is_array()) decorators = Node::array();
    decorators.insert(decorators.begin(), *wrapper);
  }
}

}  // namespace tf
