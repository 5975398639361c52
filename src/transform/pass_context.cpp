#include "transform/pass_context.h"

#include "transform/pass.h"

#include <fmt/format.h>

#include <cassert>
#include <stdexcept>

namespace tf {

PassContext PassContext::make(const ModuleIR& ir, const Kernel& kernel) {
  PassContext ctx;
  ctx.src = ir.source;
  ctx.ir = &ir;
  ctx.kernel = &kernel;
  ctx.facts = analyzeKernel(ir, kernel);
  for (const auto& l : ir.launches) {
    if (l.kernel == kernel.name) ctx.sites.push_back(&l);
  }
  for (const auto& p : kernel.params) ctx.names_.insert(p.name);
  walk(*kernel.def, [&](const Node& n) {
    if (isType(n, "Name")) ctx.names_.insert(n["id"].get<std::string>());
    return true;
  });
  return ctx;
}

Range PassContext::range(const Node& n) const {
  auto r = text().range(n);
  if (!r) throw std::logic_error("a node without a position: " + nodeType(n));
  return *r;
}

std::string PassContext::tl() const {
  for (const auto& [local, full] : ir->aliases) {
    if (full == "triton.language") return local;
  }
  std::string t = triton();
  return t.empty() ? "tl" : t + ".language";
}

std::string PassContext::triton() const {
  std::string t = ir->tritonSpelling();
  return t.empty() ? "triton" : t;
}

std::string PassContext::constexprAnnotation() const {
  for (const auto& p : kernel->params) {
    if (p.is_constexpr && !p.annotation.empty()) return p.annotation;
  }
  return tl() + ".constexpr";
}

std::string PassContext::bodyIndent() const {
  const Node& b = body();
  if (b.empty()) return "    ";
  auto p = nodePos(b[0]);
  return p ? text().indentOf(p->line) : "    ";
}

std::string PassContext::indentUnit() const {
  std::string body_indent = bodyIndent();
  auto p = nodePos(*kernel->def);
  std::string def_indent = p ? text().indentOf(p->line) : "";
  if (body_indent.size() > def_indent.size()) return body_indent.substr(def_indent.size());
  return "    ";
}

std::string tlNameIn(const ModuleIR& names, const Node& n) {
  std::string q = names.qualifiedName(n);
  const std::string pre = "triton.language.";
  return q.rfind(pre, 0) == 0 ? q.substr(pre.size()) : "";
}

std::string PassContext::tlFunction(const Node& call) const {
  if (!isType(call, "Call")) return "";
  // The kernel's calls are spelt in the module that defines it (an imported kernel's home).
  return tlNameIn(kernel && kernel->home ? *kernel->home : *ir, call["func"]);
}

bool PassContext::isTlCall(const Node& n, std::string_view fn) const { return tlFunction(n) == fn; }

const std::set<std::string>& PassContext::kernelNames() const { return names_; }

std::string PassContext::freshName(const std::string& base) const {
  const auto& used = kernelNames();
  if (!used.count(base)) return base;
  for (int i = 2;; ++i) {
    std::string n = fmt::format("{}_{}", base, i);
    if (!used.count(n)) return n;
  }
}

std::vector<PidVar> PassContext::pidVars() const {
  std::vector<PidVar> out;
  for (const auto& s : body()) {
    if (!isType(s, "Assign") || s["targets"].size() != 1 || !isType(s["targets"][0], "Name")) continue;
    const Node& v = s["value"];
    if (!isTlCall(v, "program_id")) continue;
    const Node* axis = v["args"].empty() ? keywordArg(v, "axis") : &v["args"][0];
    std::optional<int64_t> a = axis ? intLiteral(*axis) : std::optional<int64_t>(0);
    if (!a) continue;
    out.push_back({s["targets"][0]["id"].get<std::string>(), static_cast<int>(*a), &s});
  }
  return out;
}

int PassContext::programIdCalls() const {
  int n = 0;
  walk(*kernel->def, [&](const Node& x) {
    if (isTlCall(x, "program_id")) ++n;
    return true;
  });
  return n;
}

int PassContext::numProgramsCalls() const {
  int n = 0;
  walk(*kernel->def, [&](const Node& x) {
    if (isTlCall(x, "num_programs")) ++n;
    return true;
  });
  return n;
}

int PassContext::bodyIndex(const Node* stmt) const {
  const Node& b = body();
  for (size_t i = 0; i < b.size(); ++i) {
    if (&b[i] == stmt) return static_cast<int>(i);
  }
  return -1;
}

Range PassContext::lineRange(const Node& stmt) const {
  auto p = nodePos(stmt);
  if (!p) throw std::logic_error("a statement without a position");
  return lineRange(p->line, p->end_line);
}

Range PassContext::lineRange(int first_line, int last_line) const {
  return {text().offset(first_line, 0), text().offset(last_line + 1, 0)};
}

void forEachName(const Node& n, const std::function<void(const Node&)>& fn) {
  walk(n, [&](const Node& x) {
    if (isType(x, "Name")) fn(x);
    return true;
  });
}

bool mentionsName(const Node& n, const std::string& name) {
  bool found = false;
  forEachName(n, [&](const Node& x) {
    if (x["id"] == name) found = true;
  });
  return found;
}

std::map<std::string, int> storeCounts(const Node& n) {
  std::map<std::string, int> out;
  walk(n, [&](const Node& x) {
    if (isType(x, "Name") && x.value("ctx", "") == "Store") ++out[x["id"].get<std::string>()];
    return true;
  });
  return out;
}

std::set<std::string> PassContext::derivedFrom(const std::string& name) const {
  std::set<std::string> out = {name};
  bool changed = true;
  std::vector<const Node*> stmts;
  walk(body(), [&](const Node& n) {
    if (isType(n, "Assign") || isType(n, "AugAssign") || isType(n, "AnnAssign")) stmts.push_back(&n);
    return !isType(n, "FunctionDef") && !isType(n, "Lambda");
  });
  while (changed) {
    changed = false;
    for (const Node* sp : stmts) {
      const Node& s = *sp;
      if (!s["value"].is_object()) continue;
      bool uses = false;
      forEachName(s["value"], [&](const Node& x) {
        if (out.count(x["id"].get<std::string>())) uses = true;
      });
      if (!uses) continue;
      std::vector<const Node*> targets;
      if (isType(s, "Assign")) for (const auto& t : s["targets"]) targets.push_back(&t);
      else targets.push_back(&s["target"]);
      for (const Node* t : targets) {
        forEachName(*t, [&](const Node& x) {
          if (out.insert(x["id"].get<std::string>()).second) changed = true;
        });
      }
    }
  }
  return out;
}

bool PassContext::hasReturn(bool except_trailing) const {
  const Node* trailing = except_trailing ? trailingBareReturn() : nullptr;
  bool found = false;
  walk(body(), [&](const Node& n) {
    const std::string& t = nodeType(n);
    if (t == "FunctionDef" || t == "Lambda") return false;
    if (t == "Return" && &n != trailing) found = true;
    return !found;
  });
  return found;
}

int broadcastAxis(const Node& e) {
  if (!isType(e, "Subscript")) return -1;
  const Node& s = e["slice"];
  if (!isType(s, "Tuple") || s["elts"].size() != 2) return -1;
  auto none = [](const Node& n) { return isType(n, "Constant") && n.value("vt", "") == "None"; };
  auto all = [](const Node& n) {
    return isType(n, "Slice") && n["lower"].is_null() && n["upper"].is_null() && n["step"].is_null();
  };
  const Node& a = s["elts"][0];
  const Node& b = s["elts"][1];
  if (all(a) && none(b)) return 0;
  if (none(a) && all(b)) return 1;
  return -1;
}

const Node* PassContext::trailingBareReturn() const {
  const Node& b = body();
  if (b.empty() || !isType(b.back(), "Return")) return nullptr;
  const Node& ret = b.back();
  return ret.contains("value") && !ret["value"].is_null() ? nullptr : &ret;
}

namespace {

// `def NAME(META): return (...)` (a docstring before the return allowed), defined once in the
// function `fn` before the launch in its block, undecorated, one positional argument.
const Node* gridDef(const PassContext& ctx, const Node& fn, const std::string& name, const LaunchSite& site) {
  std::vector<const Node*> defs;
  walk(fn, [&](const Node& n) {
    if (&n != &fn && isType(n, "FunctionDef") && n["name"] == name) defs.push_back(&n);
    return true;
  });
  if (defs.size() != 1) return nullptr;
  const Node& d = *defs[0];
  const Node& args = d["args"];
  if (args["args"].size() != 1 || !args["defaults"].empty() || !d["decorator_list"].empty()) return nullptr;
  if (args.contains("vararg") && args["vararg"].is_object()) return nullptr;
  if (args.contains("kwarg") && args["kwarg"].is_object()) return nullptr;
  const Node& body = d["body"];
  if (body.empty() || body.size() > 2 || !isType(body.back(), "Return") || !body.back()["value"].is_object()) {
    return nullptr;
  }
  if (body.size() == 2 && !(isType(body[0], "Expr") && strLiteral(body[0]["value"]))) return nullptr;
  const Node& v = body.back()["value"];
  if (!isType(v, "Tuple") && !isType(v, "List")) return nullptr;
  return followsInItsBlock(ctx.text(), fn, d, *site.call) ? &d : nullptr;
}

}  // namespace

bool launchFollowsInItsBlock(const PassContext& ctx, const Node& fn, const Node& assign, const LaunchSite& site) {
  // One launch of the kernel in the function: edits made once per function (a variable set
  // before the grid) then serve it, whichever branch it is in.
  int in_function = 0;
  for (const LaunchSite* s : ctx.sites) in_function += s->function == site.function ? 1 : 0;
  if (in_function != 1) return false;
  return followsInItsBlock(ctx.text(), fn, assign, *site.call);
}

std::optional<GridView> gridOf(const PassContext& ctx, const LaunchSite& site, std::string* why) {
  GridView g;
  const Node* e = site.grid;
  if (isType(*e, "Name")) {
    auto fit = ctx.ir->functions.find(site.function);
    std::string var = (*e)["id"].get<std::string>();
    if (fit == ctx.ir->functions.end()) {
      *why = fmt::format("the grid '{}' is not defined in a function", var);
      return std::nullopt;
    }
    auto ait = fit->second.assignments.find(var);
    const Node* def = ait == fit->second.assignments.end() ? gridDef(ctx, *fit->second.def, var, site) : nullptr;
    if (def) {
      // `def grid(META): return (...)`: read as a lambda whose body is the returned tuple.
      g.assign_stmt = def;
      g.lambda = def;
      g.lambda_arg = def->at("args")["args"][0]["arg"].get<std::string>();
      g.in_def = true;
      e = &def->at("body").back()["value"];
    } else if (ait == fit->second.assignments.end() || ait->second.size() != 1 || !ait->second[0].value ||
               (ait->second[0].conditional &&
                !launchFollowsInItsBlock(ctx, *fit->second.def, *ait->second[0].stmt, site)) ||
               !isType(*ait->second[0].stmt, "Assign")) {
      *why = fmt::format("the grid '{}' is not assigned exactly once in '{}'", var, site.function);
      return std::nullopt;
    } else {
      g.assign_stmt = ait->second[0].stmt;
      e = ait->second[0].value;
    }
  }
  g.expr = e;
  const Node* t = e;
  if (!g.in_def && isType(*e, "Lambda")) {
    const Node& args = (*e)["args"]["args"];
    if (args.size() != 1) {
      *why = "the grid lambda does not take exactly one argument";
      return std::nullopt;
    }
    g.lambda = e;
    g.lambda_arg = args[0]["arg"].get<std::string>();
    t = &(*e)["body"];
  }
  if (isType(*t, "Tuple") || isType(*t, "List")) {
    g.tuple = t;
    for (const auto& x : (*t)["elts"]) {
      if (isType(x, "Starred")) {
        *why = "the grid unpacks a sequence (*...)";
        return std::nullopt;
      }
      g.axes.push_back(&x);
    }
    if (g.axes.empty()) {
      *why = "the grid is empty";
      return std::nullopt;
    }
    return g;
  }
  *why = fmt::format("the grid '{}' is not a tuple (or a lambda returning one)", ctx.slice(*e));
  return std::nullopt;
}

const Node* launchArg(const LaunchSite& site, const std::string& param) {
  const LaunchArg* a = site.arg(param);
  return a ? a->expr : nullptr;
}

namespace {

// The kernel parameter (not constexpr) whose launch argument is written `text` at every site.
std::string paramPassedAs(const PassContext& ctx, const LaunchSite& site, const std::string& text) {
  for (const auto& a : site.args) {
    const Param* p = ctx.kernel->param(a.param);
    if (!p || p->is_constexpr) continue;
    if (ctx.slice(*a.expr) == text) return a.param;
  }
  return "";
}

// Strips `x[:, None]` / `x[None, :]` subscripts.
const Node& unsubscript(const Node& n) {
  if (isType(n, "Subscript")) return unsubscript(n["value"]);
  return n;
}

}  // namespace

std::string axisExtent(const PassContext& ctx, int axis) {
  // From the grids: triton.cdiv(X, ...) on this axis, X passed for a kernel parameter.
  std::string found;
  for (const LaunchSite* site : ctx.sites) {
    std::string why;
    auto g = gridOf(ctx, *site, &why);
    if (!g || static_cast<size_t>(axis) >= g->axes.size()) continue;
    const Node& e = *g->axes[static_cast<size_t>(axis)];
    if (!isType(e, "Call") || e["args"].size() != 2) continue;
    std::string fn = dottedName(e["func"]);
    if (fn.size() < 4 || fn.compare(fn.size() - 4, 4, "cdiv") != 0) continue;
    std::string p = paramPassedAs(ctx, *site, ctx.slice(e["args"][0]));
    if (p.empty()) continue;
    if (!found.empty() && found != p) return "";
    found = p;
  }
  if (!found.empty()) return found;
  // From the masks: `offs < P` where offs comes from this axis's program id.
  for (const auto& pv : ctx.pidVars()) {
    if (pv.axis != axis) continue;
    std::set<std::string> derived = ctx.derivedFrom(pv.name);
    walk(ctx.body(), [&](const Node& n) {
      if (!isType(n, "Compare") || n["ops"].size() != 1 || !isType(n["ops"][0], "Lt")) return true;
      const Node& l = unsubscript(n["left"]);
      const Node& r = n["comparators"][0];
      if (!isType(l, "Name") || !isType(r, "Name")) return true;
      if (!derived.count(l["id"].get<std::string>())) return true;
      const Param* p = ctx.kernel->param(r["id"].get<std::string>());
      if (!p || p->is_constexpr) return true;
      if (found.empty()) found = p->name;
      else if (found != p->name) found = "?";
      return true;
    });
  }
  return found == "?" ? "" : found;
}

std::string axisTile(const PassContext& ctx, int axis) {
  std::string found;
  for (const auto& [name, u] : ctx.facts.params) {
    if (!u.pid_axes.count(axis)) continue;
    if (!found.empty()) return "";
    found = name;
  }
  return found;
}

void addKernelParam(const PassContext& ctx, SourceEditor& ed, const std::string& name, const std::string& annotation,
                    const std::string& default_text) {
  const Node& args = ctx.kernel->def->at("args");
  const Node* last = nullptr;
  if (!args["args"].empty()) last = &args["args"].back();
  size_t at;
  if (last) {
    at = ctx.range(*last).end;
    const Node& defaults = args["defaults"];
    if (!defaults.empty()) at = std::max(at, ctx.range(defaults.back()).end);
  } else {
    // def k(): insert inside the parentheses.
    size_t def_begin = ctx.range(*ctx.kernel->def).begin;
    at = ctx.text().text().find('(', ctx.text().text().find("def", def_begin)) + 1;
  }
  bool need_default = !default_text.empty() || !args["defaults"].empty();
  std::string param = name;
  if (!annotation.empty()) param += ": " + annotation;
  if (need_default) param += (annotation.empty() ? "=" : " = ") + (default_text.empty() ? "None" : default_text);
  if (!last) {
    ed.insert(at, param);
    return;
  }
  // A signature line that would grow past 100 columns continues on a new line, aligned
  // like the line before it (or under the first parameter).
  auto lp = nodePos(*last);
  int line = lp->end_line;
  size_t line_len = ctx.text().line(line).size();
  if (line_len + 2 + param.size() <= 100) {
    ed.insert(at, ", " + param);
    return;
  }
  auto dp = nodePos(args["args"][0]);
  std::string align = line == dp->line ? std::string(static_cast<size_t>(dp->col), ' ') : ctx.text().indentOf(line);
  ed.insert(at, ",\n" + align + param);
}

void addCallKeyword(const PassContext& ctx, SourceEditor& ed, const Node& call, const std::string& kw,
                    bool before_launch_options) {
  size_t after = std::string::npos;
  for (const auto& a : call["args"]) after = after == std::string::npos ? ctx.range(a).end : std::max(after, ctx.range(a).end);
  for (const auto& k : call["keywords"]) {
    if (before_launch_options && k["arg"].is_string() && isLaunchOption(k["arg"].get<std::string>())) continue;
    size_t end = ctx.range(k).end;
    after = after == std::string::npos ? end : std::max(after, end);
  }
  if (after != std::string::npos) {
    // A line that would grow past 100 columns continues on the next, aligned with the
    // call's first argument (or with the continuation line it is on).
    int line = 1 + static_cast<int>(std::count(ctx.text().text().begin(), ctx.text().text().begin() + after, '\n'));
    // The line as it will read: up to `after` (with earlier edits), what was inserted here
    // already, the new keyword, and the rest of the original line.
    std::string pending = ed.insertedAt(after);
    size_t nl = pending.rfind('\n');
    size_t width = (nl == std::string::npos ? ed.outputColumn(after) + pending.size() : pending.size() - nl - 1) +
                   2 + kw.size() + (ctx.text().offset(line + 1, 0) - after);
    if (width <= 100) {
      ed.insert(after, ", " + kw);
      return;
    }
    auto cp = nodePos(call);
    std::string align = ctx.text().indentOf(line);
    const Node* first = !call["args"].empty() ? &call["args"][0] : !call["keywords"].empty() ? &call["keywords"][0] : nullptr;
    if (first && nodePos(*first)->line == line) align = std::string(ed.outputColumn(ctx.range(*first).begin), ' ');
    else if (line == cp->line) align += "    ";
    ed.insert(after, ",\n" + align + kw);
    return;
  }
  // Only launch options (or nothing): insert before the first option, or into ().
  for (const auto& k : call["keywords"]) {
    ed.insert(ctx.range(k).begin, kw + ", ");
    return;
  }
  size_t end = ctx.range(call).end;  // just after ')'
  ed.insert(end - 1, kw);
}

void addLaunchKeyword(const PassContext& ctx, SourceEditor& ed, const LaunchSite& site, const std::string& name,
                      const std::string& value) {
  addCallKeyword(ctx, ed, *site.call, fmt::format("{}={}", name, value), true);
}

Range keywordRemoval(const PassContext& ctx, const Node& call, const std::string& name) {
  // The keyword and the comma before it (or after it, when it comes first).
  struct Item {
    Range r;
    bool target;
  };
  std::vector<Item> items;
  for (const auto& a : call["args"]) items.push_back({ctx.range(a), false});
  for (const auto& kw : call["keywords"]) {
    items.push_back({ctx.range(kw), kw["arg"].is_string() && kw["arg"].get<std::string>() == name});
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.r.begin < b.r.begin; });
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].target) continue;
    if (i > 0) return {items[i - 1].r.end, items[i].r.end};
    if (items.size() > 1) return {items[i].r.begin, items[i + 1].r.begin};
    return items[i].r;
  }
  return {};
}

