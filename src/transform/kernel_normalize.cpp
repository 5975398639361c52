// The kernel's normal form (kernel_normalize.h). Map:
//   StringStatements   multi-line strings standing alone as statements: dropped
//   ProgramIds         every tl.program_id(a) read through one name per axis bound at the top
//   EarlyReturn        `if C: return` at the top: `if not (C):` over the rest of the body
//   normalizeKernel    both, as one set of edits on the module's text
//   retryNormalized    a refused pass tried again on the normal form
#include "transform/kernel_normalize.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "task/source_parser.h"
#include "transform/pass_context.h"
#include "transform/source_editor.h"
#include "util/error.h"

namespace tf {
namespace {

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

// Does `stmt` stand alone on its lines: only indentation before it, only a comment or
// nothing after it?
bool aloneOnItsLines(const PassContext& ctx, const Node& stmt) {
  auto p = nodePos(stmt);
  if (!p) return false;
  std::string_view first = ctx.text().line(p->line);
  std::string_view last = ctx.text().line(p->end_line);
  if (!blank(first.substr(0, std::min<size_t>(static_cast<size_t>(p->col), first.size())))) return false;
  std::string_view after = last.substr(std::min<size_t>(static_cast<size_t>(p->end_col), last.size()));
  size_t c = after.find_first_not_of(" \t\r");
  return c == std::string_view::npos || after[c] == '#';
}

// The statement lists directly inside a compound statement (body, else, finally, handlers).
std::vector<const Node*> innerBlocks(const Node& stmt) {
  std::vector<const Node*> out;
  for (const char* key : {"body", "orelse", "finalbody"}) {
    if (stmt.contains(key) && stmt[key].is_array()) out.push_back(&stmt[key]);
  }
  if (stmt.contains("handlers") && stmt["handlers"].is_array()) {
    for (const auto& h : stmt["handlers"]) {
      if (h.contains("body") && h["body"].is_array()) out.push_back(&h["body"]);
    }
  }
  return out;
}

bool isStringStatement(const Node& s) {
  if (!isType(s, "Expr") || !s["value"].is_object()) return false;
  const Node& v = s["value"];
  if (!isType(v, "Constant") || v.value("vt", "") != "str") return false;
  auto p = nodePos(v);
  return p && p->end_line > p->line;
}

class StringStatements {
 public:
  StringStatements(const PassContext& ctx, SourceEditor& ed) : ctx_(ctx), ed_(ed) {}

  int drop(const Node& block) {
    std::vector<const Node*> strings;
    for (const auto& s : block) {
      if (isStringStatement(s) && aloneOnItsLines(ctx_, s)) strings.push_back(&s);
      for (const Node* inner : innerBlocks(s)) drop(*inner);
    }
    for (const Node* s : strings) {
      bool last = s == strings.back() && strings.size() == block.size();
      auto p = nodePos(*s);
      ed_.replace(ctx_.lineRange(*s), last ? ctx_.text().indentOf(p->line) + "pass\n" : "");
      ++dropped_;
    }
    return dropped_;
  }

