// split-k: SPLIT_K programs share each output tile along K, for matmuls whose K is long
// and whose M x N has too few tiles to fill the GPU.
//
// Kernel: a new grid axis gives pid_k; the K loop starts at pid_k's share and steps
// SPLIT_K times as far (pointers advanced in the loop get the matching start offset and
// stride). The epilogue must be linear in the accumulator (acc, acc.to(dtype); mode=atomic also
// acc scaled by values that do not depend on it), since each program now holds a partial sum.
// Then:
//   mode=atomic     the store becomes tl.atomic_add into an output the launcher zeroes first
//                   (partial sums rounded to the output type; order not deterministic)
//   mode=two-stage  each program stores its fp32 partial tile into a workspace
//                   [SPLIT_K, M, N]; the launcher sums it into the output (deterministic)
// Launcher: `split_k = S` before the grid, a third grid axis, SPLIT_K=split_k at the launch.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <set>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class SplitKPass : public Pass {
 public:
  SplitKPass() {
    info_.name = "split-k";
    info_.summary = "Split the K loop of a matmul over SPLIT_K programs per output tile (atomic or two-stage "
                    "reduction), for long K and few output tiles.";
    info_.preconditions = {
        "one loop at the top of the kernel body accumulates tl.dot into one variable (acc += E, acc = acc + E "
        "with E holding the dot and not reading acc, e.g. a per-block scaled dot, or acc = tl.dot(a, b, acc)) and "
        "writes it nowhere else",
        "the loop is range(start, end, step) with a step of the K tile (its variable is the K offset), or a "
        "counted range(n) whose steps advance pointers by the K tile (p += BLOCK_K * stride, p = p + ...) or "
        "compute their offsets from the step's index; it carries nothing else from step to step",
        "after the loop, one tl.store writes acc or acc.to(dtype), directly or through one variable; mode=atomic "
        "also takes copies of acc scaled by values that do not depend on it (acc * scale, acc / l[:, None]): the "
        "epilogue is linear in the accumulator",
        "the grid has fewer than 3 axes and the kernel does not use the next program-id axis",
        "atomic: the store takes only a mask; two-stage: the output's strides are passed as out.stride(i) and "
        "the launch is a statement of its own",
    };
    info_.params = {
        {"split", PassParamKind::kInt, "4", false, 2, 256, false, {}, "programs per output tile along K (SPLIT_K)"},
        {"mode", PassParamKind::kChoice, "atomic", false, 0, 0, false, {"atomic", "two-stage"}, "how partial sums meet"},
        {"out", PassParamKind::kNames, "", false, 0, 0, false, {}, "the output pointer parameter (default: inferred)"},
    };
    for (auto& p : info_.params) {
      if (p.name == "split") p.search = {"2", "4", "8", "16"};
    }
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const Kernel& k = *ctx.kernel;
    const Node& body = ctx.body();
    std::string tl = ctx.tl();
    std::string u = ctx.indentUnit();
    bool atomic = args.text("mode") == "atomic";

    // The K loop: the top-level loop that holds the dot.
    const Node* loop = nullptr;
    for (const auto& s : body) {
      if (!isType(s, "For")) continue;
      bool has_dot = false;
      walk(s, [&](const Node& n) {
        if (ctx.isTlCall(n, "dot")) has_dot = true;
        return !has_dot;
      });
      if (!has_dot) continue;
      if (loop) return refuse("two loops at the top of the kernel body hold a tl.dot");
      loop = &s;
    }
    if (!loop) return refuse(fmt::format("{} has no loop with a tl.dot at the top of its body", k.name));
    std::string ktile;
    for (const auto& [p, use] : ctx.facts.params) {
      if (use.dot_role == "k") ktile = p;
    }
    if (ktile.empty()) return refuse("the dot's K tile is not a constexpr parameter");
    const Node& iter = (*loop)["iter"];
    std::string rf = isType(iter, "Call") ? dottedName(iter["func"]) : "";
    bool is_range = rf == "range" || ctx.isTlCall(iter, "range");
    if (!is_range || !isType((*loop)["target"], "Name") || !(*loop)["orelse"].empty()) {
      return refuse("the K loop is not `for k in range(...)`");
    }
    for (const auto& kw : iter["keywords"]) {
      if (kw["arg"].is_string() && kw["arg"] == "step") return refuse("the K loop passes step= by keyword");
    }
    const Node& rargs = iter["args"];
    if (rargs.empty() || rargs.size() > 3) return refuse("the K loop's range has no bounds");

    // The accumulator: one variable the loop adds a tl.dot's contribution to, and writes
    // nowhere else (a rescale inside the loop would make the sum over K something else).
    std::string acc;
    int acc_updates = 0;
    bool several = false;
    walk((*loop)["body"], [&](const Node& n) {
      std::string t = accumulation(ctx, n);
      if (t.empty()) return true;
      if (!acc.empty() && t != acc) several = true;
      acc = t;
      ++acc_updates;
      return true;
    });
    if (several) return refuse("the K loop accumulates tl.dot into more than one variable");
    if (acc.empty()) {
      return refuse("no accumulator: the loop does not do acc += tl.dot(...), acc = acc + tl.dot(...) or "
                    "acc = tl.dot(a, b, acc)");
    }
    int acc_writes = 0;
    walk((*loop)["body"], [&](const Node& n) {
      if (isType(n, "Name") && n["id"] == acc && n["ctx"] == "Store") ++acc_writes;
      return true;
    });
    if (acc_writes != acc_updates) {
      return refuse(fmt::format("the K loop writes '{}' otherwise than by adding a tl.dot: it is not a sum over K", acc));
    }

    // The store after the loop, and that its value is linear in acc. atomic: any chain of
    // copies, casts and scalings by values that do not depend on acc (each program's partial
    // sum is scaled, then the partials add up); two-stage: the fp32 partial itself goes to the
    // workspace, so only acc or one cast copy of it.
    int loop_index = ctx.bodyIndex(loop);
    const Node* store = nullptr;
    const Node* cast_stmt = nullptr;  // `c = acc.to(...)`
    std::string cast_var;
    std::set<std::string> linear = {acc};
    for (size_t i = static_cast<size_t>(loop_index) + 1; i < body.size(); ++i) {
      const Node& s = body[i];
      if (isType(s, "Expr") && ctx.isTlCall(s["value"], "store")) {
        if (store) return refuse("more than one tl.store after the K loop");
        store = &s["value"];
        continue;
      }
      bool store_inside = false;
      walk(s, [&](const Node& n) {
        if (ctx.isTlCall(n, "store") || ctx.tlFunction(n).rfind("atomic_", 0) == 0) store_inside = true;
        return true;
      });
      if (store_inside) return refuse("a store after the K loop is nested or not a plain tl.store statement");
      if (!atomic && isType(s, "Assign") && s["targets"].size() == 1 && isType(s["targets"][0], "Name") &&
          isLinearIn(ctx, s["value"], acc) && s["targets"][0]["id"] != acc) {
        if (cast_stmt) return refuse("the accumulator is copied more than once after the loop");
        cast_stmt = &s;
        cast_var = s["targets"][0]["id"].get<std::string>();
        continue;
      }
      if (atomic) {
        const Node* bad = nullptr;
        if (!linearEpilogue(ctx, s, &linear, &bad)) {
          return refuse(fmt::format("the epilogue `{}` uses the accumulator: with split-k it would act on partial "
                                    "sums",
                                    firstLine(ctx.slice(*bad))));
        }
        continue;
      }
      if (mentionsAny(s, linear)) {
        return refuse(fmt::format("the epilogue `{}` uses the accumulator: with split-k it would act on partial sums",
                                  firstLine(ctx.slice(s))));
      }
    }
    if (!store) return refuse("no tl.store after the K loop");
    const Node* value = store->at("args").size() > 1 ? &store->at("args")[1] : keywordArg(*store, "value");
    const Node* ptr = !store->at("args").empty() ? &store->at("args")[0] : keywordArg(*store, "pointer");
    if (!value || !ptr) return refuse("the tl.store has no pointer or value");
    bool value_ok = atomic ? scaledIn(ctx, *value, linear)
                           : isLinearIn(ctx, *value, acc) || (isType(*value, "Name") && (*value)["id"] == cast_var);
    if (!value_ok) {
      return refuse(fmt::format("the stored value `{}` is not the accumulator {}: with split-k it would act on "
                                "partial sums",
                                ctx.slice(*value), atomic ? "cast or scaled" : "or acc.to(dtype)"));
    }
    if (cast_stmt && !(isType(*value, "Name") && (*value)["id"] == cast_var)) {
      return refuse("the accumulator's copy after the loop is not what is stored");
    }

    // The grid: one more axis.
    int dims = -1;
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k.name));
    for (const LaunchSite* site : ctx.sites) {
      std::string why;
      auto g = gridOf(ctx, *site, &why);
      if (!g) return refuse(why);
      int d = static_cast<int>(g->axes.size());
      if (dims >= 0 && d != dims) return refuse("the launches' grids have different numbers of axes");
      dims = d;
      if (std::string why; hidesArguments(*ctx.ir, *site, k, &why)) return refuse(why);
      if (site->function.empty()) return refuse(fmt::format("{} is launched at module level", k.name));
    }
    if (dims >= 3) return refuse("the grid has 3 axes already");
    for (const auto& pv : ctx.pidVars()) {
      if (pv.axis == dims) return refuse(fmt::format("the kernel already uses tl.program_id({})", dims));
    }
    bool axis_used = false;
    walk(body, [&](const Node& n) {
      if (ctx.isTlCall(n, "program_id") || ctx.isTlCall(n, "num_programs")) {
        const Node* a = n["args"].empty() ? keywordArg(n, "axis") : &n["args"][0];
        if (a && intLiteral(*a) && *intLiteral(*a) == dims) axis_used = true;
      }
      return true;
    });
    if (axis_used) return refuse(fmt::format("the kernel already uses program-id axis {}", dims));

    // The output parameter.
    std::string out_param;
    if (args.has("out")) {
      out_param = args.names("out")[0];
      const Param* p = k.param(out_param);
      if (!p || p->is_constexpr) return refuse(fmt::format("'{}' is not a runtime parameter of {}", out_param, k.name));
    } else {
      out_param = outputParam(ctx, *ptr);
      if (out_param.empty()) return refuse("cannot tell which parameter is the output pointer; give out=PARAM");
    }

    SourceEditor ed(ctx.text().text());
    std::string split = ctx.freshName("SPLIT_K");
    std::string pid_k = ctx.freshName("pid_k");
    addKernelParam(ctx, ed, split, ctx.constexprAnnotation());
    std::string indent = ctx.bodyIndent();
    std::vector<std::string> before = {
        fmt::format("# split-k: {} programs share this output tile along K; this one takes every {}-th step",
                    split, split),
        fmt::format("{} = {}.program_id({})", pid_k, tl, dims)};

    // The loop bounds.
    std::string var = (*loop)["target"]["id"].get<std::string>();
    std::string range_text = ctx.slice(iter["func"]);
    std::vector<std::string> rt;
    for (const auto& a : rargs) rt.push_back(ctx.slice(a));
    bool stepped = rargs.size() == 3 && mentionsName(rargs[2], ktile);
    bool counted = rargs.size() == 1 || (rargs.size() == 2) || (rargs.size() == 3 && intLiteral(rargs[2]) == 1);
    // Pointers advanced by the K tile each step: `p += BLOCK_K * s` or `p = p + BLOCK_K * s`.
    struct Advance {
      const Node* target;
      const Node* step;
    };
    std::vector<Advance> advances;
    walk((*loop)["body"], [&](const Node& n) {
      if (isType(n, "AugAssign") && isType(n["op"], "Add") && isType(n["target"], "Name") && mentionsName(n["value"], ktile)) {
        advances.push_back({&n["target"], &n["value"]});
      }
      if (isType(n, "Assign") && n["targets"].size() == 1 && isType(n["targets"][0], "Name") &&
          isType(n["value"], "BinOp") && isType(n["value"]["op"], "Add") && isType(n["value"]["left"], "Name") &&
          n["value"]["left"]["id"] == n["targets"][0]["id"] && mentionsName(n["value"]["right"], ktile)) {
        advances.push_back({&n["targets"][0], &n["value"]["right"]});
      }
      return true;
    });
    // Every other value the loop carries from one step to the next would see only this
    // program's steps: none but the accumulator and the advanced pointers may.
    std::set<std::string> before_loop;
    for (const auto& p : k.params) before_loop.insert(p.name);
    for (int i = 0; i < loop_index; ++i) {
      walk(body[static_cast<size_t>(i)], [&](const Node& n) {
        if (isType(n, "Name") && n["ctx"] == "Store") before_loop.insert(n["id"].get<std::string>());
        return true;
      });
    }
    std::set<std::string> carried_ok = {acc};
    for (const auto& a : advances) carried_ok.insert((*a.target)["id"].get<std::string>());
    std::string carried = carriedValue((*loop)["body"], before_loop, carried_ok);
    if (!carried.empty()) {
      return refuse(fmt::format("the K loop carries '{}' from step to step besides the accumulator and pointers "
                                "advanced by the K tile",
                                carried));
    }
    bool var_used = mentionsName((*loop)["body"], var);
    std::string new_range;
    if (stepped) {
      std::string start = rt[0] == "0" ? fmt::format("{} * {}", pid_k, atomText(ctx, rargs[2], rt[2]))
                                       : fmt::format("{} + {} * {}", rt[0], pid_k, atomText(ctx, rargs[2], rt[2]));
      new_range = fmt::format("{}({}, {}, {} * {})", range_text, start, rt[1], atomText(ctx, rargs[2], rt[2]), split);
    } else if (counted && (!advances.empty() || var_used)) {
      // A counted loop: pointers advanced by the K tile, or offsets computed from the step's
      // index (offs_k = k * BLOCK_K + ...); either way the program takes every SPLIT_K-th step.
      std::string start = rargs.size() == 1 || rt[0] == "0" ? pid_k : fmt::format("{} + {}", rt[0], pid_k);
      std::string end = rargs.size() == 1 ? rt[0] : rt[1];
      new_range = fmt::format("{}({}, {}, {})", range_text, start, end, split);
    } else {
      return refuse("the K loop neither steps by the K tile (range(0, K, BLOCK_K)), nor advances pointers by it, "
                    "nor reads its step's index");
    }
    if (!iter["keywords"].empty()) {
      // tl.range(..., num_stages=3): keep the keywords.
      std::string kws;
      for (const auto& kw : iter["keywords"]) kws += ", " + ctx.slice(kw);
      new_range.insert(new_range.size() - 1, kws);
    }
    ed.replace(ctx.range(iter), new_range);
    for (const Advance& a : advances) {
      std::string v = ctx.slice(*a.step);
      bool product = isType(*a.step, "BinOp") && isType((*a.step)["op"], "Mult");
      std::string atom = product ? v : atomText(ctx, *a.step, v);
      ed.replace(ctx.range(*a.step), fmt::format("{} * {}", split, atom));
      before.push_back(fmt::format("{} += {} * {}", ctx.slice(*a.target), pid_k, atom));
    }
    auto lp = nodePos(*loop);
    ed.insert(ctx.text().offset(lp->line, 0), joinLines(before, indent));

    PassOutcome out;
    std::string stride;  // two-stage: the kernel parameter for the workspace's split stride
    if (atomic) {
      for (const auto& kw : store->at("keywords")) {
        if (!kw["arg"].is_string() || kw["arg"] != "mask") {
          return refuse(fmt::format("the store passes {}=...; tl.atomic_add takes only a mask",
                                    kw["arg"].is_string() ? kw["arg"].get<std::string>() : "**"));
        }
      }
      if (store->at("args").size() > 3) return refuse("the store passes more than a mask positionally");
      ed.replace(ctx.range(store->at("func")), tl + ".atomic_add");
      // Continuation lines aligned under `tl.store(` stay aligned under `tl.atomic_add(`.
      auto sp = nodePos(*store);
      size_t grow = (tl + ".atomic_add").size() - ctx.slice(store->at("func")).size();
      if (sp->end_line > sp->line) ed.indent(ctx.lineRange(sp->line + 1, sp->end_line), std::string(grow, ' '));
      size_t close = ctx.range(*store).end - 1;  // the ')'
      ed.insert(close, ", sem=\"relaxed\"");
    } else {
      // The fp32 partial tile goes to this program's slice of the workspace.
      stride = ctx.freshName("stride_split");
      ed.replace(ctx.range(*ptr), fmt::format("{} + {} * {}", ctx.slice(*ptr), pid_k, stride));
      ed.replace(ctx.range(*value), acc);
      if (cast_stmt) {
        int uses = 0;
        walk(body, [&](const Node& n) {
          if (isType(n, "Name") && n["id"] == cast_var && n["ctx"] == "Load") ++uses;
          return true;
        });
        if (uses != 1) return refuse(fmt::format("'{}' is used beyond the store", cast_var));
        ed.replace(ctx.lineRange(*cast_stmt), "");
      }
      addKernelParam(ctx, ed, stride, "");
      out.param_types[stride] = "i32";
      out.param_types[out_param] = "*fp32";
    }

    // Launchers.
    std::map<std::string, std::string> ws_of;  // function -> its workspace variable
    std::set<std::string> fn_done;
    std::set<const Node*> grids_done;
    for (const LaunchSite* site : ctx.sites) {
      std::string why;
      auto g = gridOf(ctx, *site, &why);
      const FunctionInfo& fn = ctx.ir->functions.at(site->function);
      std::string sk = "split_k";
      for (int i = 2; fn.assignments.count(sk); ++i) sk = fmt::format("split_k_{}", i);
      const Node* anchor = g->assign_stmt ? g->assign_stmt : site->call;
      int anchor_line = nodePos(*anchor)->line;
      std::string lindent = ctx.text().indentOf(anchor_line);
      const Node* out_arg = launchArg(*site, out_param);
      if (!out_arg) return refuse(fmt::format("a launch does not pass {}", out_param));
      std::string out_text = ctx.slice(*out_arg);
      if (fn_done.insert(site->function).second) {
        std::string lines = fmt::format("{}{} = {}\n", lindent, sk, args.text("split"));
        if (!atomic) {
          std::string wsv = "workspace";
          for (int i = 2; fn.assignments.count(wsv); ++i) wsv = fmt::format("workspace_{}", i);
          lines += fmt::format("{}{} = {}.new_empty(({}, *{}.shape), dtype={}.float32)\n", lindent, wsv, out_text, sk,
                               out_text,
                               torchAlias(ctx).empty() ? "torch" : torchAlias(ctx));
          ws_of[site->function] = wsv;
        }
        ed.insert(ctx.text().offset(anchor_line, 0), lines);
      }
      if (grids_done.insert(g->expr).second) {
        std::vector<std::string> axes;
        for (const Node* a : g->axes) axes.push_back(ctx.slice(*a));
        axes.push_back(sk);
        ed.replace(ctx.range(*g->expr), gridTextFor(*g, axes, g->lambda_arg));
      }
      addLaunchKeyword(ctx, ed, *site, split, sk);
      if (atomic) {
        if (!zeroOutput(ctx, ed, *site, fn, *out_arg, &out.notes)) {
          return refuse(fmt::format("cannot zero the output '{}' before the launch", out_text));
        }
      } else if (!twoStageLaunch(ctx, ed, *site, *ptr, out_param, out_text, ws_of.at(site->function), stride, &why)) {
        return refuse(why);
      }
    }
    out.applied = true;
    out.source = ed.apply();
    if (atomic) {
      out.notes.push_back("atomic: partial sums are added in the output's type, in no fixed order");
    }
    return out;
  }

 private:
  static std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

  // `acc`, or `acc.to(...)`.
  // `acc += E` / `acc = acc + E` (E holds a tl.dot and does not read acc) or
  // `acc = tl.dot(a, b, acc)`: the accumulator's name, else "".
  static std::string accumulation(const PassContext& ctx, const Node& n) {
    auto holdsDot = [&](const Node& e) {
      bool dot = false;
      walk(e, [&](const Node& x) {
        if (ctx.isTlCall(x, "dot")) dot = true;
        return !dot;
      });
      return dot;
    };
    auto addsDot = [&](const Node& e, const std::string& t) { return holdsDot(e) && !mentionsName(e, t); };
    if (isType(n, "AugAssign") && isType(n["op"], "Add") && isType(n["target"], "Name")) {
      std::string t = n["target"]["id"].get<std::string>();
      return addsDot(n["value"], t) ? t : "";
    }
    if (!isType(n, "Assign") || n["targets"].size() != 1 || !isType(n["targets"][0], "Name")) return "";
    std::string t = n["targets"][0]["id"].get<std::string>();
    const Node& v = n["value"];
    if (ctx.isTlCall(v, "dot")) {
      const Node* a3 = v["args"].size() > 2 ? &v["args"][2] : keywordArg(v, "acc");
      bool into = a3 && isType(*a3, "Name") && (*a3)["id"] == t;
      bool rest_free = true;
      for (size_t i = 0; i < v["args"].size() && i < 2; ++i) rest_free = rest_free && !mentionsName(v["args"][i], t);
      return into && rest_free ? t : "";
    }
    if (isType(v, "BinOp") && isType(v["op"], "Add")) {
      auto is_t = [&](const Node& e) { return isType(e, "Name") && e["id"] == t; };
      if (is_t(v["left"]) && addsDot(v["right"], t)) return t;
      if (is_t(v["right"]) && addsDot(v["left"], t)) return t;
    }
    return "";
  }

  // A name bound before the loop that a step reads before the step assigns it (then it holds
  // the previous step's value), other than those in `ok`; "" when none. Only an assignment at
  // the top of the loop's body counts as made (one under an `if` may not happen).
  static std::string carriedValue(const Node& loop_body, const std::set<std::string>& before_loop,
                                  const std::set<std::string>& ok) {
    std::set<std::string> stored_in_loop, assigned;
    walk(loop_body, [&](const Node& n) {
      if (isType(n, "Name") && n["ctx"] == "Store") stored_in_loop.insert(n["id"].get<std::string>());
      return true;
    });
    std::string carried;
    auto readName = [&](const std::string& id) {
      if (carried.empty() && stored_in_loop.count(id) && before_loop.count(id) && !ok.count(id) &&
          !assigned.count(id)) {
        carried = id;
      }
    };
    auto read = [&](const Node& e) {
      forEachName(e, [&](const Node& n) {
        if (n["ctx"] != "Store") readName(n["id"].get<std::string>());
      });
    };
    auto assign = [&](const Node& target, bool top) {
      forEachName(target, [&](const Node& n) {
        if (top && n["ctx"] == "Store") assigned.insert(n["id"].get<std::string>());
      });
    };
    std::function<void(const Node&, bool)> visit = [&](const Node& st, bool top) {
      if (isType(st, "Assign")) {
        read(st["value"]);
        for (const auto& t : st["targets"]) assign(t, top);
      } else if (isType(st, "AugAssign") || isType(st, "AnnAssign")) {
        if (isType(st, "AugAssign") && isType(st["target"], "Name")) readName(st["target"]["id"].get<std::string>());
        if (isType(st, "AugAssign")) read(st["target"]);
        if (st["value"].is_object()) read(st["value"]);
        assign(st["target"], top);
      } else if (isType(st, "If") || isType(st, "While") || isType(st, "For")) {
        read(isType(st, "For") ? st["iter"] : st["test"]);
        for (const auto& b : st["body"]) visit(b, false);
        for (const auto& b : st["orelse"]) visit(b, false);
      } else {
        read(st);
      }
    };
    for (const auto& st : loop_body) visit(st, true);
    return carried;
  }

  // mode=atomic's epilogue statement `st` (not a store) keeps every value that depends on the
  // accumulator linear in it: `x = <scaled>` makes x linear, `x *= v` / `x /= v` keep it, any
  // other assignment of x makes it something else; an `if` whose test does not read them
  // leaves linear what every branch leaves linear. False, with the statement at fault, when a
  // statement reads a linear value otherwise.
  static bool linearEpilogue(const PassContext& ctx, const Node& st, std::set<std::string>* linear, const Node** bad) {
    if (isType(st, "Assign") && st["targets"].size() == 1 && isType(st["targets"][0], "Name")) {
      std::string t = st["targets"][0]["id"].get<std::string>();
      if (scaledIn(ctx, st["value"], *linear)) {
        linear->insert(t);
        return true;
      }
      if (!mentionsAny(st["value"], *linear)) {
        linear->erase(t);
        return true;
      }
    } else if (isType(st, "AugAssign") && isType(st["target"], "Name") && !mentionsAny(st["value"], *linear)) {
      if (!linear->count(st["target"]["id"].get<std::string>())) return true;
      if (isType(st["op"], "Mult") || isType(st["op"], "Div")) return true;
    } else if (isType(st, "If") && !mentionsAny(st["test"], *linear)) {
      std::set<std::string> then_linear = *linear, else_linear = *linear;
      for (const auto& b : st["body"]) {
        if (!linearEpilogue(ctx, b, &then_linear, bad)) return false;
      }
      for (const auto& b : st["orelse"]) {
        if (!linearEpilogue(ctx, b, &else_linear, bad)) return false;
      }
      linear->clear();
      std::set_intersection(then_linear.begin(), then_linear.end(), else_linear.begin(), else_linear.end(),
                            std::inserter(*linear, linear->begin()));
      return true;
    } else if (!mentionsAny(st, *linear)) {
      // Another statement (an offset, a mask) that assigns no linear name.
      bool assigns = false;
      walk(st, [&](const Node& n) {
        if (isType(n, "Name") && n["ctx"] == "Store" && linear->count(n["id"].get<std::string>())) assigns = true;
        return true;
      });
      if (!assigns) return true;
    }
    *bad = &st;
    return false;
  }

  static bool mentionsAny(const Node& e, const std::set<std::string>& names) {
    bool found = false;
    forEachName(e, [&](const Node& n) {
      if (names.count(n["id"].get<std::string>())) found = true;
    });
    return found;
  }

  // Linear in the accumulator: one of `names` (acc and its copies), cast with .to(...),
  // multiplied or divided by values that do not depend on it, negated.
  static bool scaledIn(const PassContext& ctx, const Node& e, const std::set<std::string>& names) {
    if (isType(e, "Name")) return names.count(e["id"].get<std::string>()) > 0;
    // tl.where(mask, x, 0): each element is x's or zero, so the partial sums add up to it.
    if (ctx.isTlCall(e, "where") && e["args"].size() == 3 && e["keywords"].empty()) {
      const Node& zero = e["args"][2];
      bool is_zero = isType(zero, "Constant") && zero["value"].is_number() && zero["value"].get<double>() == 0.0;
      return is_zero && !mentionsAny(e["args"][0], names) && scaledIn(ctx, e["args"][1], names);
    }
    if (isType(e, "Call") && isType(e["func"], "Attribute") && e["func"]["attr"] == "to") {
      for (const auto& a : e["args"]) {
        if (mentionsAny(a, names)) return false;
      }
      return scaledIn(ctx, e["func"]["value"], names);
    }
    if (isType(e, "UnaryOp") && isType(e["op"], "USub")) return scaledIn(ctx, e["operand"], names);
    if (isType(e, "BinOp") && isType(e["op"], "Mult")) {
      return (scaledIn(ctx, e["left"], names) && !mentionsAny(e["right"], names)) ||
             (scaledIn(ctx, e["right"], names) && !mentionsAny(e["left"], names));
    }
    if (isType(e, "BinOp") && isType(e["op"], "Div")) {
      return scaledIn(ctx, e["left"], names) && !mentionsAny(e["right"], names);
    }
    return false;
  }

  static bool isLinearIn(const PassContext& ctx, const Node& e, const std::string& acc) {
    if (isType(e, "Name")) return e["id"] == acc;
    if (isType(e, "Call") && isType(e["func"], "Attribute") && e["func"]["attr"] == "to") {
      return isType(e["func"]["value"], "Name") && e["func"]["value"]["id"] == acc;
    }
    return false;
  }

  // The pointer parameter the store writes through.
  static std::string outputParam(const PassContext& ctx, const Node& ptr) {
    std::set<std::string> candidates;
    for (const auto& p : ctx.kernel->params) {
      if (p.is_constexpr) continue;
      std::set<std::string> d = ctx.derivedFrom(p.name);
      bool used = false;
      forEachName(ptr, [&](const Node& n) {
        if (d.count(n["id"].get<std::string>())) used = true;
      });
      if (!used) continue;
      auto sig = ctx.signature.find(p.name);
      bool pointer = sig != ctx.signature.end() ? (sig->second.is_string() && sig->second.get<std::string>().rfind("*", 0) == 0)
                                                : p.name.find("ptr") != std::string::npos;
      if (pointer) candidates.insert(p.name);
    }
    return candidates.size() == 1 ? *candidates.begin() : "";
  }

  // The output becomes zeros where it is allocated (torch.empty -> torch.zeros), or is
  // zeroed before the launch.
  static bool zeroOutput(const PassContext& ctx, SourceEditor& ed, const LaunchSite& site, const FunctionInfo& fn,
                         const Node& out_arg, std::vector<std::string>* notes) {
    if (isType(out_arg, "Name")) {
      auto it = fn.assignments.find(out_arg["id"].get<std::string>());
      if (it != fn.assignments.end() && it->second.size() == 1 && it->second[0].value &&
          isType(*it->second[0].value, "Call")) {
        const Node& f = (*it->second[0].value)["func"];
        if (isType(f, "Attribute")) {
          std::string attr = f["attr"].get<std::string>();
          static const std::map<std::string, std::string> zeros = {
              {"empty", "zeros"}, {"empty_like", "zeros_like"}, {"new_empty", "new_zeros"}};
          if (zeros.count(attr)) {
            Range fr = ctx.range(f);
            Range ar = {fr.end - attr.size(), fr.end};
            ed.replace(ar, zeros.at(attr));
            return true;
          }
        }
      }
    }
    int line = nodePos(*site.call)->line;
    ed.insert(ctx.text().offset(line, 0), fmt::format("{}{}.zero_()  # split-k adds partial sums into it\n",
                                                        ctx.text().indentOf(line), ctx.slice(out_arg)));
    notes->push_back(fmt::format("the output '{}' is zeroed before the launch", ctx.slice(out_arg)));
    return true;
  }

  // Two-stage launcher: the kernel writes the workspace (its strides for the output's), and
  // the workspace's sum over splits goes to the output after the launch.
  static bool twoStageLaunch(const PassContext& ctx, SourceEditor& ed, const LaunchSite& site, const Node& ptr,
                             const std::string& out_param, const std::string& out_text, const std::string& ws,
                             const std::string& stride_param, std::string* why) {
    const Node* out_arg = launchArg(site, out_param);
    ed.replace(ctx.range(*out_arg), ws);
    addLaunchKeyword(ctx, ed, site, stride_param, ws + ".stride(0)");
    // Stride parameters of the output: used with the pointer in the store, passed as out.stride(i).
    std::set<std::string> names;
    for (const auto& p : ctx.kernel->params) {
      if (p.is_constexpr || p.name == out_param) continue;
      std::set<std::string> d = ctx.derivedFrom(p.name);
      bool used = false;
      forEachName(ptr, [&](const Node& n) {
        if (d.count(n["id"].get<std::string>())) used = true;
      });
      if (!used) continue;
      const Node* a = launchArg(site, p.name);
      if (!a) continue;
      std::string text = ctx.slice(*a);
      std::string prefix = out_text + ".stride(";
      if (text.rfind(prefix, 0) != 0 || text.back() != ')') {
        *why = fmt::format("the output's stride parameter {} is passed as `{}`, not {}.stride(i): the workspace's "
                           "strides cannot replace it",
                           p.name, text, out_text);
        return false;
      }
      {
        std::string idx = text.substr(prefix.size(), text.size() - prefix.size() - 1);
        if (idx.find_first_not_of("0123456789") != std::string::npos || idx.empty()) {
          *why = fmt::format("the output stride `{}` is not out.stride(<int>)", text);
          return false;
        }
        ed.replace(ctx.range(*a), fmt::format("{}.stride({})", ws, std::stoi(idx) + 1));
      }
    }
    // The launch must be an expression statement of its own, to add the reduction after it.
    const FunctionInfo& fn = ctx.ir->functions.at(site.function);
    const Node* stmt = nullptr;
    walk(fn.def->at("body"), [&](const Node& n) {
      if (isType(n, "Expr") && &n["value"] == site.call) stmt = &n;
      return stmt == nullptr;
    });
    if (!stmt) {
      *why = "the launch is not a statement of its own (the reduction goes right after it)";
      return false;
    }
    auto sp = nodePos(*stmt);
    std::string indent = ctx.text().indentOf(sp->line);
    Range r = ctx.lineRange(*stmt);
    ed.insert(r.end, fmt::format("{}{}.copy_({}.sum(dim=0))  # split-k: the second stage\n", indent, out_text, ws));
    return true;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeSplitKPass() { return std::make_unique<SplitKPass>(); }

}  // namespace tf
