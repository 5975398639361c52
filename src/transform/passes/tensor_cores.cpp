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
//   stores=descriptor                          the output tile stored through a tensor descriptor,
//                                              desc.store([row, col], value): TMA clips what lies
//                                              past the tensor, so the bounds mask goes
//                                              (stores=keep, the default, leaves the store)
//   stores=subtiled                            the same in two halves along N (epilogue subtiling):
//                                              the staging buffer in shared memory is half the
//                                              tile, which leaves room for one more stage
//
// Loads and stores go through one matcher (matchTilePointer + matchBoundsMask): a 2-D tile
// `base + r[:, None] * s0 + c[None, :] * s1` masked by exactly the bounds of r and c. An index
// may be shifted by a scalar (`(k + c[None, :]) * s1`), and a load's pointer may be Triton's
// tutorial form, made before the K loop and advanced by one tile per iteration
// (advancedPointer + advanceAlongK turn that into the same shifted index). A store it does
// not recognize is kept (a note says why) while the rest of the rewrite applies.
// A change that loses precision (tf32, bf16x3, a down-cast) needs the task's tolerances and
// is refused unless both rtol and atol are at least 4x the unit roundoff it introduces.
// Descriptors need rows that are contiguous and 16-byte aligned: the launcher asserts it for
// every tensor read or written through one, and sets the allocator in-kernel descriptors need.
// Which dimension of an operand is contiguous decides its descriptor: a tile whose first
// dimension is (`s0 == 1` as written) is read through a descriptor of its transpose,
// `desc.load([col, row]).T`. The dot's B operand, whose two strides are both parameters, may
// come either way: B stored (K, N), or (N, K) as a linear layer's weight is. It gets both
// descriptors under a constexpr flag the launcher sets from the strides (B_K_MAJOR =
// b.stride(0) != 1 for the kernel's (k, n) tile): a K-major B goes to wgmma straight from
// shared memory, which fp8 and tf32 need (the other way Triton copies it through registers
// every step: local_load then local_alloc in the compiled IR, checked with Triton 3.6 for
// sm_90), and the result stays drop-in for both layouts. An A whose M dimension is contiguous
// while both strides are parameters is read row-wise: the launcher's assertion refuses it.
// A descriptor that reads only kernel parameters is made once, at the top level of the body
// (so outside a persistent kernel's tile loop); any other just before its use.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cassert>
#include <cmath>
#include <cstdint>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"
#include "transform/passes/tile_access.h"