 private:
  const PassContext& ctx_;
  SourceEditor& ed_;
  int dropped_ = 0;
};

// A @triton.jit helper that only hands back a program id or a program count, as FlagGems'
// `tle.program_id(axis)` (`return tl.program_id(axis).to(tl.int64)`): the call it answers,
// read as the tl call it wraps. Same module, or a module of the package the source imports.
struct IdHelperCall {
  std::string fn;      // "program_id" or "num_programs"
  int axis = -1;       // -1: not a literal axis
  std::string suffix;  // ".to(tl.int64)" (spelt in the kernel's module), "" without a cast
};

// `return tl.<fn>(X)` with casts `.to(tl.<int type>)` after it: the helper's one statement
// (after a docstring). X is a literal axis or one of its parameters.
std::optional<IdHelperCall> idHelperCall(const PassContext& ctx, const Node& call) {
  if (!isType(call, "Call") || ctx.tlFunction(call) != "") return std::nullopt;
  std::string callee = dottedName(call["func"]);
  const Kernel* helper = callee.empty() ? nullptr : ctx.ir->kernel(callee);
  if (!helper || helper == ctx.kernel || !helper->def) return std::nullopt;
  const Node& body = (*helper->def)["body"];
  size_t i = !body.empty() && isType(body[0], "Expr") && isType(body[0]["value"], "Constant") ? 1 : 0;
  if (body.size() != i + 1 || !isType(body[i], "Return") || !body[i]["value"].is_object()) return std::nullopt;
  const ModuleIR& names = helper->home ? *helper->home : *ctx.ir;
  auto tlName = [&](const Node& n) { return tlNameIn(names, n); };
  // Peel the casts off the end.
  std::vector<std::string> casts;
  const Node* e = &body[i]["value"];
  while (isType(*e, "Call") && isType((*e)["func"], "Attribute") && (*e)["func"]["attr"] == "to" &&
         (*e)["args"].size() == 1 && (*e)["keywords"].empty()) {
    std::string t = tlName((*e)["args"][0]);
    if (t != "int64" && t != "int32") return std::nullopt;
    casts.insert(casts.begin(), t);
    e = &(*e)["func"]["value"];
  }
  if (!isType(*e, "Call")) return std::nullopt;
  IdHelperCall out;
  out.fn = tlName((*e)["func"]);
  if ((out.fn != "program_id" && out.fn != "num_programs") || (*e)["args"].size() != 1 || !(*e)["keywords"].empty()) {
    return std::nullopt;
  }
  // The axis: a literal in the helper, or the argument the call passes for that parameter.
  const Node& x = (*e)["args"][0];
  const Node* given = &x;
  if (isType(x, "Name")) {
    const std::string& param = x["id"].get_ref<const std::string&>();
    size_t pos = 0;
    while (pos < helper->params.size() && helper->params[pos].name != param) ++pos;
    if (pos == helper->params.size()) return std::nullopt;
    given = keywordArg(call, param);
    if (!given && pos < call["args"].size()) given = &call["args"][pos];
    if (!given) return std::nullopt;
  }
  auto a = intLiteral(*given);
  out.axis = a && *a >= 0 && *a <= 2 ? static_cast<int>(*a) : -1;
  if (call["args"].size() + call["keywords"].size() != helper->params.size()) return std::nullopt;
  for (const auto& t : casts) out.suffix += fmt::format(".to({}.{})", ctx.tl(), t);
  return out;
}

class ProgramIds {
 public:
  ProgramIds(const PassContext& ctx, SourceEditor& ed) : ctx_(ctx), ed_(ed) {}

  // Rewrites; the changes made, one line each (none when the kernel is in normal form or
  // reads an id through a computed axis).
  std::vector<std::string> rewrite() {
    const Node& def = *ctx_.kernel->def;
    bool computed_axis = false;
    int helper_counts = 0;
    for (const auto& s : ctx_.body()) {
      walk(s, [&](const Node& n) {
        if (ctx_.isTlCall(n, "program_id")) {
          int a = programIdAxis(n);
          if (a < 0) computed_axis = true;
          else calls_.push_back({&n, a, "", false});
        } else if (auto h = idHelperCall(ctx_, n)) {
          if (h->axis < 0) {
            computed_axis = true;
          } else if (h->fn == "program_id") {
            calls_.push_back({&n, h->axis, h->suffix, true});
          } else {
            // A program count through a helper: the tl call it wraps, where it is read.
            counts_[&n] = fmt::format("{}.num_programs({}){}", ctx_.tl(), h->axis, h->suffix);
            ++helper_counts;
          }
          return false;
        }
        return true;
      });
    }
    std::vector<std::string> changes;
    if (helper_counts > 0) {
      changes.push_back(fmt::format("{} program count(s) read through a @triton.jit helper read tl.num_programs",
                                    helper_counts));
    }
    if (computed_axis) return {};
    if (calls_.empty()) {
      for (const auto& [node, text] : counts_) ed_.replace(ctx_.range(*node), text);
      return changes;
    }
    walk(def["body"], [&](const Node& n) {
      if (isType(n, "Name") && n.value("ctx", "") == "Store") ++stores_[n["id"].get<std::string>()];
      return true;
    });
    for (const auto& p : ctx_.kernel->params) params_.insert(p.name);

    findBindings();
    std::set<int> axes;
    int helper_ids = 0;
    for (const auto& c : calls_) {
      axes.insert(c.axis);
      helper_ids += c.helper ? 1 : 0;
    }
    if (helper_ids > 0) {
      changes.push_back(fmt::format("{} program id(s) read through a @triton.jit helper read tl.program_id", helper_ids));
    }
    std::string inserted;
    for (int a : axes) {
      auto b = binding_.find(a);
      if (b != binding_.end() && readsAfter(a, *b->second.stmt)) {
        names_[a] = b->second.name;
        continue;
      }
      names_[a] = ctx_.freshName(fmt::format("pid_{}", a));
      inserted += fmt::format("{}{} = {}.program_id({})\n", ctx_.bodyIndent(), names_[a], ctx_.tl(), a);
      changes.push_back(fmt::format("tl.program_id({}) bound once at the top of the body as {}", a, names_[a]));
    }
    // Tuples split (their elements read the names too), every other call replaced.
    std::set<const Node*> in_split;
    for (const Node* s : splits_) {
      splitTuple(*s);
      walk(*s, [&](const Node& n) {
        in_split.insert(&n);
        return true;
      });
      changes.push_back(fmt::format("line {}: the tuple of program ids bound one per statement", nodePos(*s)->line));
    }
    for (const auto& [node, text] : counts_) {
      if (!in_split.count(node)) ed_.replace(ctx_.range(*node), text);
    }
    int replaced = 0;
    for (const auto& c : calls_) {
      if (in_split.count(c.node) || isBindingValue(c)) continue;
      ed_.replace(ctx_.range(*c.node), names_[c.axis] + c.suffix);
      ++replaced;
    }
    if (replaced > 0) changes.push_back(fmt::format("{} other read(s) of a program id read its name", replaced));
    if (!inserted.empty()) {
      auto first = nodePos(ctx_.body()[0]);
      ed_.insert(ctx_.text().offset(first->line, 0), inserted);
    }
    return changes;
  }

