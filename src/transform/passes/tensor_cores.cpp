// tensor-cores: how the kernel's tl.dot calls feed the tensor cores.
//
//   precision=tf32|tf32x3|ieee|bf16x3|bf16x6  the dot's input_precision (fp32 operands only)
//   cast=fp16|bf16                             operands down-cast before the dot
//   loads=descriptor                           the dot's operand tiles loaded through tensor
//                                              descriptors (TMA on Hopper): tl.make_tensor_descriptor
//                                              before the K loop, desc.load([row, col]) in it
//   loads=block-pointer                        the same tiles through tl.make_block_ptr (bounds by
//                                              boundary_check; Triton 3.6 lowers these to ordinary
//                                              loads on sm_90, so this is a readability rewrite)
//
// A change that loses precision (tf32, bf16x3, a down-cast) needs the task's tolerances and
// is refused unless both rtol and atol are at least 4x the unit roundoff it introduces.
// Descriptor loads need rows that are contiguous and 16-byte aligned: the launcher asserts it,
// and sets the allocator in-kernel descriptors need.
#include <fmt/format.h>

#include <cmath>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

// A tile load the descriptor rewrite understands: base + R[:, None] * S0 + C[None, :] * S1.
struct TileLoad {
  const Node* stmt = nullptr;      // `a = tl.load(...)`
  const Node* call = nullptr;
  std::string base;                // the pointer parameter
  std::string stride[2];           // "1" when implicit
  std::string offset[2];           // the tile's start along each dimension
  std::string tile[2];             // block sizes
  std::string extent[2];           // from the mask
};

double unitRoundoff(const std::string& what) {
  if (what == "tf32") return std::ldexp(1.0, -11);
  if (what == "bf16x3") return std::ldexp(1.0, -16);
  if (what == "fp16") return std::ldexp(1.0, -11);
  if (what == "bf16") return std::ldexp(1.0, -8);
  return 0;  // ieee, tf32x3, bf16x6: fp32-like
}

