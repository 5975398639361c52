#include "kernel/module_ir.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace tf {
namespace {

class Builder {
 public:
  Builder(const ParsedSource& src, const std::vector<Kernel>* imported) : src_(src), imported_(imported) {
    ir_.source = &src;
  }

  ModuleIR build() {
    const Node& body = src_.ast["body"];
    for (const auto& stmt : body) collectImports(stmt);
    for (const auto& stmt : body) {
      if (isType(stmt, "FunctionDef") || isType(stmt, "AsyncFunctionDef")) {
        if (isJitKernel(stmt)) ir_.kernels.push_back(buildKernel(stmt));
      }
    }
    // Kernels of sibling modules this one imports, under the name it imports them as.
    if (imported_) {
      for (const auto& k : *imported_) {
        for (const auto& [local, full] : ir_.aliases) {
          if (!k.imported_module.empty()) {
            // A module imported whole: its kernels and helpers are `local.k`.
            if (full == k.imported_module && !ir_.kernel(local + "." + k.name)) {
              Kernel copy = k;
              copy.name = local + "." + k.name;
              ir_.kernels.push_back(std::move(copy));
            }
            continue;
          }
          std::string last = full.substr(full.rfind('.') + 1);
          if (last == k.name && !ir_.kernel(local)) {
            Kernel copy = k;
            copy.name = local;
            ir_.kernels.push_back(std::move(copy));
          }
        }
      }
    }
    for (const auto& stmt : body) {
      if (isType(stmt, "FunctionDef") && !ir_.kernel(stmt["name"].get<std::string>())) {
        addFunction(stmt, "");
      } else if (isType(stmt, "ClassDef")) {
        for (const auto& inner : stmt["body"]) {
          if (isType(inner, "FunctionDef")) addFunction(inner, stmt["name"].get<std::string>() + ".");
        }
      } else if (isType(stmt, "Assign")) {
        for (const auto& t : stmt["targets"]) {
          if (isType(t, "Name")) ir_.module_assignments[t["id"].get<std::string>()] = &stmt["value"];
        }
      }
    }
    // Launch sites: inside functions, then at module level.
    for (auto& [name, fn] : ir_.functions) findLaunches(fn.def->at("body"), name);
    for (const auto& stmt : body) {
      if (!isType(stmt, "FunctionDef") && !isType(stmt, "ClassDef") && !isType(stmt, "AsyncFunctionDef")) {
        findLaunches(stmt, "");
      }
    }
    return std::move(ir_);
  }

 private:
  void collectImports(const Node& stmt) {
    if (isType(stmt, "Import")) {
      for (const auto& a : stmt["names"]) {
        std::string name = a["name"].get<std::string>();
        if (a["asname"].is_string()) {
          ir_.aliases[a["asname"].get<std::string>()] = name;
        } else {
          std::string first = name.substr(0, name.find('.'));
          ir_.aliases[first] = first;
        }
      }
    } else if (isType(stmt, "ImportFrom")) {
      std::string mod = stmt["module"].is_string() ? stmt["module"].get<std::string>() : "";
      for (const auto& a : stmt["names"]) {
        std::string name = a["name"].get<std::string>();
        std::string local = a["asname"].is_string() ? a["asname"].get<std::string>() : name;
        ir_.aliases[local] = mod.empty() ? name : mod + "." + name;
      }
    } else if (isType(stmt, "Try") || isType(stmt, "If")) {
      for (const auto& s : stmt["body"]) collectImports(s);
      if (stmt.contains("orelse")) for (const auto& s : stmt["orelse"]) collectImports(s);
      if (stmt.contains("handlers")) {
        for (const auto& h : stmt["handlers"]) for (const auto& s : h["body"]) collectImports(s);
      }
    }
  }

  std::string q(const Node& n) const { return ir_.qualifiedName(n); }

  static bool isOneOf(const std::string& s, std::initializer_list<const char*> names) {
    for (const char* n : names) if (s == n) return true;
    return false;
  }

  bool isJitDecorator(const Node& d) const {
    const Node& target = isType(d, "Call") ? d["func"] : d;
    return isOneOf(q(target), {"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"});
  }