 private:
  struct Call {
    const Node* node;
    int axis;
    std::string suffix;   // the helper's casts, read after the name
    bool helper = false;  // read through a @triton.jit helper: never a binding
  };
  struct Binding {
    std::string name;
    const Node* stmt = nullptr;   // the top-level statement (an Assign, or a tuple to split)
    const Node* value = nullptr;  // the tl.program_id call
  };

  // A name bound once in the kernel, not a parameter: it keeps the id everywhere.
  bool keepsItsValue(const std::string& name) const {
    auto it = stores_.find(name);
    return it != stores_.end() && it->second == 1 && !params_.count(name);
  }

  const Call* callAt(const Node& n) const {
    for (const auto& c : calls_) {
      if (c.node == &n) return &c;
    }
    return nullptr;
  }

  void findBindings() {
    for (const auto& s : ctx_.body()) {
      if (!isType(s, "Assign") || s["targets"].size() != 1) continue;
      const Node& t = s["targets"][0];
      const Node& v = s["value"];
      if (isType(t, "Name")) {
        const Call* c = callAt(v);
        if (c && !c->helper && keepsItsValue(t["id"]) && !binding_.count(c->axis)) binding_[c->axis] = {t["id"], &s, &v};
        continue;
      }
      // `a, b = tl.program_id(0), tl.program_id(1)`: split when every target is a name, no
      // element reads a target (the tuple assigns them all at once) and it stands alone.
      bool tuple = (isType(t, "Tuple") || isType(t, "List")) && (isType(v, "Tuple") || isType(v, "List")) &&
                   t["elts"].size() == v["elts"].size() && aloneOnItsLines(ctx_, s);
      if (!tuple) continue;
      std::set<std::string> targets;
      bool any_id = false;
      for (size_t i = 0; i < t["elts"].size(); ++i) {
        if (!isType(t["elts"][i], "Name")) tuple = false;
        else targets.insert(t["elts"][i]["id"].get<std::string>());
        if (callAt(v["elts"][i])) any_id = true;
      }
      if (!tuple || !any_id || targets.size() != t["elts"].size()) continue;
      bool reads_target = false;
      walk(v, [&](const Node& n) {
        if (isType(n, "Name") && targets.count(n["id"].get<std::string>())) reads_target = true;
        return true;
      });
      if (reads_target) continue;
      splits_.push_back(&s);
      for (size_t i = 0; i < t["elts"].size(); ++i) {
        const Call* c = callAt(v["elts"][i]);
        std::string name = t["elts"][i]["id"];
        if (c && !c->helper && keepsItsValue(name) && !binding_.count(c->axis)) {
          binding_[c->axis] = {name, &s, &v["elts"][i]};
        }
      }
    }
  }

  // Does every other read of axis `a` come after the binding statement?
  bool readsAfter(int a, const Node& stmt) const {
    size_t end = ctx_.range(stmt).end;
    const Binding& b = binding_.at(a);
    for (const auto& c : calls_) {
      if (c.axis != a || c.node == b.value) continue;
      if (ctx_.range(*c.node).begin < end) return false;
    }
    return true;
  }