void removeKeyword(const PassContext& ctx, SourceEditor& ed, const Node& call, const std::string& name) {
  Range r = keywordRemoval(ctx, call, name);
  if (r.begin != r.end) ed.replace(r, "");
}

std::string wrapCall(const std::string& head, const std::vector<std::string>& args, size_t column, size_t limit) {
  std::string out = head + "(";
  size_t align = column + out.size();
  size_t col = align;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string piece = args[i] + (i + 1 < args.size() ? "," : ")");
    size_t last_line = piece.find('\n') == std::string::npos ? piece.size() : piece.find('\n');
    if (i > 0 && col + 1 + last_line > limit) {
      out += "\n" + std::string(align, ' ');
      col = align;
    } else if (i > 0) {
      out += " ";
      col += 1;
    }
    out += piece;
    size_t nl = piece.rfind('\n');
    col = nl == std::string::npos ? col + piece.size() : piece.size() - nl - 1;
  }
  if (args.empty()) out += ")";
  return out;
}

std::string indentFollowingLines(std::string_view text, const std::string& prefix) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size() && text[i + 1] != '\n') out += prefix;
  }
  return out;
}

std::string joinLines(const std::vector<std::string>& lines, const std::string& indent) {
  std::string out;
  for (const auto& l : lines) out += l.empty() ? "\n" : indent + l + "\n";
  return out;
}

}  // namespace tf