namespace tf {
namespace {


double unitRoundoff(const std::string& what) {
  if (what == "tf32") return std::ldexp(1.0, -11);
  if (what == "bf16x3") return std::ldexp(1.0, -16);
  if (what == "fp16") return std::ldexp(1.0, -11);
  if (what == "bf16") return std::ldexp(1.0, -8);
  if (what == "fp8-accumulator") return std::ldexp(1.0, -13);
  return 0;  // ieee, tf32x3, bf16x6: fp32-like
}

class TensorCoresPass : public Pass {
 public:
  TensorCoresPass() {
    info_.name = "tensor-cores";
    info_.summary = "Dot input precision, operand down-casts (only where the tolerances allow), TMA tensor-"
                    "descriptor (or block-pointer) loads of the dot's tiles, and descriptor stores of the output tile.";
    info_.preconditions = {
        "the kernel calls tl.dot",
        "precision / cast: a lossy choice needs the task's rtol and atol (--task or --rtol/--atol), each at least "
        "4x its unit roundoff (tf32, fp16: 2^-11; bf16: 2^-8; bf16x3: 2^-16); precision applies to fp32 "
        "operands, so it is refused when the signature says they are 16-bit",
        "loads: the dot's operands are loaded in the K loop as tl.load(base + r[:, None] * s0 + c[None, :] * s1, "
        "mask=(r[:, None] < M) & (c[None, :] < K), other=0), with r and c built as start + tl.arange(0, TILE); "
        "an index may be shifted by the loop's offset ((k + c[None, :]) * s1), or the pointer made before the loop "
        "and advanced by exactly one tile (p += TILE * s) once per iteration after the load",
        "stores=descriptor: a store tl.store(base + r[:, None] * s0 + c[None, :] * s1, value, mask=(r[:, None] < "
        "M) & (c[None, :] < N)) whose mask is exactly the bounds of its own index vectors and whose value has the "
        "tile's shape; any other store is kept as written",
        "descriptors: the launcher passes the strides as x.stride(i) (it asserts contiguous, 16-byte aligned rows) "
        "and imports torch",
        "accumulate=dot: an accumulation `acc += tl.dot(a, b)` or `acc = acc + tl.dot(a, b)` with a dot that takes "
        "no accumulator and whose operands do not read acc; fp8 operands need the task's rtol and atol at least 4x "
        "2^-13 (the fp8 tensor cores keep about 14 bits of the running sum)",
    };
    info_.params = {
        {"precision", PassParamKind::kChoice, "", false, 0, 0, false, {"tf32", "tf32x3", "ieee", "bf16x3", "bf16x6"},
         "the dot's input_precision"},
        {"cast", PassParamKind::kChoice, "", false, 0, 0, false, {"fp16", "bf16"}, "down-cast the dot's operands"},
        {"loads", PassParamKind::kChoice, "", false, 0, 0, false, {"descriptor", "block-pointer"},
         "load the operand tiles through TMA descriptors or block pointers"},
        {"accumulate", PassParamKind::kChoice, "", false, 0, 0, false, {"dot"},
         "dot: `acc += tl.dot(a, b)` becomes `acc = tl.dot(a, b, acc)`: the tensor cores add into the "
         "accumulator and successive MMAs chain without a wait (Triton 3.6 folds the add itself only for "
         "16-bit and tf32 dots; fp8 then keeps the tensor cores' narrower accumulator, so it needs the tolerances)"},
        {"stores", PassParamKind::kChoice, "keep", false, 0, 0, false, {"keep", "descriptor", "subtiled"},
         "descriptor: store the output tile through a TMA descriptor (the bounds mask is implied); subtiled: "
         "the same in two halves along N, half the staging buffer in shared memory"},
    };
    // Measured on the H200 (fp16 8192x4096x4096): a descriptor store of the output tile is part
    // of the fastest persistent kernel, but its staging buffer takes shared memory that 4
    // stages of 128x256x64 then lack (262176 > 232448 bytes). Which wins depends on the
    // configuration: all three are tried; two halves need 32 KiB less, so that 4 stages fit.
    for (auto& p : info_.params) {
      if (p.name == "stores") p.search = {"keep", "descriptor", "subtiled"};
    }
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    bool descriptor_stores = args.text("stores") == "descriptor" || args.text("stores") == "subtiled";
    if (!args.has("precision") && !args.has("cast") && !args.has("loads") && !descriptor_stores &&
        !args.has("accumulate")) {
      return refuse("tensor-cores needs precision=, cast=, loads=, stores=descriptor or accumulate=dot");
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
    if (args.has("accumulate")) {
      std::string why;
      if (!foldAccumulations(ctx, ed, &out, &why)) return refuse(why);
    }
    std::vector<TileAccess> loads, stores;
    if (args.has("loads")) {
      std::string why;
      if (!matchLoads(ctx, dots, &loads, &why)) return refuse(why);
    }
    if (descriptor_stores) {
      std::vector<std::string> kept;
      stores = matchStores(ctx, &kept);
      // Only the store part is given up: the loads and the dot's changes still apply.
      bool others = args.has("precision") || args.has("cast") || args.has("loads");
      if (stores.empty() && !others) {
        return refuse(kept.empty() ? fmt::format("{} has no tl.store", ctx.kernel->name) : kept.front());
      }
      for (const auto& k : kept) {
        out.notes.push_back(fmt::format("stores={}: the store is kept as written ({})", args.text("stores"), k));
      }
      if (args.text("stores") == "subtiled") {
        for (auto& t : stores) {
          t.tile[1] = fmt::format("{} // 2", t.tile[1]);
          t.halves = true;
        }
      }
    }
    if (args.text("loads") == "descriptor") orientLoads(ctx, ed, &loads, &out);
    std::string why;
    if (!rewriteAccesses(ctx, ed, loads, stores, args.text("loads") == "descriptor", &out, &why)) return refuse(why);
    out.applied = true;
    out.source = ed.apply();
    return out;
  }

  // accumulate=dot: each `acc += tl.dot(a, b, ...)` / `acc = acc + tl.dot(...)` (either order)
  // whose dot takes no accumulator and whose operands do not read acc becomes
  // `acc = tl.dot(a, b, acc, ...)`, keywords kept. Refused when there is none, and for fp8
  // operands unless the tolerances allow the tensor cores' narrower running sum.
  static bool foldAccumulations(const PassContext& ctx, SourceEditor& ed, PassOutcome* out, std::string* why) {
    struct Fold {
      const Node* stmt;
      const Node* dot;
      std::string acc;
    };
    std::vector<Fold> folds;
    walk(ctx.body(), [&](const Node& n) {
      std::string acc;
      const Node* dot = nullptr;
      auto plainDot = [&](const Node& e) {
        return ctx.isTlCall(e, "dot") && e["args"].size() == 2 && !keywordArg(e, "acc");
      };
      if (isType(n, "AugAssign") && isType(n["op"], "Add") && isType(n["target"], "Name") && plainDot(n["value"])) {
        acc = n["target"]["id"].get<std::string>();
        dot = &n["value"];
      } else if (isType(n, "Assign") && n["targets"].size() == 1 && isType(n["targets"][0], "Name") &&
                 isType(n["value"], "BinOp") && isType(n["value"]["op"], "Add")) {
        const std::string t = n["targets"][0]["id"].get<std::string>();
        const Node& v = n["value"];
        auto isT = [&](const Node& e) { return isType(e, "Name") && e["id"] == t; };
        if (isT(v["left"]) && plainDot(v["right"])) dot = &v["right"];
        if (isT(v["right"]) && plainDot(v["left"])) dot = &v["left"];
        if (dot) acc = t;
      }
      if (dot && !mentionsName((*dot)["args"][0], acc) && !mentionsName((*dot)["args"][1], acc)) {
        folds.push_back({&n, dot, acc});
      }
      return true;
    });
    if (folds.empty()) {
      *why = "accumulate=dot: no `acc += tl.dot(a, b)` (a dot without an accumulator, added to a variable)";
      return false;
    }
    std::vector<const Node*> dots;
    for (const auto& f : folds) dots.push_back(f.dot);
    std::set<std::string> types = operandTypes(ctx, dots);
    const bool fp8 = std::any_of(types.begin(), types.end(), [](const std::string& t) { return t.rfind("*fp8", 0) == 0; });
    // Triton 3.6 folds the add itself for these (its dot-add combine): the rewrite would change nothing.
    static const std::set<std::string> kFolded = {"*fp16", "*bf16", "*fp32"};
    if (!types.empty() && std::all_of(types.begin(), types.end(), [](const std::string& t) { return kFolded.count(t); })) {
      *why = fmt::format("accumulate=dot: the dot's operands are {}; Triton folds the add into such a dot itself",
                         *types.begin());
      return false;
    }
    if (fp8 || types.empty()) {
      // fp8 (or operands of unknown type, which may be): the running sum in the tensor cores.
      const double need = 4 * unitRoundoff("fp8-accumulator");
      const std::string what = fp8 ? "the dot's operands are fp8: their tensor cores keep"
                                   : "the operand types are unknown (no signature), and fp8 tensor cores keep";
      if (!ctx.rtol || !ctx.atol) {
        *why = fmt::format("accumulate=dot: {} about 14 bits of the running sum; give the task's tolerances "
                           "(--task, or --rtol and --atol) to allow it",
                           what);
        return false;
      }
      if (*ctx.rtol < need || *ctx.atol < need) {
        *why = fmt::format("accumulate=dot: {} about 14 bits of the running sum; the tolerances (rtol {:g}, "
                           "atol {:g}) need to be at least {:.2g}",
                           what, *ctx.rtol, *ctx.atol, need);
        return false;
      }
    }
    for (const auto& f : folds) {
      const Node& d = *f.dot;
      std::string call = ctx.slice(d);
      // `tl.dot(a, b` + `, acc` + the rest: the accumulator goes right after the second operand.
      const size_t b_end = ctx.range(d["args"][1]).end - ctx.range(d).begin;
      call.insert(b_end, ", " + f.acc);
      ed.replace(ctx.range(*f.stmt), fmt::format("{} = {}", f.acc, call));
    }
    out->notes.push_back(fmt::format("accumulate=dot: {} accumulation(s) folded into their tl.dot", folds.size()));
    return true;
  }

  // added to the kernel's parameters, one per tensor.
  static void orientLoads(const PassContext& ctx, SourceEditor& ed, std::vector<TileAccess>* loads, PassOutcome* out) {
    std::map<std::string, std::string> flags;  // base -> flag
    for (auto& t : *loads) {
      if (t.stride[1] == "1") continue;
      if (t.stride[0] == "1") {
        t.transposed = true;
        continue;
      }
      if (t.operand != 1) continue;
      auto it = flags.find(t.base);
      if (it == flags.end()) {
        std::string upper;
        for (char c : tensorName(t.base)) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        std::string flag = ctx.freshName(upper + "_K_MAJOR");
        addKernelParam(ctx, ed, flag, ctx.constexprAnnotation(), "False");
        it = flags.emplace(t.base, flag).first;
      }
      t.kmajor_flag = it->second;
    }
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


  // Every `tl.store(...)` statement a descriptor can take; `kept` says why each other is not.
  static std::vector<TileAccess> matchStores(const PassContext& ctx, std::vector<std::string>* kept) {
    std::vector<TileAccess> out;
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "Expr") && ctx.isTlCall(n["value"], "store")) {
        TileAccess t;
        std::string why;
        bool ok = parseTileStore(ctx, n, &t, &why);
        for (const LaunchSite* site : ctx.sites) {
          ok = ok && (site->function.empty() || launchAssertion(ctx, *site, t, &why));
        }
        if (ok) out.push_back(t);
        else kept->push_back(why);
        return false;
      }
      return true;
    });
    return out;
  }