  bool isJitKernel(const Node& def) const {
    for (const auto& d : def["decorator_list"]) if (isJitDecorator(d)) return true;
    return false;
  }

  Kernel buildKernel(const Node& def) {
    Kernel k;
    k.name = def["name"].get<std::string>();
    k.def = &def;
    const Node& args = def["args"];
    std::vector<const Node*> all;
    for (const auto& a : args["posonlyargs"]) all.push_back(&a);
    for (const auto& a : args["args"]) all.push_back(&a);
    const Node& defaults = args["defaults"];
    size_t first_default = all.size() - std::min(all.size(), defaults.size());
    for (size_t i = 0; i < all.size(); ++i) {
      Param p;
      p.name = (*all[i])["arg"].get<std::string>();
      p.index = static_cast<int>(i);
      const Node& ann = (*all[i])["annotation"];
      if (ann.is_object()) {
        p.annotation = src_.source.slice(ann);
        std::string qa = q(ann);
        if (auto s = strLiteral(ann)) qa = ir_.qualify(*s);
        p.is_constexpr = qa == "triton.language.constexpr" || qa == "triton.language.core.constexpr";
      }
      if (i >= first_default) {
        p.default_value = &defaults[i - first_default];
        p.default_int = intLiteral(*p.default_value);
      }
      k.params.push_back(std::move(p));
    }
    if (args["vararg"].is_object() || args["kwarg"].is_object()) k.notes.push_back("kernel takes *args/**kwargs");
    for (const auto& kw : args["kwonlyargs"]) {
      k.notes.push_back(fmt::format("keyword-only parameter '{}' is not modelled", kw["arg"].get<std::string>()));
    }
    for (const auto& d : def["decorator_list"]) {
      if (!isType(d, "Call")) continue;
      std::string name = q(d["func"]);
      if (name == "triton.autotune" || name == "triton.runtime.autotune" || name == "triton.runtime.autotuner.autotune") {
        k.autotune = parseAutotune(d);
      } else if (!k.autotune && name.rfind("triton.", 0) != 0 && keywordArg(d, "configs") && keywordArg(d, "key")) {
        // A project's own autotuner (a subclass of triton's Autotuner, as FlagGems' libtuner)
        // takes the same configs= and key=: read as @triton.autotune, which it extends.
        k.autotune = parseAutotune(d);
        k.autotune->tuner = name;
      } else if (name == "triton.heuristics" || name == "triton.runtime.heuristics") {
        parseHeuristics(d, k);
      }
    }
    return k;
  }

  AutotuneInfo parseAutotune(const Node& call) {
    AutotuneInfo info;
    info.decorator = &call;
    const Node* configs = keywordArg(call, "configs");
    if (!configs && !call["args"].empty()) configs = &call["args"][0];
    const Node* key = keywordArg(call, "key");
    if (!key && call["args"].size() > 1) key = &call["args"][1];
    info.configs = configs;
    if (key && (isType(*key, "List") || isType(*key, "Tuple"))) {
      for (const auto& e : (*key)["elts"]) if (auto s = strLiteral(e)) info.key.push_back(*s);
    }
    const Node* list = configs;
    // configs=NAME where NAME is a module-level list literal.
    if (list && isType(*list, "Name")) {
      auto it = ir_.module_assignments.find((*list)["id"].get<std::string>());
      list = it != ir_.module_assignments.end() ? it->second : nullptr;
    }
    if (list && (isType(*list, "List") || isType(*list, "Tuple"))) {
      bool all_understood = true;
      for (const auto& c : (*list)["elts"]) {
        auto cfg = parseConfig(c);
        if (!cfg) {
          all_understood = false;
          continue;
        }
        info.configs_list.push_back(*cfg);
      }
      info.configs_understood = all_understood && !info.configs_list.empty();
    }
    return info;
  }