namespace tf {

std::vector<TunableSet> kernelTunables(const PassContext& ctx) {
  std::vector<std::string> fns;
  for (const LaunchSite* s : ctx.sites) {
    if (s->function.empty()) continue;
    if (std::find(fns.begin(), fns.end(), s->function) == fns.end()) fns.push_back(s->function);
  }
  std::vector<TunableSet> out;
  for (const auto& fn : fns) out.push_back(discoverTunables(*ctx.ir, fn, {ctx.kernel->name}));
  return out;
}

void setTunable(SourceEditor& ed, const Tunable& t, int64_t value) {
  assert(t.origin != TunableOrigin::kAutotune);
  if (t.origin == TunableOrigin::kAbsentOption) {
    ed.insert(t.target.begin, fmt::format("{}{}", t.insert_prefix, value));
    return;
  }
  if (t.value && *t.value == value && t.origin != TunableOrigin::kLocalDerived) return;
  // "lambda args: " for a heuristic's function; a line inserted where assignments join.
  ed.replace(t.target, t.insert_prefix + std::to_string(value) + t.insert_suffix);
  for (const auto& m : t.mirrors) ed.replace(m, std::to_string(value));
}

}  // namespace tf

namespace tf {

std::string sliceWith(const PassContext& ctx, const Node& n, const TextEdits& edits) {
  return sliceWith(ctx, ctx.range(n), edits);
}

std::string sliceWith(const PassContext& ctx, Range whole, const TextEdits& edits) {
  TextEdits sorted = edits;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  std::string out;
  size_t at = whole.begin;
  for (const auto& [r, text] : sorted) {
    if (r.begin < whole.begin || r.end > whole.end) continue;  // another node's
    if (r.begin < at) throw std::logic_error("sliceWith: overlapping edits");
    out += ctx.text().slice(Range{at, r.begin});
    out += text;
    at = r.end;
  }
  out += ctx.text().slice(Range{at, whole.end});
  return out;
}

int siteIndex(const PassContext& ctx, const LaunchSite& site) {
  for (size_t i = 0; i < ctx.ir->launches.size(); ++i) {
    if (&ctx.ir->launches[i] == &site) return static_cast<int>(i);
  }
  return -1;
}

TextEdits metaMirrors(const PassContext& ctx, const std::vector<TunableSet>& sets, const LaunchSite& site,
                      const std::vector<std::string>& params, const std::string& meta) {
  // A literal that repeats two parameters' values stays as written (it is right for the
  // values as written; retiling will say it cannot follow).
  std::map<size_t, std::pair<Range, std::string>> by_begin;
  std::set<size_t> ambiguous;
  int index = siteIndex(ctx, site);
  for (const auto& set : sets) {
    for (const auto& t : set.items) {
      if (t.site != index) continue;
      for (const auto& m : t.mirrors) {
        auto [it, fresh] = by_begin.emplace(m.begin, std::pair{m, t.param});
        if (!fresh && it->second.second != t.param) ambiguous.insert(m.begin);
      }
    }
  }
  TextEdits out;
  for (const auto& [begin, rp] : by_begin) {
    if (ambiguous.count(begin) || std::find(params.begin(), params.end(), rp.second) == params.end()) continue;
    out.emplace_back(rp.first, fmt::format("{}['{}']", meta, rp.second));
  }
  return out;
}

std::string gridTextFor(const GridView& g, const std::vector<std::string>& axes, const std::string& lambda_arg) {
  return gridText(axes, g.in_def ? "" : lambda_arg);
}

std::string gridText(const std::vector<std::string>& axes, const std::string& lambda_arg) {
  std::string t = "(";
  for (size_t i = 0; i < axes.size(); ++i) t += (i ? ", " : "") + axes[i];
  t += axes.size() == 1 ? ",)" : ")";
  return lambda_arg.empty() ? t : "lambda " + lambda_arg + ": " + t;
}

std::string atomText(const PassContext& ctx, const Node& n, const std::string& text) {
  const std::string& t = nodeType(n);
  if (t == "Name" || t == "Call" || t == "Subscript" || t == "Attribute" || t == "Constant") return text;
  return "(" + text + ")";
}

}  // namespace tf