class TensorCoresPass : public Pass {
 public:
  TensorCoresPass() {
    info_.name = "tensor-cores";
    info_.summary = "Dot input precision, operand down-casts (only where the tolerances allow), and TMA tensor-"
                    "descriptor (or block-pointer) loads of the dot's tiles.";
    info_.preconditions = {
        "the kernel calls tl.dot",
        "precision / cast: a lossy choice needs the task's rtol and atol (--task or --rtol/--atol), each at least "
        "4x its unit roundoff (tf32, fp16: 2^-11; bf16: 2^-8; bf16x3: 2^-16); precision applies to fp32 "
        "operands, so it is refused when the signature says they are 16-bit",
        "loads: the dot's operands are loaded in the K loop as tl.load(base + r[:, None] * s0 + c[None, :] * s1, "
        "mask=(r[:, None] < M) & (c[None, :] < K), other=0), with r and c built as start + tl.arange(0, TILE)",
        "loads=descriptor: the launcher passes the strides as x.stride(i) (it asserts contiguous, 16-byte "
        "aligned rows) and imports torch",
    };
    info_.params = {
        {"precision", PassParamKind::kChoice, "", false, 0, 0, false, {"tf32", "tf32x3", "ieee", "bf16x3", "bf16x6"},
         "the dot's input_precision"},
        {"cast", PassParamKind::kChoice, "", false, 0, 0, false, {"fp16", "bf16"}, "down-cast the dot's operands"},
        {"loads", PassParamKind::kChoice, "", false, 0, 0, false, {"descriptor", "block-pointer"},
         "load the operand tiles through TMA descriptors or block pointers"},
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    if (!args.has("precision") && !args.has("cast") && !args.has("loads")) {
      return refuse("tensor-cores needs precision=, cast= or loads=");
    }
    std::vector<const Node*> dots;
    walk(ctx.body(), [&](const Node& n) {
      if (ctx.isTlCall(n, "dot")) dots.push_back(&n);
      return true;
    });
    if (dots.empty()) return refuse(fmt::format("{} has no tl.dot", ctx.kernel->name));
    SourceEditor ed(ctx.text().text());
    PassOutcome out;
    std::string tl = ctx.tl();

    for (const char* key : {"precision", "cast"}) {
      if (!args.has(key)) continue;
      std::string what = args.text(key);
      if (auto why = toleranceGate(ctx, key, what)) return refuse(*why);
      std::set<std::string> types = operandTypes(ctx, dots);
      bool all16 = !types.empty() && std::all_of(types.begin(), types.end(), [](const std::string& t) {
        return t == "*fp16" || t == "*bf16" || t.rfind("*fp8", 0) == 0;
      });
      if (std::string(key) == "precision" && all16) {
        return refuse(fmt::format("the dot's operands are {}: input_precision only applies to fp32 operands",
                                  *types.begin()));
      }
      if (std::string(key) == "cast" && types.size() == 1 && *types.begin() == "*" + what) {
        return refuse(fmt::format("the dot's operands are {} already", what));
      }
      if (types.empty()) out.notes.push_back("the operand types are unknown (no signature): the change applies only "
                                             "if they are wider than the target");
    }
    if (args.has("precision")) {
      for (const Node* d : dots) {
        std::string value = fmt::format("\"{}\"", args.text("precision"));
        if (const Node* p = keywordArg(*d, "input_precision")) {
          ed.replace(ctx.range(*p), value);
        } else {
          if (keywordArg(*d, "allow_tf32")) removeKeyword(ctx, ed, *d, "allow_tf32");
          if (d->at("args").size() > 3) return refuse("a tl.dot passes input_precision positionally");
          ed.insert(ctx.range(*d).end - 1, ", input_precision=" + value);
        }
      }
    }
    if (args.has("cast")) {
      std::string dtype = tl + (args.text("cast") == "fp16" ? ".float16" : ".bfloat16");
      for (const Node* d : dots) {
        for (size_t i = 0; i < 2 && i < d->at("args").size(); ++i) {
          const Node& a = d->at("args")[i];
          ed.replace(ctx.range(a), fmt::format("{}.to({})", atomText(ctx, a, ctx.slice(a)), dtype));
        }
      }
    }
    if (args.has("loads")) {
      std::string why;
      if (!rewriteLoads(ctx, ed, dots, args.text("loads") == "descriptor", &out, &why)) return refuse(why);
    }
    out.applied = true;
    out.source = ed.apply();
    return out;
  }

 private:
  static std::optional<std::string> toleranceGate(const PassContext& ctx, const std::string& key, const std::string& what) {
    double u = unitRoundoff(what);
    if (u == 0) return std::nullopt;
    if (!ctx.rtol || !ctx.atol) {
      return fmt::format("{}={} rounds the dot's operands (unit roundoff {:.2g}); give the task's tolerances "
                         "(--task, or --rtol and --atol) to allow it",
                         key, what, u);
    }
    double need = 4 * u;
    if (*ctx.rtol < need || *ctx.atol < need) {
      return fmt::format("{}={} rounds the dot's operands (unit roundoff {:.2g}); the tolerances (rtol {:g}, atol {:g}) "
                         "need to be at least {:.2g}",
                         key, what, u, *ctx.rtol, *ctx.atol, need);
    }
    return std::nullopt;
  }

  // The signature types of the pointers the dots' operands are loaded from ({} if unknown).
  static std::set<std::string> operandTypes(const PassContext& ctx, const std::vector<const Node*>& dots) {
    std::set<std::string> out;
    if (ctx.signature.empty()) return out;
    std::set<std::string> names;
    for (const Node* d : dots) {
      for (size_t i = 0; i < 2 && i < d->at("args").size(); ++i) {
        forEachName(d->at("args")[i], [&](const Node& n) { names.insert(n["id"].get<std::string>()); });
      }
    }
    for (const auto& p : ctx.kernel->params) {
      auto sig = ctx.signature.find(p.name);
      if (sig == ctx.signature.end() || !sig->second.is_string()) continue;
      std::string type = sig->second.get<std::string>();
      if (type.rfind("*", 0) != 0) continue;
      std::set<std::string> d = ctx.derivedFrom(p.name);
      bool feeds = false;
      for (const auto& n : names) feeds = feeds || d.count(n);
      if (feeds) out.insert(type);
    }
    return out;
  }

  // --- tile loads -------------------------------------------------------------------------

  // Splits an Add tree into its terms.
  static void terms(const Node& e, std::vector<const Node*>* out) {
    if (isType(e, "BinOp") && isType(e["op"], "Add")) {
      terms(e["left"], out);
      terms(e["right"], out);
      return;
    }
    out->push_back(&e);
  }

  // `v[:, None]` -> (v, 0); `v[None, :]` -> (v, 1).
  static std::optional<std::pair<std::string, int>> broadcastIndex(const Node& e) {
    if (!isType(e, "Subscript") || !isType(e["value"], "Name") || !isType(e["slice"], "Tuple")) return std::nullopt;
    const Node& elts = e["slice"]["elts"];
    if (elts.size() != 2) return std::nullopt;
    auto none = [](const Node& x) { return isType(x, "Constant") && x["vt"] == "None"; };
    std::string v = e["value"]["id"].get<std::string>();
    if (isType(elts[0], "Slice") && none(elts[1])) return std::pair{v, 0};
    if (none(elts[0]) && isType(elts[1], "Slice")) return std::pair{v, 1};
    return std::nullopt;
  }

  // The last top-level assignment to `name` before byte `before` (kernel body or loop body).
  static const Node* definition(const PassContext& ctx, const std::string& name, size_t before) {
    const Node* found = nullptr;
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "Assign") && n["targets"].size() == 1 && isType(n["targets"][0], "Name") &&
          n["targets"][0]["id"] == name && ctx.range(n).end <= before) {
        found = &n;
      }
      return !isType(n, "FunctionDef") || &n == ctx.kernel->def;
    });
    return found;
  }

  // An index vector `start + tl.arange(0, T)` (or through one name bound to the arange).
  static bool indexVector(const PassContext& ctx, const std::string& v, size_t before, std::string* start,
                          std::string* tile) {
    const Node* def = definition(ctx, v, before);
    if (!def) return false;
    auto arange = [&](const Node& e, std::string* t) -> bool {
      if (ctx.isTlCall(e, "arange") && e["args"].size() == 2 && intLiteral(e["args"][0]) == 0) {
        *t = ctx.slice(e["args"][1]);
        return true;
      }
      if (isType(e, "Name")) {
        const Node* d = definition(ctx, e["id"].get<std::string>(), ctx.range(*def).begin);
        if (d && ctx.isTlCall(d->at("value"), "arange") && d->at("value")["args"].size() == 2 &&
            intLiteral(d->at("value")["args"][0]) == 0) {
          *t = ctx.slice(d->at("value")["args"][1]);
          return true;
        }
      }
      return false;
    };
    const Node& e = def->at("value");
    if (arange(e, tile)) {
      *start = "0";
      return true;
    }
    if (!isType(e, "BinOp") || !isType(e["op"], "Add")) return false;
    if (arange(e["right"], tile)) {
      *start = ctx.slice(e["left"]);
      return true;
    }
    if (arange(e["left"], tile)) {
      *start = ctx.slice(e["right"]);
      return true;
    }
    return false;
  }

  static bool parseTileLoad(const PassContext& ctx, const Node& stmt, TileLoad* t, std::string* why) {
    const Node& call = stmt["value"];
    t->stmt = &stmt;
    t->call = &call;
    int line = nodePos(stmt)->line;
    if (call["args"].size() != 1) {
      *why = fmt::format("line {}: the load passes mask / other positionally", line);
      return false;
    }
    for (const auto& kw : call["keywords"]) {
      std::string k = kw["arg"].is_string() ? kw["arg"].get<std::string>() : "**";
      if (k == "mask") continue;
      if (k == "other" && (intLiteral(kw["value"]) == 0 ||
                           (isType(kw["value"], "Constant") && kw["value"]["vt"] == "float" && kw["value"]["value"] == 0.0))) {
        continue;
      }
      *why = fmt::format("line {}: the load passes {}=... (descriptor loads pad with zeros and take no hints)", line, k);
      return false;
    }
    std::vector<const Node*> ts;
    terms(call["args"][0], &ts);
    if (ts.size() != 3) {
      *why = fmt::format("line {}: the load's pointer is not base + rows[:, None] * s0 + cols[None, :] * s1", line);
      return false;
    }
    bool dims_seen[2] = {false, false};
    for (const Node* term : ts) {
      if (isType(*term, "Name") && ctx.kernel->param((*term)["id"].get<std::string>())) {
        t->base = (*term)["id"].get<std::string>();
        continue;
      }
      const Node* idx = term;
      std::string stride = "1";
      if (isType(*term, "BinOp") && isType((*term)["op"], "Mult")) {
        const Node& l = (*term)["left"];
        const Node& r = (*term)["right"];
        if (broadcastIndex(l) && isType(r, "Name")) {
          idx = &l;
          stride = r["id"].get<std::string>();
        } else if (broadcastIndex(r) && isType(l, "Name")) {
          idx = &r;
          stride = l["id"].get<std::string>();
        }
      }
      auto bi = broadcastIndex(*idx);
      if (!bi || dims_seen[bi->second]) {
        *why = fmt::format("line {}: `{}` is not rows[:, None] * stride or cols[None, :] * stride", line, ctx.slice(*term));
        return false;
      }
      dims_seen[bi->second] = true;
      int d = bi->second;
      t->stride[d] = stride;
      if (!indexVector(ctx, bi->first, ctx.range(stmt).begin, &t->offset[d], &t->tile[d])) {
        *why = fmt::format("line {}: '{}' is not start + tl.arange(0, TILE)", line, bi->first);
        return false;
      }
    }
    if (t->base.empty() || !dims_seen[0] || !dims_seen[1]) {
      *why = fmt::format("line {}: the load's pointer is not base + rows[:, None] * s0 + cols[None, :] * s1", line);
      return false;
    }
    // Extents from the mask: (r[:, None] < M) & (c[None, :] < K), possibly through a name.
    const Node* mask = keywordArg(call, "mask");
    if (mask && isType(*mask, "Name")) {
      const Node* d = definition(ctx, (*mask)["id"].get<std::string>(), ctx.range(stmt).begin);
      mask = d ? &d->at("value") : nullptr;
    }
    if (!mask) {
      *why = fmt::format("line {}: the load has no mask giving the tensor's extent", line);
      return false;
    }
    std::vector<const Node*> cmps;
    std::function<void(const Node&)> conj = [&](const Node& e) {
      if (isType(e, "BinOp") && isType(e["op"], "BitAnd")) {
        conj(e["left"]);
        conj(e["right"]);
      } else {
        cmps.push_back(&e);
      }
    };
    conj(*mask);
    for (const Node* c : cmps) {
      if (!isType(*c, "Compare") || (*c)["ops"].size() != 1 || !isType((*c)["ops"][0], "Lt")) {
        *why = fmt::format("line {}: the mask term `{}` is not index < extent", line, ctx.slice(*c));
        return false;
      }
      auto bi = broadcastIndex((*c)["left"]);
      if (!bi) {
        *why = fmt::format("line {}: the mask term `{}` is not index < extent", line, ctx.slice(*c));
        return false;
      }
      t->extent[bi->second] = ctx.slice((*c)["comparators"][0]);
    }
    if (t->extent[0].empty() || t->extent[1].empty()) {
      *why = fmt::format("line {}: the mask does not bound both dimensions", line);
      return false;
    }
    return true;
  }

  static bool rewriteLoads(const PassContext& ctx, SourceEditor& ed, const std::vector<const Node*>& dots,
                           bool descriptor, PassOutcome* out, std::string* why) {
    const Node& body = ctx.body();
    const Node* loop = nullptr;
    for (const auto& s : body) {
      if (!isType(s, "For")) continue;
      bool has = false;
      walk(s, [&](const Node& n) {
        has = has || ctx.isTlCall(n, "dot");
        return !has;
      });
      if (has) loop = &s;
    }
    if (!loop) {
      *why = "no loop at the top of the kernel body holds the tl.dot";
      return false;
    }
    std::vector<TileLoad> loads;
    for (const Node* d : dots) {
      for (size_t i = 0; i < 2 && i < d->at("args").size(); ++i) {
        const Node& a = d->at("args")[i];
        if (!isType(a, "Name")) {
          *why = fmt::format("the dot operand `{}` is not a name bound to a tl.load", ctx.slice(a));
          return false;
        }
        const Node* def = nullptr;
        for (const auto& s : (*loop)["body"]) {
          if (isType(s, "Assign") && s["targets"].size() == 1 && isType(s["targets"][0], "Name") &&
              s["targets"][0]["id"] == a["id"] && ctx.range(s).end <= ctx.range(*d).begin) {
            def = &s;
          }
        }
        if (!def || !ctx.isTlCall(def->at("value"), "load")) {
          *why = fmt::format("the dot operand '{}' is not loaded with tl.load in the K loop", a["id"].get<std::string>());
          return false;
        }
        TileLoad t;
        if (!parseTileLoad(ctx, *def, &t, why)) return false;
        loads.push_back(t);
      }
    }
    std::string tl = ctx.tl();
    std::vector<std::string> before;
    std::map<std::string, std::string> desc_of;  // base -> descriptor name
    for (const auto& t : loads) {
      std::string load_text;
      if (descriptor) {
        if (!desc_of.count(t.base)) {
          std::string base = t.base;
          if (base.size() > 4 && base.compare(base.size() - 4, 4, "_ptr") == 0) base = base.substr(0, base.size() - 4);
          std::string name = ctx.freshName(base + "_desc");
          desc_of[t.base] = name;
          // TMA reads rows that are contiguous: the last stride is 1 (the launcher asserts it).
          std::string head = name + " = " + tl + ".make_tensor_descriptor";
          before.push_back(wrapCall(head,
                                    {t.base, fmt::format("shape=[{}, {}]", t.extent[0], t.extent[1]),
                                     fmt::format("strides=[{}, 1]", t.stride[0]),
                                     fmt::format("block_shape=[{}, {}]", t.tile[0], t.tile[1])},
                                    ctx.bodyIndent().size()));
        }
        load_text = fmt::format("{}.load([{}, {}])", desc_of[t.base], t.offset[0], t.offset[1]);
      } else {
        size_t col = static_cast<size_t>(nodePos(*t.call)->col);
        std::string load_head = tl + ".load";
        std::string ptr = wrapCall(tl + ".make_block_ptr",
                                   {t.base, fmt::format("shape=({}, {})", t.extent[0], t.extent[1]),
                                    fmt::format("strides=({}, {})", t.stride[0], t.stride[1]),
                                    fmt::format("offsets=({}, {})", t.offset[0], t.offset[1]),
                                    fmt::format("block_shape=({}, {})", t.tile[0], t.tile[1]), "order=(1, 0)"},
                                   col + load_head.size() + 1);
        load_text = wrapCall(load_head, {ptr, "boundary_check=(0, 1)", "padding_option=\"zero\""}, col);
      }
      ed.replace(ctx.range(*t.call), load_text);
    }
    std::vector<Range> replaced;
    for (const auto& t : loads) replaced.push_back(ctx.range(*t.call));
    removeDeadIndices(ctx, ed, *loop, replaced);
    if (!descriptor) return true;
    std::vector<std::string> lines = {"# tensor-cores: the dot's tiles come through TMA tensor descriptors"};
    lines.insert(lines.end(), before.begin(), before.end());
    auto lp = nodePos(*loop);
    ed.insert(ctx.text().offset(lp->line, 0), joinLines(lines, ctx.bodyIndent()));
    return launcherForDescriptors(ctx, ed, loads, out, why);
  }

  // Index vectors only the replaced loads read (k = k0 + ks) are removed, to a fixpoint.
  static void removeDeadIndices(const PassContext& ctx, SourceEditor& ed, const Node& loop, const std::vector<Range>& replaced) {
    std::vector<const Node*> candidates;
    auto consider = [&](const Node& list) {
      for (const auto& s : list) {
        if (isType(s, "Assign") && s["targets"].size() == 1 && isType(s["targets"][0], "Name")) candidates.push_back(&s);
      }
    };
    consider(ctx.body());
    consider(loop["body"]);
    std::set<const Node*> dead;
    auto inside = [&](const Range& r, const std::vector<Range>& in) {
      for (const auto& x : in) {
        if (x.begin <= r.begin && r.end <= x.end) return true;
      }
      return false;
    };
    bool changed = true;
    while (changed) {
      changed = false;
      std::vector<Range> gone = replaced;
      for (const Node* d : dead) gone.push_back(ctx.range(*d));
      for (const Node* s : candidates) {
        if (dead.count(s)) continue;
        std::string name = (*s)["targets"][0]["id"].get<std::string>();
        int live = 0, stores = 0;
        walk(ctx.body(), [&](const Node& n) {
          if (isType(n, "Name") && n["id"] == name) {
            if (n["ctx"] == "Store") ++stores;
            else if (!inside(ctx.range(n), gone)) ++live;
          }
          return true;
        });
        bool pure = true;
        walk((*s)["value"], [&](const Node& n) {
          if (isType(n, "Call") && !ctx.isTlCall(n, "arange")) {
            // only index arithmetic is removed
            pure = false;
          }
          return true;
        });
        if (live == 0 && stores == 1 && pure) {
          dead.insert(s);
          changed = true;
        }
      }
    }
    for (const Node* s : dead) ed.replace(ctx.lineRange(*s), "");
  }

  // The launcher asserts what TMA needs and sets the allocator for in-kernel descriptors.
  static bool launcherForDescriptors(const PassContext& ctx, SourceEditor& ed, const std::vector<TileLoad>& loads,
                                     PassOutcome* out, std::string* why) {
    std::string torch;
    for (const auto& [local, full] : ctx.ir->aliases) {
      if (full == "torch") torch = local;
    }
    if (torch.empty()) {
      *why = "the module does not import torch (the descriptors' scratch allocator uses it)";
      return false;
    }
    if (ctx.sites.empty()) {
      *why = fmt::format("no launch of {} in this file", ctx.kernel->name);
      return false;
    }
    std::string scratch = "_tma_scratch";
    for (int i = 2; ctx.ir->functions.count(scratch) || ctx.ir->module_assignments.count(scratch); ++i) {
      scratch = fmt::format("_tma_scratch_{}", i);
    }
    // The allocator, defined above the kernel.
    const Node& first_dec = ctx.kernel->def->at("decorator_list")[0];
    int dline = nodePos(first_dec)->line;
    ed.insert(ctx.text().offset(dline, 0),
              fmt::format("def {}(size, alignment, stream):\n"
                          "    # scratch memory for the tensor descriptors the kernel makes (TMA)\n"
                          "    return {}.empty(size, device=\"cuda\", dtype={}.int8)\n\n\n",
                          scratch, torch, torch));
    std::set<std::string> fn_done;
    for (const LaunchSite* site : ctx.sites) {
      if (site->function.empty()) {
        *why = "the kernel is launched at module level";
        return false;
      }
      if (!fn_done.insert(site->function).second) continue;
      std::vector<std::string> checks;
      std::set<std::string> seen;
      for (const auto& t : loads) {
        if (!seen.insert(t.base).second) continue;
        const Node* base = launchArg(*site, t.base);
        const Node* s0 = ctx.kernel->param(t.stride[0]) ? launchArg(*site, t.stride[0]) : nullptr;
        const Node* s1 = ctx.kernel->param(t.stride[1]) ? launchArg(*site, t.stride[1]) : nullptr;
        if (!base || (t.stride[1] != "1" && !s1) || !s0) {
          *why = fmt::format("a launch does not pass {} and its strides", t.base);
          return false;
        }
        std::string x = ctx.slice(*base);
        std::string want0 = x + ".stride(";
        std::string t0 = ctx.slice(*s0), t1 = s1 ? ctx.slice(*s1) : "1";
        if (t0.rfind(want0, 0) != 0 || (s1 && t1.rfind(want0, 0) != 0)) {
          *why = fmt::format("the strides of {} are passed as `{}`, `{}`, not {}.stride(i): the launch cannot check "
                             "that its rows are contiguous and 16-byte aligned",
                             t.base, t0, t1, x);
          return false;
        }
        std::string c = s1 ? fmt::format("{} == 1 and ", t1) : "";
        checks.push_back(fmt::format("assert {}{} * {}.element_size() % 16 == 0 and {}.data_ptr() % 16 == 0", c, t0, x, x));
      }
      int line = nodePos(*site->call)->line;
      std::string gwhy;
      if (auto g = gridOf(ctx, *site, &gwhy); g && g->assign_stmt) line = std::min(line, nodePos(*g->assign_stmt)->line);
      std::string indent = ctx.text().indentOf(line);
      std::string text = indent + "# TMA descriptors need contiguous rows, 16-byte aligned\n";
      for (const auto& c : checks) text += indent + c + "\n";
      text += fmt::format("{}{}.set_allocator({})\n", indent, ctx.triton(), scratch);
      ed.insert(ctx.text().offset(line, 0), text);
    }
    out->notes.push_back("descriptor loads: the launcher asserts contiguous, 16-byte aligned rows (an fp16 K must be a "
                         "multiple of 8)");
    return true;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeTensorCoresPass() { return std::make_unique<TensorCoresPass>(); }

}  // namespace tf