  bool isBindingValue(const Call& c) const {
    auto b = binding_.find(c.axis);
    return b != binding_.end() && names_.at(c.axis) == b->second.name && b->second.value == c.node;
  }

  // The text of `n` with the program-id calls inside it replaced by their names (the
  // binding's own value kept).
  std::string textReading(const Node& n) const {
    TextEdits subs;
    walk(n, [&](const Node& x) {
      if (auto it = counts_.find(&x); it != counts_.end()) {
        subs.push_back({ctx_.range(x), it->second});
        return false;
      }
      const Call* c = callAt(x);
      if (!c) return true;
      if (!isBindingValue(*c)) subs.push_back({ctx_.range(x), names_.at(c->axis) + c->suffix});
      return false;
    });
    return sliceWith(ctx_, n, subs);
  }

  void splitTuple(const Node& s) {
    const Node& t = s["targets"][0];
    const Node& v = s["value"];
    std::string indent = ctx_.text().indentOf(nodePos(s)->line);
    std::string lines;
    for (size_t i = 0; i < t["elts"].size(); ++i) {
      lines += fmt::format("{}{} = {}\n", indent, t["elts"][i]["id"].get<std::string>(), textReading(v["elts"][i]));
    }
    ed_.replace(ctx_.lineRange(s), lines);
  }

  const PassContext& ctx_;
  SourceEditor& ed_;
  std::vector<Call> calls_;
  std::map<const Node*, std::string> counts_;  // program counts read through helpers -> the tl call
  std::map<std::string, int> stores_;
  std::set<std::string> params_;
  std::map<int, Binding> binding_;
  std::vector<const Node*> splits_;
  std::map<int, std::string> names_;
};

// `if C: return` at the top level of the body, the rest of the body after it: `if not (C):`
// over the rest (the same program ends the same way), so that a pass that wraps the body in a
// loop (over rows, over tiles) does not end the program. The first such guard only; the
// condition's own text is left for the other rewrites (only `if ` and `: return` change).
class EarlyReturn {
 public:
  EarlyReturn(const PassContext& ctx, SourceEditor& ed) : ctx_(ctx), ed_(ed) {}

  bool rewrite() {
    const Node& body = ctx_.body();
    for (size_t i = 0; i + 1 < body.size(); ++i) {
      const Node& s = body[i];
      if (!isType(s, "If") || !s["orelse"].empty() || s["body"].size() != 1) continue;
      const Node& ret = s["body"][0];
      if (!isType(ret, "Return") || ret["value"].is_object()) continue;
      auto sp = nodePos(s);
      auto rp = nodePos(ret);
      if (!sp || !rp || !aloneOnItsLines(ctx_, s)) return false;
      // The rest must be whole lines of the body, indentable (no multi-line string).
      for (size_t j = i + 1; j < body.size(); ++j) {
        if (!aloneOnItsLines(ctx_, body[j]) || hasMultilineString(ctx_, body[j])) return false;
      }
      Range test = ctx_.range(s["test"]);
      size_t if_kw = ctx_.text().offset(sp->line, sp->col);
      if (ctx_.text().text().compare(if_kw, 3, "if ") != 0) return false;
      ed_.insert(test.begin, "not (");
      ed_.replace({test.end, ctx_.range(ret).end}, "):");
      auto last = nodePos(body[body.size() - 1]);
      ed_.indent({ctx_.lineRange(s).end, ctx_.lineRange(last->line, last->end_line).end}, ctx_.indentUnit());
      line_ = sp->line;
      return true;
    }
    return false;
  }
  int line() const { return line_; }