  // The top-level statement of the body that holds `n`.
  static const Node* topLevelOf(const PassContext& ctx, const Node& n) {
    Range r = ctx.range(n);
    for (const auto& s : ctx.body()) {
      Range sr = ctx.range(s);
      if (sr.begin <= r.begin && r.end <= sr.end) return &s;
    }
    assert(false && "a statement outside the kernel body");
    return nullptr;
  }

  // Does the descriptor of `t` read only the kernel's parameters (then it is made once, at
  // the top level)?
  static bool readsOnlyParams(const PassContext& ctx, const TileAccess& t) {
    bool only = ctx.kernel->param(t.base) != nullptr;
    for (int d = 0; d < 2; ++d) {
      if (t.stride[d] != "1" && !ctx.kernel->param(t.stride[d])) only = false;
    }
    for (const Node* r : t.shape_reads) {
      forEachName(*r, [&](const Node& n) { only = only && ctx.kernel->param(n["id"].get<std::string>()); });
    }
    return only;
  }

  // Loads and stores rewritten; descriptors made before their uses; index arithmetic that
  // only the old pointers read removed; the launcher told.
  static bool rewriteAccesses(const PassContext& ctx, SourceEditor& ed, std::vector<TileAccess> loads,
                              std::vector<TileAccess> stores, bool descriptor_loads, PassOutcome* out,
                              std::string* why) {
    std::string tl = ctx.tl();
    std::vector<TileAccess*> described;
    if (descriptor_loads) for (auto& t : loads) described.push_back(&t);
    for (auto& t : stores) described.push_back(&t);
    makeDescriptors(ctx, ed, described);
    std::vector<Range> replaced;
    std::set<std::string> keep;
    for (const auto* list : {&loads, &stores}) {
      for (const auto& t : *list) {
        for (const auto* reads : {&t.shape_reads, &t.start_reads}) {
          for (const Node* r : *reads) forEachName(*r, [&](const Node& n) { keep.insert(n["id"].get<std::string>()); });
        }
        for (const auto& s : t.stride) keep.insert(s);
      }
    }
    for (const auto& t : loads) {
      std::string load_text;
      if (descriptor_loads) {
        std::string rows = fmt::format("{}.load([{}, {}])", t.descriptor, t.offset[0], t.offset[1]);
        std::string cols = fmt::format("{}.load([{}, {}]).T", t.descriptor, t.offset[1], t.offset[0]);
        load_text = !t.kmajor_flag.empty() ? fmt::format("({} if {} else {})", cols, t.kmajor_flag, rows)
                    : t.transposed         ? cols
                                           : rows;
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
      replaced.push_back(ctx.range(*t.call));
      // The advanced pointer was read by this load only: its advance goes, its start with the
      // dead indices.
      if (t.advance) {
        ed.replace(ctx.lineRange(*t.advance), "");
        replaced.push_back(ctx.range(*t.advance));
      }
    }
    for (const auto& t : stores) {
      // desc.store([row, col], value): the pointer and the mask go; the value stays as written
      // (edits inside it, such as a cast of a dot's operands, still apply).
      Range call = ctx.range(*t.call), value = ctx.range(*t.value);
      if (t.halves) {
        // Two halves along N: (T0, T1) -> (T0, 2, T1/2) -> (T0, T1/2, 2), split on the last
        // axis: the first half is columns [0, T1/2), the second [T1/2, T1).
        std::string indent = ctx.text().indentOf(nodePos(*t.call)->line);
        std::string lo = ctx.freshName("tile_lo"), hi = ctx.freshName("tile_hi");
        ed.replace({call.begin, value.begin},
                   fmt::format("{}, {} = {}.split({}.permute({}.reshape(", lo, hi, tl, tl, tl));
        ed.replace({value.end, call.end},
                   fmt::format(", ({}, 2, {})), (0, 2, 1)))\n{}{}.store([{}, {}], {})\n{}{}.store([{}, {} + {}], {})",
                               t.tile[0], t.tile[1], indent, t.descriptor, t.offset[0], t.offset[1], lo, indent,
                               t.descriptor, t.offset[0], t.offset[1], t.tile[1], hi));
        replaced.push_back({call.begin, value.begin});
        replaced.push_back({value.end, call.end});
        continue;
      }
      ed.replace({call.begin, value.begin}, fmt::format("{}.store([{}, {}], ", t.descriptor, t.offset[0], t.offset[1]));
      ed.replace({value.end, call.end}, ")");
      replaced.push_back({call.begin, value.begin});
      replaced.push_back({value.end, call.end});
    }
    removeDeadIndices(ctx, ed, replaced, keep);
    if (described.empty()) return true;
    return launcherForDescriptors(ctx, ed, described, out, why);
  }

  // The start of `line`, or of the comment lines right above it (they describe that statement).
  static size_t aboveComments(const PassContext& ctx, int line) {
    auto comment = [&](int l) {
      std::string_view text = ctx.text().line(l);
      size_t c = text.find_first_not_of(" \t");
      return c != std::string_view::npos && text[c] == '#';
    };
    while (line > 1 && comment(line - 1)) --line;
    return ctx.text().offset(line, 0);
  }

  // Names each descriptor (one per tensor and tile) and writes the statements that make them:
  // those reading only parameters together before the first top-level statement that uses
  // one, the others just before their use.
  static void makeDescriptors(const PassContext& ctx, SourceEditor& ed, const std::vector<TileAccess*>& described) {
    struct Group {
      std::string indent;
      std::vector<std::string> lines;
      bool loads = false, stores = false;
    };
    std::map<size_t, Group> groups;  // by the offset they are inserted at
    size_t top_anchor = SIZE_MAX;
    for (const TileAccess* t : described) {
      if (!readsOnlyParams(ctx, *t)) continue;
      top_anchor = std::min(top_anchor, aboveComments(ctx, nodePos(*topLevelOf(ctx, *t->use))->line));
    }
    std::map<std::string, std::string> made;  // what a descriptor describes -> its name
    std::set<std::string> names;
    std::string tl = ctx.tl();
    for (TileAccess* t : described) {
      std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", t->base, t->extent[0], t->extent[1], t->stride[0],
                                    t->stride[1], t->tile[0], t->tile[1], t->transposed, t->kmajor_flag);
      bool top = readsOnlyParams(ctx, *t);
      int use_line = nodePos(*t->use)->line;
      size_t at = top ? top_anchor : aboveComments(ctx, use_line);
      auto it = made.find(key);
      if (it != made.end()) {
        t->descriptor = it->second;
        continue;
      }
      std::string base = tensorName(t->base);
      std::string name = ctx.freshName(base + "_desc");
      for (int i = 2; names.count(name); ++i) name = ctx.freshName(fmt::format("{}_desc_{}", base, i));
      names.insert(name);
      made[key] = t->descriptor = name;
      Group& g = groups[at];
      g.indent = top ? ctx.bodyIndent() : ctx.text().indentOf(use_line);
      (t->value ? g.stores : g.loads) = true;
      // TMA reads rows that are contiguous: the last stride is 1 (the launcher asserts it).
      auto make = [&](const std::string& head, size_t col, int r, int c) {
        return wrapCall(head + tl + ".make_tensor_descriptor",
                        {t->base, fmt::format("shape=[{}, {}]", t->extent[r], t->extent[c]),
                         fmt::format("strides=[{}, 1]", t->stride[r]),
                         fmt::format("block_shape=[{}, {}]", t->tile[r], t->tile[c])},
                        col);
      };
      if (!t->kmajor_flag.empty()) {
        // (the transpose if FLAG else the rows): one statement, which persistent hoists whole
        size_t col = g.indent.size() + name.size() + 4;
        g.lines.push_back(make(name + " = (", g.indent.size(), 1, 0) + " if " + t->kmajor_flag + " else");
        g.lines.push_back(std::string(col - g.indent.size(), ' ') + make("", col, 0, 1) + ")");
      } else if (t->transposed) {
        g.lines.push_back(make(name + " = ", g.indent.size(), 1, 0));
      } else {
        g.lines.push_back(make(name + " = ", g.indent.size(), 0, 1));
      }
    }
    for (auto& [at, g] : groups) {
      std::string what = g.loads && g.stores ? "the dot's tiles and the output tile go through TMA tensor descriptors"
                          : g.loads          ? "the dot's tiles come through TMA tensor descriptors"
                                             : "the output tile goes through a TMA tensor descriptor";
      g.lines.insert(g.lines.begin(), "# tensor-cores: " + what);
      ed.insert(at, joinLines(g.lines, g.indent));
    }
  }