namespace tf {
namespace {

std::optional<std::string> translate(const PassContext& ctx, const Node& n, const std::map<std::string, std::string>& by_text,
                                     const std::map<size_t, std::string>& mirrors, const std::string& meta) {
  Range r = ctx.range(n);
  if (auto it = mirrors.find(r.begin); it != mirrors.end() && isType(n, "Constant")) {
    if (it->second == "?") return std::nullopt;
    return it->second;
  }
  std::string text = ctx.slice(n);
  if (auto it = by_text.find(text); it != by_text.end()) return it->second;
  const std::string& t = nodeType(n);
  if (t == "Constant" && intLiteral(n)) return text;
  if (t == "Subscript" && !meta.empty() && isType(n["value"], "Name") && n["value"]["id"] == meta) {
    if (auto s = strLiteral(n["slice"]); s && ctx.kernel->param(*s)) return *s;
    return std::nullopt;
  }
  if (t == "Attribute" && !meta.empty() && isType(n["value"], "Name") && n["value"]["id"] == meta) {
    std::string a = n["attr"].get<std::string>();
    if (ctx.kernel->param(a)) return a;
    return std::nullopt;
  }
  if (t == "Call") {
    std::string fn = dottedName(n["func"]);
    if (!n["keywords"].empty()) return std::nullopt;
    std::vector<std::string> args;
    for (const auto& a : n["args"]) {
      auto x = translate(ctx, a, by_text, mirrors, meta);
      if (!x) return std::nullopt;
      args.push_back(*x);
    }
    bool cdiv = fn.size() >= 4 && fn.compare(fn.size() - 4, 4, "cdiv") == 0 && args.size() == 2;
    if (cdiv) return fmt::format("{}.cdiv({}, {})", ctx.tl(), args[0], args[1]);
    if ((fn == "min" || fn == "max") && args.size() == 2) return fmt::format("{}({}, {})", fn, args[0], args[1]);
    return std::nullopt;
  }
  if (t == "BinOp") {
    const std::string& op = nodeType(n["op"]);
    const char* sym = op == "Add" ? " + " : op == "Sub" ? " - " : op == "Mult" ? " * " : op == "FloorDiv" ? " // " : nullptr;
    if (!sym) return std::nullopt;
    auto l = translate(ctx, n["left"], by_text, mirrors, meta);
    auto rr = translate(ctx, n["right"], by_text, mirrors, meta);
    if (!l || !rr) return std::nullopt;
    auto wrap = [&](const Node& x, const std::string& s) {
      return isType(x, "BinOp") ? "(" + s + ")" : s;
    };
    return wrap(n["left"], *l) + sym + wrap(n["right"], *rr);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> gridAxisInKernel(const PassContext& ctx, const std::vector<TunableSet>& sets, int axis,
                                            std::string* why) {
  std::optional<std::string> found;
  for (const LaunchSite* site : ctx.sites) {
    auto g = gridOf(ctx, *site, why);
    if (!g) return std::nullopt;
    if (static_cast<size_t>(axis) >= g->axes.size()) {
      *why = fmt::format("a grid has no axis {}", axis);
      return std::nullopt;
    }
    std::map<std::string, std::string> by_text;
    for (const auto& a : site->args) {
      if (ctx.kernel->param(a.param)) by_text.emplace(ctx.slice(*a.expr), a.param);
    }
    // Grid literals that repeat one parameter's value; a literal repeating two is ambiguous
    // ("?", which does not translate).
    std::map<size_t, std::string> mirrors;
    int index = siteIndex(ctx, *site);
    for (const auto& set : sets) {
      for (const auto& t : set.items) {
        if (t.site != index) continue;
        for (const auto& m : t.mirrors) {
          auto [it, fresh] = mirrors.emplace(m.begin, t.param);
          if (!fresh && it->second != t.param) it->second = "?";
        }
      }
    }
    const Node& e = *g->axes[static_cast<size_t>(axis)];
    auto x = translate(ctx, e, by_text, mirrors, g->lambda_arg);
    if (!x) {
      *why = fmt::format("the grid axis '{}' cannot be written with the kernel's parameters", ctx.slice(e));
      return std::nullopt;
    }
    if (found && *found != *x) {
      *why = "the launches' grids differ";
      return std::nullopt;
    }
    found = x;
  }
  if (!found) *why = "no launch";
  return found;
}

bool hasMultilineString(const PassContext& ctx, const Node& from) {
  bool found = false;
  walk(from, [&](const Node& n) {
    if (isType(n, "Constant") && n.value("vt", "") == "str") {
      auto p = nodePos(n);
      if (p && p->end_line > p->line) found = true;
    }
    return !found;
  });
  return found;
}

LoopEntryValues loopEntryValues(const PassContext& ctx, int from) {
  const Node& body = ctx.body();
  auto stores = [&](size_t begin, size_t end) {
    std::set<std::string> out;
    for (size_t i = begin; i < end && i < body.size(); ++i) {
      walk(body[i], [&](const Node& n) {
        if (isType(n, "FunctionDef") || isType(n, "Lambda")) return false;
        if (isType(n, "Name") && n.value("ctx", "") == "Store") out.insert(n["id"].get<std::string>());
        return true;
      });
    }
    return out;
  };
  std::set<std::string> before = stores(0, static_cast<size_t>(std::max(from, 0)));
  for (const auto& p : ctx.kernel->params) before.insert(p.name);
  LoopEntryValues out;
  for (const auto& name : stores(static_cast<size_t>(std::max(from, 0)), body.size())) {
    if (!before.count(name)) continue;
    std::string kept = ctx.freshName(name + "_in");
    out.saved.push_back(fmt::format("{} = {}", kept, name));
    out.reset.push_back(fmt::format("{} = {}", name, kept));
  }
  return out;
}

std::string torchAlias(const PassContext& ctx) {
  for (const auto& [local, full] : ctx.ir->aliases) {
    if (full == "torch") return local;
  }
  return "";
}

std::string smCountExpression(const PassContext& ctx) {
  if (std::string t = torchAlias(ctx); !t.empty()) {
    return t + ".cuda.get_device_properties(" + t + ".cuda.current_device()).multi_processor_count";
  }
  std::string t = ctx.triton();
  return t + ".runtime.driver.active.utils.get_device_properties(" + t +
         ".runtime.driver.active.get_current_device())[\"multiprocessor_count\"]";
}

std::string assignedName(const Node& stmt) {
  if (isType(stmt, "Assign") && stmt["targets"].size() == 1 && isType(stmt["targets"][0], "Name")) {
    return stmt["targets"][0]["id"];
  }
  if ((isType(stmt, "AugAssign") || isType(stmt, "AnnAssign")) && isType(stmt["target"], "Name")) {
    return stmt["target"]["id"];
  }
  return "";
}

bool isRangeCall(const PassContext& ctx, const Node& it) {
  return isType(it, "Call") && (dottedName(it["func"]) == "range" || ctx.isTlCall(it, "range") ||
                                ctx.isTlCall(it, "static_range"));
}

nlohmann::json canonicalValue(const Node& e, const Node& body, size_t before, int depth) {
  if (depth > 32) return "?";
  if (isType(e, "Name")) {
    std::string id = e["id"];
    for (size_t i = before; i-- > 0;) {
      if (assignedName(body[i]) == id && isType(body[i], "Assign")) {
        return canonicalValue(body[i]["value"], body, i, depth + 1);
      }
    }
    return nlohmann::json{{"_t", "Name"}, {"id", id}};
  }
  if (e.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : e.items()) {
      if (k == "_p" || k == "ctx") continue;
      out[k] = canonicalValue(v, body, before, depth + 1);
    }
    return out;
  }
  if (e.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : e) out.push_back(canonicalValue(v, body, before, depth + 1));
    return out;
  }
  return e;
}

}  // namespace tf

namespace tf {

PassOutcome withBlockAfterKernel(const PassContext& ctx, const std::string& block) {
  SourceEditor ed(ctx.text().text());
  const Pos end = *nodePos(*ctx.kernel->def);
  ed.insert(ctx.text().offset(end.end_line + 1, 0), block);
  return appliedEdits(ed, ctx.kernel->name);
}

std::string launchRouteClass(const std::string& cls, const std::string& doc, bool tuned) {
  const std::string i1 = "    ", i2 = i1 + i1, i3 = i2 + i1;
  std::string s = "class " + cls + ":\n";
  s += i1 + "\"\"\"" + doc + "\"\"\"\n\n";
  s += i1 + "def __init__(self, fn, launch):\n";
  s += i2 + "self.fn = fn\n";
  s += i2 + "self._launch = launch\n\n";
  // `K[grid](...)` as a JITFunction's; Triton's Autotuner and Heuristics call `run`.
  s += i1 + "def __getitem__(self, grid):\n";
  s += i2 + "return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)\n\n";
  s += i1 + "def run(self, *args, grid, warmup=False, **kwargs):\n";
  s += i2 + "launched = False if warmup else self._launch(grid, *args, **kwargs)\n";
  s += i2 + "return self.fn.run(*args, grid=grid, warmup=warmup, **kwargs) if launched is False else launched\n\n";
  if (tuned) {
    s += i1 + "@classmethod\n";
    s += i1 + "def under(cls, tuner, launch):\n";
    s += i2 + "\"\"\"Puts the route under @triton.autotune / @triton.heuristics: the innermost `fn` becomes it.\"\"\"\n";
    s += i2 + "from triton.runtime.autotuner import Autotuner, Heuristics\n\n";
    s += i2 + "while isinstance(tuner.fn, (Autotuner, Heuristics)):\n";
    s += i3 + "tuner = tuner.fn\n";
    s += i2 + "tuner.fn = cls(tuner.fn, launch)\n\n";
  }
  s += i1 + "def __getattr__(self, name):\n";
  s += i2 + "return getattr(self.fn, name)\n";
  return s;
}

}  // namespace tf