  std::optional<AutotuneConfig> parseConfig(const Node& c) {
    if (!isType(c, "Call") || q(c["func"]) != "triton.Config") {
      if (!(isType(c, "Call") && (q(c["func"]) == "triton.runtime.Config" || q(c["func"]) == "triton.runtime.autotuner.Config"))) {
        return std::nullopt;
      }
    }
    AutotuneConfig cfg;
    cfg.text = src_.source.slice(c);
    const Node* kwargs = c["args"].empty() ? keywordArg(c, "kwargs") : &c["args"][0];
    if (!kwargs || !isType(*kwargs, "Dict")) return std::nullopt;
    const Node& keys = (*kwargs)["keys"];
    const Node& values = (*kwargs)["values"];
    for (size_t i = 0; i < keys.size(); ++i) {
      auto k = strLiteral(keys[i]);
      if (!k) return std::nullopt;
      if (auto v = intLiteral(values[i])) cfg.kwargs[*k] = *v;
      else cfg.other_kwargs[*k] = src_.source.slice(values[i]);
    }
    static const char* kOptions[] = {"num_warps", "num_stages", "num_ctas", "maxnreg"};
    for (size_t i = 1; i < c["args"].size() && i < 4; ++i) {
      if (auto v = intLiteral(c["args"][i])) cfg.options[kOptions[i - 1]] = *v;
    }
    for (const auto& kw : c["keywords"]) {
      if (!kw["arg"].is_string()) return std::nullopt;
      std::string name = kw["arg"].get<std::string>();
      if (auto v = intLiteral(kw["value"])) cfg.options[name] = *v;
      else if (name == "pre_hook" || name == "ir_override") cfg.hooks[name] = src_.source.slice(kw["value"]);
      else return std::nullopt;
    }
    return cfg;
  }

  void parseHeuristics(const Node& call, Kernel& k) {
    const Node* values = keywordArg(call, "values");
    if (!values && !call["args"].empty()) values = &call["args"][0];
    if (!values || !isType(*values, "Dict")) {
      k.notes.push_back("@triton.heuristics argument is not a dict literal");
      return;
    }
    const Node& keys = (*values)["keys"];
    const Node& vals = (*values)["values"];
    for (size_t i = 0; i < keys.size(); ++i) {
      auto name = strLiteral(keys[i]);
      if (!name) continue;
      HeuristicEntry h;
      h.param = *name;
      h.body = isType(vals[i], "Lambda") ? &vals[i]["body"] : nullptr;
      h.value = &vals[i];
      if (!h.body) k.notes.push_back(fmt::format("heuristic for '{}' is not a lambda", *name));
      k.heuristics.push_back(h);
    }
  }

  void addFunction(const Node& def, const std::string& prefix) {
    FunctionInfo f;
    f.name = prefix + def["name"].get<std::string>();
    f.def = &def;
    for (const auto& a : def["args"]["args"]) f.params.push_back(a["arg"].get<std::string>());
    collectAssignments(def["body"], f, false);
    ir_.functions[f.name] = std::move(f);
  }

  void bind(FunctionInfo& f, const Node& target, const Node* value, const Node& stmt, bool cond, bool aug) {
    if (isType(target, "Name")) {
      f.assignments[target["id"].get<std::string>()].push_back({&stmt, value, aug, cond});
    } else if (isType(target, "Tuple") || isType(target, "List")) {
      const Node& elts = target["elts"];
      bool parallel = value && (isType(*value, "Tuple") || isType(*value, "List")) && (*value)["elts"].size() == elts.size();
      for (size_t i = 0; i < elts.size(); ++i) {
        bind(f, elts[i], parallel ? &(*value)["elts"][i] : nullptr, stmt, cond, aug);
      }
    } else if (isType(target, "Starred")) {
      bind(f, target["value"], nullptr, stmt, cond, aug);
    }
  }

  void collectAssignments(const Node& body, FunctionInfo& f, bool cond) {
    for (const auto& s : body) {
      const std::string& t = nodeType(s);
      if (t == "Assign") {
        for (const auto& target : s["targets"]) bind(f, target, &s["value"], s, cond, false);
      } else if (t == "AnnAssign") {
        if (s["value"].is_object()) bind(f, s["target"], &s["value"], s, cond, false);
      } else if (t == "AugAssign") {
        bind(f, s["target"], &s["value"], s, cond, true);
      } else if (t == "For" || t == "AsyncFor") {
        bind(f, s["target"], nullptr, s, true, false);
        collectAssignments(s["body"], f, true);
        collectAssignments(s["orelse"], f, true);
      } else if (t == "While") {
        collectAssignments(s["body"], f, true);
        collectAssignments(s["orelse"], f, true);
      } else if (t == "If") {
        collectAssignments(s["body"], f, true);
        collectAssignments(s["orelse"], f, true);
      } else if (t == "With" || t == "AsyncWith") {
        for (const auto& item : s["items"]) {
          if (item["optional_vars"].is_object()) bind(f, item["optional_vars"], nullptr, s, cond, false);
        }
        collectAssignments(s["body"], f, cond);
      } else if (t == "Try" || t == "TryStar") {
        collectAssignments(s["body"], f, true);
        for (const auto& h : s["handlers"]) collectAssignments(h["body"], f, true);
        collectAssignments(s["orelse"], f, true);
        collectAssignments(s["finalbody"], f, true);
      }
    }
  }

