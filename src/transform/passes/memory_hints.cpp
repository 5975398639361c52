// memory-hints: facts and preferences for the compiler about memory and loops.
//
//   offsets=1            index vectors provably made of aligned contiguous runs
//                        (P * T + tl.arange(0, T), or a loop offset stepping by T plus
//                        tl.arange(0, T)) get tl.max_contiguous(tl.multiple_of(..., T), T),
//                        so that loads through them vectorize even where the compiler
//                        loses track (only forms whose truth follows from the code)
//   cache=ca|cg|cv       cache_modifier on the loads (.cg: L2 only, for streamed data)
//   eviction=evict_first|evict_last|evict_normal   eviction_policy on the loads
//   loads=a+b            only the loads assigned to these names (default: every tl.load)
//   unroll=N             the loops become tl.range(..., loop_unroll_factor=N)
//   static=1             loops with compile-time bounds become tl.static_range (full unroll)
//   stages=N             the loops become tl.range(..., num_stages=N) (per-loop pipelining)
//   loop=I               only the I-th for loop of the kernel (source order, from 1);
//                        default: every innermost loop (stages: every innermost loop that loads)
#include <fmt/format.h>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

class MemoryHintsPass : public Pass {
 public:
  MemoryHintsPass() {
    info_.name = "memory-hints";
    info_.summary = "tl.multiple_of / tl.max_contiguous on offsets, cache and eviction modifiers on loads, loop "
                    "unrolling (loop_unroll_factor, tl.static_range) and per-loop pipelining (tl.range num_stages).";
    info_.preconditions = {
        "offsets: an index vector is assigned as P * T + tl.arange(0, T) or as a loop offset stepping by T plus "
        "tl.arange(0, T) (T a constexpr or literal); nothing else is claimed",
        "cache / eviction: the kernel loads with tl.load (not through a tensor descriptor); an eviction policy "
        "does not combine with cache=ca / cg (ptxas rejects it)",
        "unroll / stages: the loop is `for ... in range(...)` or tl.range(...); static: its bounds are literals or "
        "constexpr parameters; stages: the loop loads",
    };
    info_.params = {
        {"offsets", PassParamKind::kInt, "", false, 0, 1, false, {}, "1: contiguity / alignment hints on index vectors"},
        {"cache", PassParamKind::kChoice, "", false, 0, 0, false, {"ca", "cg", "cv"}, "cache_modifier of the loads"},
        {"eviction", PassParamKind::kChoice, "", false, 0, 0, false, {"evict_first", "evict_last", "evict_normal"},
         "eviction_policy of the loads"},
        {"loads", PassParamKind::kNames, "", false, 0, 0, false, {}, "only the loads assigned to these names"},
        {"unroll", PassParamKind::kInt, "", false, 2, 64, false, {}, "loop_unroll_factor"},
        {"static", PassParamKind::kInt, "", false, 0, 1, false, {}, "1: tl.static_range"},
        {"stages", PassParamKind::kInt, "", false, 1, 8, false, {}, "num_stages of the loop"},
        {"loop", PassParamKind::kInt, "", false, 1, 64, false, {}, "which for loop (1-based, source order)"},
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    bool any = false;
    for (const char* k : {"offsets", "cache", "eviction", "unroll", "static", "stages"}) any = any || args.has(k);
    if (!any) return refuse("memory-hints needs offsets=, cache=, eviction=, unroll=, static= or stages=");
    if (args.has("eviction") && (args.text("cache") == "ca" || args.text("cache") == "cg")) {
      return refuse("ptxas rejects an L1 eviction policy together with cache=ca or cache=cg; use one of them");
    }
    if (args.has("static") && (args.has("unroll") || args.has("stages"))) {
      return refuse("static=1 unrolls the loop completely: it does not combine with unroll= or stages=");
    }
    SourceEditor ed(ctx.text().text());
    PassOutcome out;
    std::string why;
    if (args.has("offsets") && args.integer("offsets") == 1 && !offsets(ctx, ed, &why)) return refuse(why);
    if ((args.has("cache") || args.has("eviction")) && !loadModifiers(ctx, ed, args, &why)) return refuse(why);
    if ((args.has("unroll") || args.has("static") || args.has("stages")) && !loops(ctx, ed, args, &why)) return refuse(why);
    out.applied = true;
    out.source = ed.apply();
    if (out.source == ctx.text().text()) return refuse("nothing to change");
    return out;
  }

 private:
  // --- offsets ----------------------------------------------------------------------------

  static bool isTile(const PassContext& ctx, const Node& e) {
    if (intLiteral(e)) return true;
    if (!isType(e, "Name")) return false;
    const Param* p = ctx.kernel->param(e["id"].get<std::string>());
    return p && p->is_constexpr;
  }

  // The loop variables that step by T from 0 (or from a multiple of T): name -> T text.
  static std::map<std::string, std::string> steppedLoopVars(const PassContext& ctx) {
    std::map<std::string, std::string> out;
    walk(ctx.body(), [&](const Node& n) {
      if (!isType(n, "For") || !isType(n["target"], "Name") || !isType(n["iter"], "Call")) return true;
      const Node& it = n["iter"];
      std::string f = dottedName(it["func"]);
      if (f != "range" && !ctx.isTlCall(it, "range")) return true;
      if (it["args"].size() != 3 || !isTile(ctx, it["args"][2])) return true;
      if (!(intLiteral(it["args"][0]) == 0)) return true;
      out[n["target"]["id"].get<std::string>()] = ctx.slice(it["args"][2]);
      return true;
    });
    return out;
  }

  static bool offsets(const PassContext& ctx, SourceEditor& ed, std::string* why) {
    std::map<std::string, std::string> stepped = steppedLoopVars(ctx);
    std::map<std::string, std::string> aranges;  // name -> T, for `ks = tl.arange(0, T)`
    std::string tl = ctx.tl();
    int changed = 0;
    walk(ctx.body(), [&](const Node& s) {
      if (!isType(s, "Assign") || s["targets"].size() != 1 || !isType(s["targets"][0], "Name")) return true;
      const Node& v = s["value"];
      auto arangeTile = [&](const Node& e) -> std::string {
        if (ctx.isTlCall(e, "arange") && e["args"].size() == 2 && intLiteral(e["args"][0]) == 0) {
          return ctx.slice(e["args"][1]);
        }
        if (isType(e, "Name") && aranges.count(e["id"].get<std::string>())) return aranges.at(e["id"].get<std::string>());
        return "";
      };
      std::string name = s["targets"][0]["id"].get<std::string>();
      if (std::string t = arangeTile(v); !t.empty() && ctx.isTlCall(v, "arange")) {
        aranges[name] = t;
        return true;
      }
      if (!isType(v, "BinOp") || !isType(v["op"], "Add")) return true;
      for (int side = 0; side < 2; ++side) {
        const Node& start = v[side == 0 ? "left" : "right"];
        std::string t = arangeTile(v[side == 0 ? "right" : "left"]);
        if (t.empty()) continue;
        bool aligned = false;
        // P * T or T * P
        if (isType(start, "BinOp") && isType(start["op"], "Mult")) {
          aligned = ctx.slice(start["right"]) == t || ctx.slice(start["left"]) == t;
        }
        // a loop variable stepping by T from 0
        if (isType(start, "Name") && stepped.count(start["id"].get<std::string>()) &&
            stepped.at(start["id"].get<std::string>()) == t) {
          aligned = true;
        }
        if (!aligned) continue;
        ed.replace(ctx.range(v), fmt::format("{}.max_contiguous({}.multiple_of({}, {}), {})", tl, tl, ctx.slice(v), t, t));
        ++changed;
        break;
      }
      return true;
    });
    if (changed == 0) {
      *why = "no index vector is provably aligned and contiguous (P * T + tl.arange(0, T), or a loop offset stepping "
             "by T plus tl.arange(0, T))";
      return false;
    }
    return true;
  }

  // --- loads ------------------------------------------------------------------------------

  static bool loadModifiers(const PassContext& ctx, SourceEditor& ed, const PassArgs& args, std::string* why) {
    std::set<std::string> only;
    if (args.has("loads")) {
      for (const auto& n : args.names("loads")) only.insert(n);
    }
    std::vector<const Node*> loads;
    std::set<std::string> seen_names;
    walk(ctx.body(), [&](const Node& s) {
      if (!isType(s, "Assign") && !isType(s, "Expr") && !isType(s, "AugAssign")) return true;
      std::string target;
      if (isType(s, "Assign") && s["targets"].size() == 1 && isType(s["targets"][0], "Name")) {
        target = s["targets"][0]["id"].get<std::string>();
      }
      walk(s["value"], [&](const Node& n) {
        if (!ctx.isTlCall(n, "load")) return true;
        if (!only.empty() && !only.count(target)) return true;
        seen_names.insert(target);
        loads.push_back(&n);
        return true;
      });
      return false;
    });
    for (const auto& n : only) {
      if (!seen_names.count(n)) {
        *why = fmt::format("no tl.load is assigned to '{}'", n);
        return false;
      }
    }
    if (loads.empty()) {
      *why = "the kernel has no tl.load";
      return false;
    }
    for (const Node* l : loads) {
      if (l->at("args").size() > 3) {
        *why = fmt::format("line {}: the load passes its options positionally", nodePos(*l)->line);
        return false;
      }
      for (const auto& [key, value] : {std::pair{"cache_modifier", args.has("cache") ? "\"." + args.text("cache") + "\"" : ""},
                                       std::pair{"eviction_policy", args.has("eviction") ? "\"" + args.text("eviction") + "\"" : ""}}) {
        if (value.empty()) continue;
        if (const Node* k = keywordArg(*l, key)) ed.replace(ctx.range(*k), value);
        else addCallKeyword(ctx, ed, *l, fmt::format("{}={}", key, value));
      }
    }
    return true;
  }

  // --- loops ------------------------------------------------------------------------------

  static bool loops(const PassContext& ctx, SourceEditor& ed, const PassArgs& args, std::string* why) {
    std::vector<const Node*> all;
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "For")) all.push_back(&n);
      return true;
    });
    if (all.empty()) {
      *why = fmt::format("{} has no for loop", ctx.kernel->name);
      return false;
    }
    std::vector<const Node*> chosen;
    if (args.has("loop")) {
      int64_t i = args.integer("loop");
      if (i > static_cast<int64_t>(all.size())) {
        *why = fmt::format("loop={} but the kernel has {} for loops", i, all.size());
        return false;
      }
      chosen.push_back(all[static_cast<size_t>(i - 1)]);
    } else {
      for (const Node* l : all) {
        bool inner = true;
        walk((*l)["body"], [&](const Node& n) {
          if (isType(n, "For") || isType(n, "While")) inner = false;
          return inner;
        });
        if (inner) chosen.push_back(l);
      }
    }
    std::string tl = ctx.tl();
    int changed = 0;
    for (const Node* l : chosen) {
      const Node& it = (*l)["iter"];
      int line = nodePos(*l)->line;
      std::string f = isType(it, "Call") ? dottedName(it["func"]) : "";
      bool plain = f == "range", tlrange = ctx.isTlCall(it, "range");
      if (!plain && !tlrange) {
        if (args.has("loop")) {
          *why = fmt::format("line {}: the loop is not over range(...) or tl.range(...)", line);
          return false;
        }
        continue;
      }
      if (args.has("stages")) {
        bool loads = false;
        walk((*l)["body"], [&](const Node& n) {
          loads = loads || ctx.isTlCall(n, "load") || (isType(n, "Call") && isType(n["func"], "Attribute") &&
                                                       n["func"]["attr"] == "load");
          return !loads;
        });
        if (!loads) {
          if (args.has("loop")) {
            *why = fmt::format("line {}: the loop does not load: pipelining has nothing to overlap", line);
            return false;
          }
          continue;
        }
      }
      std::vector<std::string> parts;
      for (const auto& a : it["args"]) parts.push_back(ctx.slice(a));
      if (args.has("static")) {
        for (const auto& a : it["args"]) {
          if (!isTile(ctx, a)) {
            *why = fmt::format("line {}: `{}` is not a literal or constexpr bound: tl.static_range needs compile-time "
                               "bounds",
                               line, ctx.slice(a));
            return false;
          }
        }
        if (!it["keywords"].empty()) {
          *why = fmt::format("line {}: the loop passes keywords tl.static_range does not take", line);
          return false;
        }
        ed.replace(ctx.range(it), fmt::format("{}.static_range({})", tl, joinArgs(parts)));
        ++changed;
        continue;
      }
      std::map<std::string, std::string> kws;
      std::vector<std::string> order;
      for (const auto& kw : it["keywords"]) {
        std::string k = kw["arg"].is_string() ? kw["arg"].get<std::string>() : "";
        if (k.empty()) {
          *why = fmt::format("line {}: the loop's range takes **kwargs", line);
          return false;
        }
        kws[k] = ctx.slice(kw["value"]);
        order.push_back(k);
      }
      for (const auto& [k, v] : {std::pair{"num_stages", args.text("stages")}, std::pair{"loop_unroll_factor", args.text("unroll")}}) {
        if (v.empty()) continue;
        if (!kws.count(k)) order.push_back(k);
        kws[k] = v;
      }
      for (const auto& k : order) parts.push_back(k + "=" + kws[k]);
      ed.replace(ctx.range(it), fmt::format("{}.range({})", tl, joinArgs(parts)));
      ++changed;
    }
    if (changed == 0) {
      *why = args.has("stages") ? "no innermost loop over range(...) loads" : "no innermost loop is over range(...)";
      return false;
    }
    return true;
  }

  static std::string joinArgs(const std::vector<std::string>& parts) {
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
    return s;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeMemoryHintsPass() { return std::make_unique<MemoryHintsPass>(); }

}  // namespace tf