 private:
  const PassContext& ctx_;
  SourceEditor& ed_;
  int line_ = 0;
};

}  // namespace

int programIdAxis(const Node& call) {
  const Node* axis = call["args"].empty() ? keywordArg(call, "axis") : &call["args"][0];
  if (!axis) return -1;
  auto a = intLiteral(*axis);
  return a && *a >= 0 && *a <= 2 ? static_cast<int>(*a) : -1;
}

std::optional<NormalizedKernel> normalizeKernel(const PassContext& ctx) {
  if (!ctx.kernel || ctx.kernel->home || ctx.body().empty()) return std::nullopt;
  // A body on the `def` line (`def k(x): pass`) has no lines of its own to edit.
  auto def = nodePos(*ctx.kernel->def);
  auto first = nodePos(ctx.body()[0]);
  if (!def || !first || first->line == def->line || !aloneOnItsLines(ctx, ctx.body()[0])) return std::nullopt;
  SourceEditor ed(ctx.text().text());
  NormalizedKernel out;
  try {
    out.changes = ProgramIds(ctx, ed).rewrite();
    if (int n = StringStatements(ctx, ed).drop(ctx.body())) {
      out.changes.push_back(fmt::format("{} multi-line string statement(s) dropped", n));
    }
    EarlyReturn guard(ctx, ed);
    if (guard.rewrite()) {
      out.changes.push_back(fmt::format("line {}: `if ...: return` became `if not (...):` over the rest of the body",
                                        guard.line()));
    }
    if (out.changes.empty()) return std::nullopt;
    out.source = ed.apply();
  } catch (const std::logic_error&) {
    return std::nullopt;  // edits that overlap (a form on one line with another): left as written
  }
  return out;
}

PassOutcome retryNormalized(PassOutcome as_written, const PassContext& ctx,
                            const std::function<PassOutcome(const std::string&)>& rerun) {
  if (as_written.applied) return as_written;
  std::optional<NormalizedKernel> n = normalizeKernel(ctx);
  if (!n) return as_written;
  PassOutcome out;
  try {
    out = rerun(n->source);
  } catch (const UserError&) {
    return as_written;  // the normal form does not parse: a bug of the rewrite, the kernel as written stands
  }
  if (!out.applied) {
    // The same refusal on the normal form (its line numbers shifted by the rewrite): the one as
    // written, whose lines are the user's.
    auto digitless = [](std::string r) {
      r.erase(std::remove_if(r.begin(), r.end(), [](char c) { return c >= '0' && c <= '9'; }), r.end());
      return r;
    };
    return digitless(out.reason) == digitless(as_written.reason) ? as_written : out;
  }
  std::string what;
  for (const auto& c : n->changes) what += (what.empty() ? "" : "; ") + c;
  out.notes.insert(out.notes.begin(), "the kernel was put in normal form first (" + what + ")");
  return out;
}

std::unique_ptr<ImportsContext> contextWithImports(const ParsedSource& src, const PassContext& ctx,
                                                   const std::vector<Kernel>* imported) {
  if (!imported || imported->empty() || !ctx.kernel) return nullptr;
  auto out = std::make_unique<ImportsContext>();
  out->ir = buildModuleIR(src, imported);
  const Kernel* k = out->ir.kernel(ctx.kernel->name);
  if (!k || k->home) return nullptr;
  out->ctx = PassContext::make(out->ir, *k);
  out->ctx.signature = ctx.signature;
  out->ctx.rtol = ctx.rtol;
  out->ctx.atol = ctx.atol;
  return out;
}

PassOutcome runWithNormalForm(const Pass& pass, const PassArgs& args, const PassContext& ctx,
                              const ParsedSource& src, const std::vector<Kernel>* imported, NormalFormRunner& runner,
                              const std::filesystem::path& path, const std::vector<Kernel>* rerun_imported) {
  PassOutcome as_written = pass.run(ctx, args);
  std::unique_ptr<ImportsContext> with_imports;
  if (!as_written.applied && !pass.info().launcher_only) with_imports = contextWithImports(src, ctx, imported);
  const PassContext& nctx = with_imports ? with_imports->ctx : ctx;
  return retryNormalized(std::move(as_written), nctx, [&](const std::string& normalized) {
    return runner.run(pass, args, nctx, normalized, path, rerun_imported);
  });
}

PassOutcome NormalFormRunner::run(const Pass& pass, const PassArgs& args, const PassContext& as_written,
                                  const std::string& text, const std::filesystem::path& path,
                                  const std::vector<Kernel>* imported) {
  if (!parsed_ || text_ != text) {
    parsed_.reset();
    parsed_ = parseSource(worker_, path, text);
    text_ = text;
  }
  ModuleIR ir = buildModuleIR(*parsed_, imported);
  const std::string& name = as_written.kernel->name;
  const Kernel* k = ir.kernel(name);
  if (!k) return refuse(fmt::format("the normal form has no kernel '{}'", name));
  PassContext ctx = PassContext::make(ir, *k);
  ctx.signature = as_written.signature;
  ctx.rtol = as_written.rtol;
  ctx.atol = as_written.atol;
  return pass.run(ctx, args);
}

}  // namespace tf