  void findLaunches(const Node& root, const std::string& function) {
    walk(root, [&](const Node& n) {
      const std::string& t = nodeType(n);
      if (t == "FunctionDef" || t == "Lambda" || t == "ClassDef" || t == "AsyncFunctionDef") return false;
      if (t != "Call" || !isType(n["func"], "Subscript")) return true;
      const Node& sub = n["func"];
      std::string target = dottedName(sub["value"]);
      const Kernel* k = ir_.kernel(target);
      if (!k) k = kernelFromDefault(target, function);
      if (!k) k = kernelFromCallers(target, function);
      // A local name bound to kernels: one launch site per kernel it may hold (`k = a if
      // causal else b`). Their tunables at this call are the same text: the first is tuned,
      // the others follow it.
      std::vector<const Kernel*> ks = k ? std::vector<const Kernel*>{k} : kernelsFromLocal(target, function);
      for (const Kernel* each : ks) addLaunch(n, sub, *each, function);
      return true;
    });
  }

  void addLaunch(const Node& n, const Node& sub, const Kernel& kernel, const std::string& function) {
    LaunchSite site;
    site.kernel = kernel.name;
    site.function = function;
    site.call = &n;
    site.grid = &sub["slice"];
    size_t i = 0;
    for (const auto& a : n["args"]) {
      if (isType(a, "Starred")) {
        site.has_starred = site.star_args = true;
        break;
      }
      if (i < kernel.params.size()) site.args.push_back({kernel.params[i].name, &a, true});
      ++i;
    }
    for (const auto& kw : n["keywords"]) {
      if (!kw["arg"].is_string()) {
        site.has_starred = true;
        continue;
      }
      std::string name = kw["arg"].get<std::string>();
      if (isLaunchOption(name)) site.options[name] = {name, &kw["value"], false};
      else site.args.push_back({name, &kw["value"], false});
    }
    ir_.launches.push_back(std::move(site));
  }

  // A kernel passed as a parameter's default (`def fwd(x, kernel=_fwd_kernel)`, then
  // `kernel[grid](...)`): the default's kernel.
  const Kernel* kernelFromDefault(const std::string& name, const std::string& function) const {
    auto it = ir_.functions.find(function);
    if (it == ir_.functions.end() || name.empty()) return nullptr;
    const Node& args = it->second.def->at("args");
    const Node& params = args["args"];
    const Node& defaults = args["defaults"];
    size_t first = params.size() - std::min(params.size(), defaults.size());
    for (size_t i = first; i < params.size(); ++i) {
      if (params[i]["arg"] != name) continue;
      return ir_.kernel(dottedName(defaults[i - first]));
    }
    for (size_t i = 0; i < args["kwonlyargs"].size(); ++i) {
      if (args["kwonlyargs"][i]["arg"] != name) continue;
      const Node& d = args["kw_defaults"][i];
      return d.is_object() ? ir_.kernel(dottedName(d)) : nullptr;
    }
    return nullptr;
  }