  // Index arithmetic that only the replaced code read (k = k0 + ks, the old pointers, the
  // masks) is removed, to a fixpoint; a name the new code reads (`keep`) stays. A removed
  // advance (`p += ...`) no longer counts as a second assignment of its pointer.
  static void removeDeadIndices(const PassContext& ctx, SourceEditor& ed, const std::vector<Range>& replaced,
                                const std::set<std::string>& keep) {
    std::vector<const Node*> candidates;
    std::vector<const Node*> lists = {&ctx.body()};
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "For")) lists.push_back(&n["body"]);
      return true;
    });
    for (const Node* list : lists) {
      for (const auto& s : *list) {
        if (isType(s, "Assign") && s["targets"].size() == 1 && isType(s["targets"][0], "Name")) candidates.push_back(&s);
      }
    }
    auto inside = [&](const Range& r, const std::vector<Range>& in) {
      for (const auto& x : in) {
        if (x.begin <= r.begin && r.end <= x.end) return true;
      }
      return false;
    };
    std::set<const Node*> dead;
    bool changed = true;
    while (changed) {
      changed = false;
      std::vector<Range> gone = replaced;
      for (const Node* d : dead) gone.push_back(ctx.range(*d));
      for (const Node* s : candidates) {
        if (dead.count(s)) continue;
        std::string name = (*s)["targets"][0]["id"].get<std::string>();
        if (keep.count(name)) continue;
        int live = 0, reads = 0, stores = 0;
        walk(ctx.body(), [&](const Node& n) {
          if (isType(n, "Name") && n["id"] == name) {
            if (n["ctx"] == "Store") {
              if (!inside(ctx.range(n), gone)) ++stores;
            } else {
              ++reads;
              if (!inside(ctx.range(n), gone)) ++live;
            }
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
        // A name nothing read before the rewrite is the author's, not the rewrite's to remove.
        if (reads > 0 && live == 0 && stores == 1 && pure) {
          dead.insert(s);
          changed = true;
        }
      }
    }
    for (const Node* list : lists) {
      size_t left = 0;
      for (const auto& s : *list) left += dead.count(&s) ? 0 : 1;
      for (const auto& s : *list) {
        if (!dead.count(&s)) continue;
        // A block left empty would not parse.
        bool last = left == 0 && &s == &list->back();
        ed.replace(ctx.lineRange(s), last ? ctx.text().indentOf(nodePos(s)->line) + "pass\n" : "");
      }
    }
  }

  // The assertion a launch makes for the tensor `t` reads or writes through a descriptor: its
  // rows contiguous and 16-byte aligned. It needs the strides passed as x.stride(i).
  static std::optional<std::string> launchAssertion(const PassContext& ctx, const LaunchSite& site, const TileAccess& t,
                                                    std::string* why) {
    const Node* base = launchArg(site, t.base);
    const Node* s0 = ctx.kernel->param(t.stride[0]) ? launchArg(site, t.stride[0]) : nullptr;
    const Node* s1 = ctx.kernel->param(t.stride[1]) ? launchArg(site, t.stride[1]) : nullptr;
    // A stride the kernel takes as 1 is the launcher's to guarantee, as it was before.
    if (!base || (t.stride[0] != "1" && !s0) || (t.stride[1] != "1" && !s1) || (!s0 && !s1)) {
      *why = fmt::format("a launch does not pass {} and its strides", t.base);
      return std::nullopt;
    }
    std::string x = ctx.slice(*base);
    std::string t0 = s0 ? strideText(ctx, *s0) : "1", t1 = s1 ? strideText(ctx, *s1) : "1";
    if ((s0 && !strideOf(ctx, *s0, x)) || (s1 && !strideOf(ctx, *s1, x))) {
      *why = fmt::format("the strides of {} are passed as `{}`, `{}`, not {}.stride(i): the launch cannot check "
                         "that its rows are contiguous and 16-byte aligned",
                         t.base, t0, t1, x);
      return std::nullopt;
    }
    auto contiguous = [&](const std::string& unit, const std::string& row) {
      std::string aligned = fmt::format("{} * {}.element_size() % 16 == 0", row, x);
      return unit == "1" ? aligned : fmt::format("{} == 1 and {}", unit, aligned);
    };
    std::string rows = contiguous(t1, t0);
    // "\n" in a check continues it on the next line, under its opening parenthesis.
    std::string cond = t.kmajor_flag.empty() ? (t.transposed ? contiguous(t0, t1) : rows)
                                             : fmt::format("({} or\n{})", rows, contiguous(t0, t1));
    return fmt::format("assert {} and {}.data_ptr() % 16 == 0", cond, x);
  }

  // Is `e` a stride of the tensor `x`: `x.stride(i)`, or a choice between that and 1 (relayout's
  // `1 if b_tf is b else b_tf.stride(1)`, a stride the kernel as written took as 1)?
  static bool strideOf(const PassContext& ctx, const Node& e, const std::string& x) {
    if (isType(e, "IfExp")) {
      auto one = [&](const Node& b) { return intLiteral(b) == 1 || strideOf(ctx, b, x); };
      return one(e["body"]) && one(e["orelse"]);
    }
    return ctx.slice(e).rfind(x + ".stride(", 0) == 0;
  }

  // A stride argument as an operand of `==` (a choice in parentheses).
  static std::string strideText(const PassContext& ctx, const Node& e) {
    return isType(e, "IfExp") ? "(" + ctx.slice(e) + ")" : ctx.slice(e);
  }

  // The value a launch passes for the layout flag of `t`: its columns' stride is not 1.
  static std::string kmajorValue(const PassContext& ctx, const LaunchSite& site, const TileAccess& t) {
    return strideText(ctx, *launchArg(site, t.stride[1])) + " != 1";
  }

  // The launcher asserts what TMA needs and sets the allocator for in-kernel descriptors.
  static bool launcherForDescriptors(const PassContext& ctx, SourceEditor& ed, const std::vector<TileAccess*>& accesses,
                                     PassOutcome* out, std::string* why) {
    std::string torch = torchAlias(ctx);
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
    int dline = definitionTopLine(*ctx.kernel->def);
    std::string in = ctx.text().indentOf(dline);
    ed.insert(ctx.text().offset(dline, 0),
              fmt::format("{0}def {1}(size, alignment, stream):\n"
                          "{0}    # scratch memory for the tensor descriptors the kernel makes (TMA)\n"
                          "{0}    return {2}.empty(size, device=\"cuda\", dtype={2}.int8)\n\n\n",
                          in, scratch, torch));
    std::set<std::string> fn_done;
    for (const LaunchSite* site : ctx.sites) {
      if (site->function.empty()) {
        *why = "the kernel is launched at module level";
        return false;
      }
      std::set<std::string> flagged;
      for (const TileAccess* t : accesses) {
        if (t->kmajor_flag.empty() || !flagged.insert(t->kmajor_flag).second) continue;
        // launchAssertion (below) refuses a launch that does not pass the strides.
        if (!launchArg(*site, t->stride[1])) continue;
        addLaunchKeyword(ctx, ed, *site, t->kmajor_flag, kmajorValue(ctx, *site, *t));
      }
      if (!fn_done.insert(site->function).second) continue;
      std::vector<std::string> checks;
      std::set<std::string> seen;
      for (const TileAccess* t : accesses) {
        if (!seen.insert(fmt::format("{}|{}|{}|{}|{}", t->base, t->stride[0], t->stride[1], t->transposed,
                                     t->kmajor_flag)).second) {
          continue;
        }
        auto check = launchAssertion(ctx, *site, *t, why);
        if (!check) return false;
        checks.push_back(*check);
      }
      // Above the grid's assignment, unless a line between it and the launch binds a tensor the
      // checks read (relayout's `a_tf = ...` copy, bound just before the launch).
      const int launch_line = nodePos(*site->call)->line;
      int line = launch_line;
      std::string gwhy;
      if (auto g = gridOf(ctx, *site, &gwhy); g && g->assign_stmt) line = std::min(line, nodePos(*g->assign_stmt)->line);
      auto fn = ctx.ir->functions.find(site->function);
      for (const TileAccess* t : accesses) {
        if (fn == ctx.ir->functions.end()) continue;
        for (const std::string& p : {t->base, t->stride[0], t->stride[1]}) {
          const Node* arg = ctx.kernel->param(p) ? launchArg(*site, p) : nullptr;
          if (!arg) continue;
          forEachName(*arg, [&](const Node& n) {
            auto as = fn->second.assignments.find(dottedName(n));
            if (as == fn->second.assignments.end()) return;
            for (const Assignment& a : as->second) {
              int at = nodePos(*a.stmt)->line;
              if (at >= line && at < launch_line) line = launch_line;
            }
          });
        }
      }
      std::string indent = ctx.text().indentOf(line);
      std::string text = indent + "# TMA descriptors need contiguous rows, 16-byte aligned\n";
      for (const auto& c : checks) {
        std::string wrapped;
        for (char ch : c) wrapped += ch == '\n' ? "\n" + indent + "        " : std::string(1, ch);
        text += indent + wrapped + "\n";
      }
      text += fmt::format("{}{}.set_allocator({})\n", indent, ctx.triton(), scratch);
      ed.insert(ctx.text().offset(line, 0), text);
    }
    out->notes.push_back("TMA descriptors: the launcher asserts contiguous, 16-byte aligned rows (fp16 rows must "
                         "hold a multiple of 8 elements)");
    return true;
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeTensorCoresPass() { return std::make_unique<TensorCoresPass>(); }

}  // namespace tf