  // A kernel its callers pass for a parameter (`LayerNorm.apply(x, ..., implementation)`
  // where the caller's `implementation` defaults to a kernel): the first caller's.
  const Kernel* kernelFromCallers(const std::string& name, const std::string& function) const {
    auto fit = ir_.functions.find(function);
    if (fit == ir_.functions.end() || name.empty()) return nullptr;
    const auto& params = fit->second.params;
    auto pos = std::find(params.begin(), params.end(), name);
    if (pos == params.end()) return nullptr;
    size_t index = static_cast<size_t>(pos - params.begin());
    const Kernel* found = nullptr;
    for (const auto& [caller, info] : ir_.functions) {
      if (found) break;
      walk(info.def->at("body"), [&](const Node& n) {
        if (found || !isType(n, "Call")) return !found;
        std::string callee = dottedName(n["func"]);
        auto entries = ir_.entryFunctions(callee);
        if (entries.empty() || entries.front() != function) return true;
        // Class.apply(a, b) binds forward(ctx, a, b): one parameter fewer.
        size_t shift = callee.size() > 6 && callee.compare(callee.size() - 6, 6, ".apply") == 0 ? 1 : 0;
        const Node* bound = nullptr;
        if (index >= shift && index - shift < n["args"].size()) bound = &n["args"][index - shift];
        for (const auto& kw : n["keywords"]) {
          if (kw["arg"].is_string() && kw["arg"] == name) bound = &kw["value"];
        }
        if (!bound) return true;
        std::string arg = dottedName(*bound);
        found = ir_.kernel(arg);
        if (!found) found = kernelFromDefault(arg, caller);
        return !found;
      });
    }
    return found;
  }

  // The kernels a local name may hold (`k = _fwd_kernel`, `k = KERNELS["fwd"]` from a
  // module-level dict literal, `k = a if causal else b`, or bindings on several paths):
  // empty unless every binding of the name is to kernels.
  std::vector<const Kernel*> kernelsFromLocal(const std::string& name, const std::string& function) const {
    auto it = ir_.functions.find(function);
    if (it == ir_.functions.end() || name.empty()) return {};
    auto a = it->second.assignments.find(name);
    if (a == it->second.assignments.end() || a->second.empty()) return {};
    std::vector<const Kernel*> found;
    for (const auto& bound : a->second) {
      if (bound.augmented || !bound.value) return {};
      std::vector<const Kernel*> ks = ir_.kernelsBoundBy(*bound.value);
      if (ks.empty()) return {};
      for (const Kernel* k : ks) {
        if (std::find(found.begin(), found.end(), k) == found.end()) found.push_back(k);
      }
    }
    return found;
  }

  const ParsedSource& src_;
  const std::vector<Kernel>* imported_;
  ModuleIR ir_;
};

}  // namespace

const Param* Kernel::param(std::string_view n) const {
  for (const auto& p : params) if (p.name == n) return &p;
  return nullptr;
}

const LaunchArg* LaunchSite::arg(std::string_view param) const {
  for (const auto& a : args) if (a.param == param) return &a;
  return nullptr;
}

bool AutotuneInfo::configsWrittenHere() const {
  return configs_understood && configs && (isType(*configs, "List") || isType(*configs, "Tuple"));
}

const Kernel* ModuleIR::kernel(std::string_view name) const {
  for (const auto& k : kernels) if (k.name == name) return &k;
  return nullptr;
}

std::string ModuleIR::qualify(const std::string& dotted) const {
  if (dotted.empty()) return dotted;
  auto dot = dotted.find('.');
  std::string first = dotted.substr(0, dot);
  auto it = aliases.find(first);
  if (it == aliases.end()) return dotted;
  return dot == std::string::npos ? it->second : it->second + dotted.substr(dot);
}

std::string ModuleIR::tritonSpelling() const {
  for (const auto& [local, full] : aliases) if (full == "triton") return local;
  return "";
}

std::vector<std::string> ModuleIR::entryFunctions(const std::string& launcher, std::string* why) const {
  std::string name = launcher;
  for (int depth = 0; depth < 8; ++depth) {
    if (functions.count(name)) return {name};
    size_t dot = name.rfind('.');
    if (dot != std::string::npos) {
      std::string cls = name.substr(0, dot), attr = name.substr(dot + 1);
      // An autograd Function: apply() runs forward().
      if (attr == "apply" && functions.count(cls + ".forward")) return {cls + ".forward"};
      // An alias of a class: `Norm = LayerNormFunction`, then Norm.apply.
      auto alias = module_assignments.find(cls);
      if (alias != module_assignments.end() && isType(*alias->second, "Name")) {
        name = (*alias->second)["id"].get<std::string>() + "." + attr;
        continue;
      }
      if (why) {
        *why = fmt::format("'{}' is not a function or method of this file (no '{}' in class '{}')", launcher, attr, cls);
      }
      return {};
    }
    auto it = module_assignments.find(name);
    if (it == module_assignments.end()) {
      if (why) {
        auto imported = aliases.find(name);
        *why = imported != aliases.end()
                   ? fmt::format("'{}' is imported ({}): the launcher must be defined in the task's source", name,
                                 imported->second)
                   : fmt::format("'{}' is not a function of this file", name);
      }
      return {};
    }
    const Node& value = *it->second;
    std::string target = dottedName(value);
    if (target.empty()) {
      if (why) {
        auto pos = nodePos(value);
        *why = fmt::format("the launcher '{}' is `{}` (line {}): only a function, a method or an alias of one "
                           "can be followed",
                           name, source ? source->source.slice(value) : "?", pos ? pos->line : 0);
      }
      return {};
    }
    name = target;
  }
  if (why) *why = fmt::format("'{}' is an alias of an alias ... more than 8 deep", launcher);
  return {};
}

std::vector<const Kernel*> ModuleIR::kernelsBoundBy(const Node& value, int depth) const {
  if (depth > 4) return {};
  if (const Kernel* k = kernel(dottedName(value))) return {k};
  if (isType(value, "IfExp")) {
    std::vector<const Kernel*> a = kernelsBoundBy(value["body"], depth + 1);
    std::vector<const Kernel*> b = kernelsBoundBy(value["orelse"], depth + 1);
    if (a.empty() || b.empty()) return {};
    for (const Kernel* k : b) {
      if (std::find(a.begin(), a.end(), k) == a.end()) a.push_back(k);
    }
    return a;
  }
  // TABLE["key"] with TABLE a module-level dict literal.
  if (isType(value, "Subscript")) {
    auto table = module_assignments.find(dottedName(value["value"]));
    auto key = strLiteral(value["slice"]);
    if (table == module_assignments.end() || !key || !isType(*table->second, "Dict")) return {};
    const Node& dict = *table->second;
    for (size_t i = 0; i < dict["keys"].size(); ++i) {
      if (dict["keys"][i].is_object() && strLiteral(dict["keys"][i]) == key) {
        return kernelsBoundBy(dict["values"][i], depth + 1);
      }
    }
  }
  return {};
}

std::string ModuleIR::calleeOf(const Node& call, const std::string& caller) const {
  std::string callee = dottedName(call["func"]);
  if (callee.empty()) return "";
  // A local name bound once to a callable: `f = LayerNorm.apply`, then f(x).
  if (auto fit = functions.find(caller); fit != functions.end() && callee.find('.') == std::string::npos) {
    auto a = fit->second.assignments.find(callee);
    if (a != fit->second.assignments.end() && a->second.size() == 1 && a->second[0].value &&
        !a->second[0].augmented) {
      std::string bound = dottedName(*a->second[0].value);
      if (!bound.empty() && bound != callee) {
        auto entries = entryFunctions(bound);
        if (!entries.empty()) return entries.front();
      }
    }
  }
  // self.method / cls.method inside a class's method.
  size_t dot = caller.find('.');
  if (dot != std::string::npos && (callee.rfind("self.", 0) == 0 || callee.rfind("cls.", 0) == 0)) {
    std::string method = caller.substr(0, dot) + callee.substr(callee.find('.'));
    if (functions.count(method)) return method;
  }
  auto entries = entryFunctions(callee);
  return entries.empty() ? "" : entries.front();
}

bool followsInItsBlock(const SourceText& text, const Node& fn, const Node& stmt, const Node& node) {
  const Node* block = nullptr;
  walk(fn, [&](const Node& n) {
    if (block) return false;
    for (const char* key : {"body", "orelse", "finalbody"}) {
      if (!n.contains(key) || !n[key].is_array()) continue;
      for (const auto& s : n[key]) {
        if (&s == &stmt) block = &n[key];
      }
    }
    return true;
  });
  if (!block || block->empty()) return false;
  auto at = text.range(stmt), end = text.range(block->back()), r = text.range(node);
  return at && end && r && r->begin >= at->end && r->end <= end->end;
}

namespace {

bool holds(const Range& outer, const Range& inner) { return outer.begin <= inner.begin && inner.end <= outer.end; }

// The loops of `fn` (not of functions nested in it) that hold the range `at` but not `outside`.
std::vector<Range> loopsAround(const SourceText& text, const FunctionInfo& fn, Range at, Range outside) {
  std::vector<Range> loops;
  walk(*fn.def, [&](const Node& n) {
    const std::string& t = nodeType(n);
    if (&n != fn.def && (t == "FunctionDef" || t == "AsyncFunctionDef" || t == "Lambda" || t == "ClassDef")) return false;
    if (t == "For" || t == "AsyncFor" || t == "While") {
      auto r = text.range(n);
      if (r && holds(*r, at) && !holds(*r, outside)) loops.push_back(*r);
    }
    return true;
  });
  return loops;
}

}  // namespace

const Assignment* reachingAssignment(const SourceText& text, const FunctionInfo& fn, const std::string& name,
                                     const Node& node) {
  auto it = fn.assignments.find(name);
  auto at = text.range(node);
  if (it == fn.assignments.end() || !at || !fn.def) return nullptr;
  const Assignment* found = nullptr;
  for (const auto& a : it->second) {
    if (!a.stmt || !followsInItsBlock(text, *fn.def, *a.stmt, node)) continue;
    auto r = text.range(*a.stmt);
    if (r && (!found || r->begin > text.range(*found->stmt)->begin)) found = &a;
  }
  if (!found) return nullptr;
  auto from = *text.range(*found->stmt);
  std::vector<Range> loops = loopsAround(text, fn, *at, from);
  for (const auto& a : it->second) {
    if (&a == found) continue;
    auto r = a.stmt ? text.range(*a.stmt) : std::nullopt;
    if (!r) return nullptr;
    if (r->end > from.end && r->begin < at->begin) return nullptr;     // between, or holding `node`
    for (const auto& l : loops) {
      if (holds(l, *r)) return nullptr;
    }
  }
  return found;
}

std::optional<JoinPoint> joinPoint(const SourceText& text, const FunctionInfo& fn, const std::string& name,
                                   const Node& node) {
  auto it = fn.assignments.find(name);
  auto at = text.range(node);
  if (it == fn.assignments.end() || !at || !fn.def) return std::nullopt;
  std::vector<Range> assigns;
  for (const auto& a : it->second) {
    auto r = a.stmt ? text.range(*a.stmt) : std::nullopt;
    if (!r) return std::nullopt;
    if (holds(*r, *at)) return std::nullopt;                              // holds `node`
    if (r->begin < at->begin && !a.value) return std::nullopt;            // unpacked before it
    assigns.push_back(*r);
  }
  // The blocks holding `node`, outermost first, each with the index of its statement holding it.
  std::vector<std::pair<const Node*, size_t>> chain;
  const Node* block = &fn.def->at("body");
  while (block) {
    const Node* next = nullptr;
    for (size_t i = 0; i < block->size() && !next; ++i) {
      const Node& s = (*block)[i];
      auto r = text.range(s);
      if (!r || !holds(*r, *at)) continue;
      chain.emplace_back(block, i);
      std::vector<const Node*> subs;
      for (const char* key : {"body", "orelse", "finalbody"}) {
        if (s.contains(key) && s[key].is_array()) subs.push_back(&s[key]);
      }
      if (s.contains("handlers") && s["handlers"].is_array()) {
        for (const auto& h : s["handlers"]) subs.push_back(&h["body"]);
      }
      for (const Node* sub : subs) {
        if (sub->empty()) continue;
        auto first = text.range(sub->front()), last = text.range(sub->back());
        if (first && last && first->begin <= at->begin && at->end <= last->end) next = sub;
      }
    }
    block = next;
  }
  for (auto c = chain.rbegin(); c != chain.rend(); ++c) {
    for (size_t i = c->second; i-- > 0;) {
      const Node& s = (*c->first)[i];
      auto r = text.range(s);
      if (!r || std::none_of(assigns.begin(), assigns.end(), [&](const Range& a) { return holds(*r, a); })) continue;
      const std::string& type = nodeType(s);
      if (type == "Assign" || type == "AnnAssign" || type == "AugAssign") return std::nullopt;
      // A loop around `node` that does not hold this statement must assign nothing.
      bool looped = false;
      for (const Range& l : loopsAround(text, fn, *at, *r)) {
        looped = looped || std::any_of(assigns.begin(), assigns.end(), [&](const Range& a) { return holds(l, a); });
      }
      auto pos = nodePos(s);
      size_t eol = text.text().find('\n', r->end);
      if (looped || !pos || eol == std::string::npos) return std::nullopt;
      return JoinPoint{eol + 1, pos->col};
    }
  }
  return std::nullopt;
}

ModuleIR buildModuleIR(const ParsedSource& source, const std::vector<Kernel>* imported) {
  return Builder(source, imported).build();
}

std::set<std::string> unpackedKeys(const ModuleIR& ir, const LaunchSite& site, bool* opaque) {
  std::set<std::string> keys;
  bool unread = false;
  auto dictKeys = [&](const Node& d) {
    for (const auto& k : d["keys"]) {
      auto s = k.is_null() ? std::nullopt : strLiteral(k);
      if (s) keys.insert(*s);
      else unread = true;  // **nested or a computed key
    }
  };
  std::set<std::string> names;
  for (const auto& kw : site.call->at("keywords")) {
    if (kw["arg"].is_string()) continue;
    const Node& v = kw["value"];
    if (isType(v, "Dict")) dictKeys(v);
    else if (isType(v, "Name")) names.insert(v["id"].get<std::string>());
    else unread = true;
  }
  if (!names.empty()) {
    auto fn = ir.functions.find(site.function);
    if (fn == ir.functions.end() || !fn->second.def) {
      unread = true;
    } else {
      auto isName = [&](const Node& n) { return isType(n, "Name") && names.count(n["id"].get<std::string>()); };
      walk(fn->second.def->at("body"), [&](const Node& n) {
        if (isType(n, "Assign")) {
          for (const auto& t : n["targets"]) {
            if (isName(t)) {
              const Node& v = n["value"];
              bool dict_call = isType(v, "Call") && dottedName(v["func"]) == "dict" && v["args"].empty();
              if (isType(v, "Dict")) {
                dictKeys(v);
              } else if (dict_call) {  // dict(num_warps=4)
                for (const auto& kw : v["keywords"]) {
                  if (kw["arg"].is_string()) keys.insert(kw["arg"].get<std::string>());
                  else unread = true;
                }
              } else {
                unread = true;  // bound to something else than a dict literal or dict(...)
              }
            }
            if (isType(t, "Subscript") && isName(t["value"])) {
              if (auto s = strLiteral(t["slice"])) keys.insert(*s);
              else unread = true;
            }
          }
        }
        if (isType(n, "Call") && isType(n["func"], "Attribute") && isName(n["func"]["value"])) {
          const std::string attr = n["func"]["attr"];
          if (attr == "update" || attr == "setdefault") {
            for (const auto& a : n["args"]) {
              if (isType(a, "Dict")) dictKeys(a);
              else if (auto s = strLiteral(a)) keys.insert(*s);
              else if (attr == "update") unread = true;
            }
            for (const auto& kw : n["keywords"]) {
              if (kw["arg"].is_string()) keys.insert(kw["arg"].get<std::string>());
              else unread = true;
            }
          }
        }
        return true;
      });
    }
  }
  if (opaque) *opaque = unread;
  return keys;
}

bool hidesArguments(const ModuleIR& ir, const LaunchSite& site, const Kernel& kernel, std::string* why) {
  auto say = [&](const std::string& w) {
    if (why) *why = w;
    return true;
  };
  if (site.star_args) return say(fmt::format("a launch of {} passes *args", kernel.name));
  if (!site.has_starred) return false;
  bool opaque = false;
  std::set<std::string> keys = unpackedKeys(ir, site, &opaque);
  if (opaque) return say(fmt::format("a launch of {} passes **kwargs whose keys are not all read", kernel.name));
  for (const auto& p : kernel.params) {
    if (keys.count(p.name)) {
      return say(fmt::format("a launch of {} passes its parameter '{}' through **kwargs", kernel.name, p.name));
    }
  }
  return false;
}

}  // namespace tf
