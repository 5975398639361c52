// gluon-gemm: a GEMM-like kernel lowered to Gluon (triton.experimental.gluon) for Hopper:
// persistent programs, each taking tiles in grouped order; per program a TMA loader warp
// (24 registers) filling a ring of shared-memory stages guarded by ready/empty mbarriers, and
// the default warps issuing asynchronous wgmma with one in flight, then running the kernel's
// own epilogue. `tl` cannot express this in Triton 3.6 (its warp specialization takes effect
// only at 4 warps and on some loop forms); Gluon can, and a hand-written kernel of this shape
// reached 0.97 of torch._scaled_mm on an fp8 GEMM on the H200 (docs/measurements.md).
//
//   @triton.jit                                      @triton.jit
//   def k(a_ptr, b_ptr, c_ptr, M, N, K, ...):        def k(...): ...           (unchanged)
//       pid_m = tl.program_id(0)                     <Gluon: k's loader, its MMA and epilogue
//       rm = pid_m * BLOCK_M + tl.arange(0, BM)        partition, the kernel that forks them,
//       acc = tl.zeros((BM, BN), dtype=tl.float32)      a launch helper>
//       for k0 in range(0, K, BLOCK_K):          ->  k = _k_GluonRoute(k, _k_gluon_launch)
//           a = tl.load(a_ptr + ...)
//           b = tl.load(b_ptr + ...)
//           acc += tl.dot(a, b)
//       <epilogue>
//
// The launch is left as written: the name is rebound to a route that launches the Gluon
// kernel when the call fits it (Gluon present, a Hopper GPU, operands of one dtype wgmma
// takes, A's rows contiguous along K, B either K-major or, for 16-bit types, N-major, rows
// 16-byte aligned, tiles wgmma and TMA accept) and the kernel as written otherwise. So the
// launcher's tunables stay where they were (retile and the search's configurations still
// apply, to both routes), and the result stays drop-in for every call.
//
// What carries over: the statements before the K loop (program ids taken from the tile,
// tl.arange and the accumulator's tl.zeros given Gluon layouts) and after it (the epilogue,
// as written: Gluon runs tl's functions on its tensors, the accumulator converted to a
// blocked layout first). The K loop is replaced: its body may hold only the two operand loads
// (tile_access.h's forms: bounds masks, other=0, which TMA's zero padding reproduces), the
// accumulation `acc += tl.dot(a, b)` (or `acc = tl.dot(a, b, acc)`) and index arithmetic
// nothing after the loop reads. Names the carried statements rebind start every tile from
// their values on entry. A batched GEMM's `a_ptr += batch * stride_ab` (batch a program id)
// gives that operand a 3-D descriptor, the batch first.
//
// Measured on an H100 (docs/measurements.md, 2026-12-07): fp8 1.00 and fp16 0.995 of cuBLAS
// at 128x256 tiles, int8 1.22x torch._int_mm at 128x128x128.
//
// fp8 operands accumulate in the tensor cores' running sum (about 14 bits), as
// tensor-cores:accumulate=dot: the task's tolerances must allow it. fp32 operands run as tf32,
// as tl.dot does by default; a dot that asks for another precision is refused.
#include <fmt/format.h>

#include <regex>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"
#include "transform/passes/tile_access.h"

namespace tf {
namespace {

constexpr const char* kIndent = "    ";

// Identifiers in an expression written as text.
std::set<std::string> identifiers(const std::string& text) {
  static const std::regex id(R"([A-Za-z_][A-Za-z_0-9]*)");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), id); it != std::sregex_iterator(); ++it) {
    // an attribute (x.dtype) is not a name of its own
    size_t at = static_cast<size_t>(it->position());
    if (at > 0 && text[at - 1] == '.') continue;
    out.insert(it->str());
  }
  return out;
}

// `text` with every line's leading `from` indentation replaced by `to` (lines indented less
// keep theirs after `to`).
std::string reindent(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? text.size() : nl + 1;
    if (line.find_first_not_of(" \t") == std::string::npos) {
      out += "\n";
      continue;
    }
    if (line.compare(0, from.size(), from) == 0) line = line.substr(from.size());
    out += to + line + "\n";
  }
  return out;
}

// The GPU-side element types wgmma takes from shared memory, by signature type.
struct OperandType {
  const char* signature;  // "*fp16"
  const char* torch;      // "float16"
  const char* gluon;      // "float16"
  const char* desc;       // the element type in a tensordesc<...> signature
  int bytes;
};
const OperandType kOperandTypes[] = {
    {"*fp16", "float16", "float16", "fp16", 2},          {"*bf16", "bfloat16", "bfloat16", "bf16", 2},
    {"*fp8e4nv", "float8_e4m3fn", "float8e4nv", "fp8e4nv", 1}, {"*fp8e5", "float8_e5m2", "float8e5", "fp8e5", 1},
    {"*i8", "int8", "int8", "i8", 1},                    {"*fp32", "float32", "float32", "fp32", 4},
};

class GluonGemmPass : public Pass {
 public:
  GluonGemmPass() {
    info_.name = "gluon-gemm";
    info_.summary =
        "Lower a GEMM-like kernel to Gluon for Hopper: persistent warp-specialized programs (a TMA loader warp, "
        "an mbarrier ring of stages, asynchronous wgmma), the kernel's own prologue and epilogue carried over; "
        "calls that do not fit it run the kernel as written.";
    info_.preconditions = {
        "one tl.dot, in a loop at the top of the kernel body (the K loop) over range(...) or tl.range(...); no "
        "return; @triton.autotune and @triton.heuristics stay (the route goes under them: every configuration "
        "launches through it); another autotuner is refused",
        "the K loop holds the two operand loads in tensor-cores' forms (masked by the tile's bounds, other=0), the "
        "accumulation `acc += tl.dot(a, b)` or `acc = tl.dot(a, b, acc)` of an accumulator made by tl.zeros before "
        "the loop, and index arithmetic that nothing after the loop reads",
        "the operands' row strides, extents and tile sizes are kernel parameters (or literals), so the launch can "
        "build TMA descriptors; A is read along K (its K stride 1 or a parameter)",
        "fp8 operands need the task's rtol and atol at least 4x 2^-13 (wgmma keeps about 14 bits of the running "
        "sum); fp32 operands run as tf32 and the dot must not ask for another precision",
        "the module imports torch; the kernel's name is not used by another @triton.jit function",
    };
    info_.params = {
        {"stages", PassParamKind::kInt, "0", false, 0, 8, false, {},
         "shared-memory stages of the operand ring (0: as many as fit 160 KiB, 2 to 6)"},
        {"warps", PassParamKind::kInt, "0", false, 0, 8, false, {},
         "warps of the MMA partition, 4 or 8 (0: 8 for tiles of at least 128x256, else 4)"},
        {"group", PassParamKind::kInt, "8", false, 1, 64, false, {},
         "programs' tiles taken in groups of this many along grid axis 0 (L2 reuse); 1: in grid order"},
    };
    // The ring's depth trades stages against room for the epilogue's layout conversion; the
    // hand-written kernel measured best at 5 stages of 128x128x128 fp8 and 4 of 128x256x128.
    for (auto& p : info_.params) {
      if (p.name == "stages") p.search = {"0", "3", "4"};
    }
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    const std::string& k = ctx.kernel->name;
    int warps = static_cast<int>(args.integer("warps"));
    if (warps != 0 && warps != 4 && warps != 8) return refuse("warps must be 0, 4 or 8");
    int stages = static_cast<int>(args.integer("stages"));
    if (stages == 1) return refuse("stages must be 0 (as many as fit) or 2 to 8");
    // An autotuned kernel (or one with heuristics) keeps its decorators: the route goes under
    // them, so each configuration the autotuner tries and picks launches through it.
    if (ctx.kernel->autotune && !ctx.kernel->autotune->tuner.empty()) {
      return refuse(fmt::format("{} is tuned by {}, not triton.autotune: the route goes under triton's own "
                                "autotuner only",
                                k, ctx.kernel->autotune->tuner));
    }
    if (ctx.kernel->home) return refuse(fmt::format("{} is imported: the lowering rewrites this file's kernels", k));
    if (ctx.ir->functions.count("_" + k + "_gluon_launch") || ctx.ir->module_assignments.count(k)) {
      return refuse(fmt::format("{} is lowered already (or rebound at module level)", k));
    }
    if (ctx.hasReturn(true)) return refuse(fmt::format("{} returns early (a persistent program would stop)", k));
    for (size_t i = 0; i < ctx.body().size(); ++i) {
      const Node& st = ctx.body()[i];
      bool doc = i == 0 && isType(st, "Expr") && isType(st["value"], "Constant") && st["value"]["vt"] == "str";
      if (!doc && hasMultilineString(ctx, st)) return refuse("the kernel body holds a multi-line string");
    }
    std::string torch = torchAlias(ctx);
    if (torch.empty()) return refuse("the module does not import torch (the launch builds TMA descriptors with it)");

    std::vector<const Node*> dots;
    walk(ctx.body(), [&](const Node& n) {
      if (ctx.isTlCall(n, "dot") || ctx.isTlCall(n, "dot_scaled")) dots.push_back(&n);
      return true;
    });
    if (dots.size() != 1) return refuse(fmt::format("{} has {} tl.dot calls; the lowering takes one", k, dots.size()));
    const Node& dot = *dots[0];
    if (!ctx.isTlCall(dot, "dot")) return refuse("the dot is tl.dot_scaled");
    DotLoop dl = findDotLoop(ctx);
    if (!dl.loop || dl.loop != dl.top) {
      return refuse("the tl.dot is not in a loop at the top level of the kernel body (a persistent kernel's tile "
                    "loop, or a nested K loop, is not lowered)");
    }
    const Node& loop = *dl.loop;
    if (!isType(loop["target"], "Name") || !isRangeCall(ctx, loop["iter"]) ||
        ctx.tlFunction(loop["iter"]) == "static_range" || !loop["orelse"].empty()) {
      return refuse("the K loop is not `for k in range(...)` (or tl.range) without else");
    }
    std::vector<TileAccess> loads;
    std::string why;
    if (!matchLoads(ctx, dots, &loads, &why, /*moved_bases=*/true)) return refuse(why);
    if (loads.size() != 2 || loads[0].operand != 0 || loads[1].operand != 1) {
      return refuse("the dot's operands are not two tile loads");
    }
    Accumulation acc;
    if (!matchAccumulation(ctx, loop, dot, loads, &acc, &why)) return refuse(why);
    // Operand types and what they need.
    std::set<std::string> types = operandTypes(ctx, dots);
    const OperandType* type = nullptr;
    if (types.size() == 1) {
      for (const auto& t : kOperandTypes) {
        if (*types.begin() == t.signature) type = &t;
      }
      if (!type) return refuse(fmt::format("the dot's operands are {}: wgmma takes fp16, bf16, fp8, int8 or fp32 (tf32)",
                                           *types.begin()));
    } else if (types.size() > 1) {
      return refuse(fmt::format("the dot's operands have two types ({}): wgmma takes one", fmt::join(types, ", ")));
    }
    const bool maybe_fp8 = !type || type->bytes == 1;
    if (maybe_fp8 && (!type || std::string(type->signature) != "*i8")) {
      const double need = 4 * std::ldexp(1.0, -13);
      if (!ctx.rtol || !ctx.atol || *ctx.rtol < need || *ctx.atol < need) {
        return refuse(fmt::format(
            "{}: wgmma keeps about 14 bits of an fp8 running sum; the task's tolerances (--task, or --rtol and "
            "--atol) must be at least {:.2g}",
            type ? "the dot's operands are fp8" : "the operand types are unknown (no signature)", need));
      }
    }
    // input_precision applies to fp32 operands only.
    if (type && type->bytes != 4) acc.precision_ok = true;
    if (!acc.precision_ok && type) {
      return refuse("the dot asks for a precision other than tf32 (wgmma runs fp32 operands as tf32)");
    }

    // Host-side descriptors: strides, extents and tiles in the launch's terms.
    const TileAccess& A = loads[0];
    const TileAccess& B = loads[1];
    if (A.stride[0] == "1") return refuse("A is read with its M dimension contiguous (TMA reads A's rows along K)");
    // The launch builds the descriptors from the values it passes: the kernel must read them as
    // passed (a batched kernel's `a_ptr += batch * stride_ab` moves the base, for one).
    std::map<std::string, int> stores = storeCounts(ctx.body());
    BatchMove batch[2];
    for (int i = 0; i < 2; ++i) {
      const TileAccess* t = i == 0 ? &A : &B;
      if (!t->base_alias.empty()) {
        if (stores.count(t->base)) return refuse(fmt::format("the kernel moves both {} and {}", t->base, t->base_alias));
        if (!matchBatchAlias(ctx, *t, stores, &batch[i], &why)) return refuse(why);
        continue;
      }
      if (!stores.count(t->base)) continue;
      if (!matchBatchMove(ctx, loop, t->base, stores, &batch[i], &why)) return refuse(why);
    }
    for (const TileAccess* t : {&A, &B}) {
      for (int d = 0; d < 2; ++d) {
        for (const std::string& text : {t->stride[d], t->extent[d], t->tile[d]}) {
          for (const auto& id : identifiers(text)) {
            if (stores.count(id)) {
              return refuse(fmt::format("the kernel rebinds '{}', which the launch's descriptor of {} reads", id,
                                        t->base));
            }
            if (!ctx.kernel->param(id) && !ctx.ir->module_assignments.count(id)) {
              return refuse(fmt::format("`{}` (a stride, extent or tile of {}) reads '{}', which is not a kernel "
                                        "parameter: the launch cannot build its descriptor",
                                        text, t->base, id));
            }
          }
        }
      }
    }
    for (const std::string& text : {A.tile[0], A.tile[1], B.tile[1]}) {
      if (!isSimpleName(text) && !std::regex_match(text, std::regex("[0-9]+"))) {
        return refuse(fmt::format("the tile `{}` is neither a parameter nor a literal", text));
      }
    }
    // Program ids, the launch, the kernel's name.
    for (const LaunchSite* site : ctx.sites) {
      if (site->function.empty()) return refuse("the kernel is launched at module level");
      if (site->has_starred) return refuse("a launch passes *args or **kwargs");
    }
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k));
    for (const auto& kern : ctx.ir->kernels) {
      if (kern.name == k || kern.home) continue;
      if (mentionsName(*kern.def, k)) return refuse(fmt::format("{} is used by the @triton.jit function {}", k, kern.name));
    }

    Emit e{ctx, loop, A, B, acc, type, {batch[0], batch[1]}, 8, 0, 0, "", "", "", {}, {}, {}};
    e.group = static_cast<int>(args.integer("group"));
    e.stages = stages;
    e.warps = warps;
    e.torch = torch;
    std::string block;
    if (!e.build(&block, &why)) return refuse(why);

    PassOutcome out = withBlockAfterKernel(ctx, block);
    if (!out.applied) return out;
    out.notes.push_back(fmt::format(
        "{} now routes each launch: the Gluon kernel _{}_gluon where the call fits it (a Hopper GPU, operands "
        "TMA and wgmma take), the kernel as written otherwise",
        k, k));
    if (type) {
      out.companions.push_back(e.companion(true));
      // 16-bit B may come N-major too: wgmma reads it transposed from shared memory.
      if (type->bytes == 2) out.companions.push_back(e.companion(false));
    }
    return out;
  }

 private:
  struct Accumulation {
    const Node* stmt = nullptr;
    const Node* init = nullptr;  // `acc = tl.zeros(...)` before the loop
    std::string name;
    bool precision_ok = true;
  };

  // A batched GEMM's `a_ptr += batch * stride_ab` (or `a_ptr = a_ptr + ...`) at the top of the
  // body, `batch` a program id: the launch gives that operand a 3-D descriptor whose first
  // dimension is the batch (its extent the grid's along that axis, its stride the one the
  // kernel multiplies by), and the loader takes the batch coordinate from the program id.
  struct BatchMove {
    const Node* stmt = nullptr;
    const Node* index_node = nullptr;
    std::string index;   // the program id's name (or the tl.program_id call) as the kernel writes it
    std::string stride;  // a kernel parameter
    int axis = -1;
  };

  static bool matchBatchMove(const PassContext& ctx, const Node& loop, const std::string& base,
                             const std::map<std::string, int>& stores, BatchMove* out, std::string* why) {
    *why = fmt::format("the kernel moves the pointer {} other than once, before the K loop, by `program id * "
                       "stride` (a batch offset the launch can give its descriptor)",
                       base);
    if (stores.at(base) != 1) return false;
    const Node* offset = nullptr;
    for (const auto& st : ctx.body()) {
      if (ctx.range(st).begin >= ctx.range(loop).begin) break;
      if (assignedName(st) != base) continue;
      if (isType(st, "AugAssign") && isType(st["op"], "Add")) {
        offset = &st["value"];
      } else if (isType(st, "Assign") && isType(st["value"], "BinOp") && isType(st["value"]["op"], "Add") &&
                 isType(st["value"]["left"], "Name") && st["value"]["left"]["id"] == base) {
        offset = &st["value"]["right"];
      }
      out->stmt = &st;
    }
    return offset && matchBatchOffset(ctx, *offset, ctx.range(*out->stmt).begin, stores, out);
  }

  // A base bound once to a parameter plus a batch offset (`a_base = a_ptr + pid_b * stride_ab`):
  // the same offset, the parameter left as passed.
  static bool matchBatchAlias(const PassContext& ctx, const TileAccess& t, const std::map<std::string, int>& stores,
                              BatchMove* out, std::string* why) {
    *why = fmt::format("'{}' is {} moved by `{}`, not by `program id * stride` (a batch offset the launch can give "
                       "its descriptor)",
                       t.base_alias, t.base, ctx.slice(*t.base_offset));
    return matchBatchOffset(ctx, *t.base_offset, ctx.range(*t.base_offset).begin, stores, out);
  }

  // `program id * stride` (either way round; the program id may be a name bound to it), the
  // stride a kernel parameter the kernel does not rebind.
  static bool matchBatchOffset(const PassContext& ctx, const Node& offset, size_t at,
                               const std::map<std::string, int>& stores, BatchMove* out) {
    if (!isType(offset, "BinOp") || !isType(offset["op"], "Mult")) return false;
    for (auto [idx, str] : {std::pair{"left", "right"}, std::pair{"right", "left"}}) {
      const Node& i = offset[idx];
      const Node& st = offset[str];
      if (!isType(st, "Name") || !ctx.kernel->param(st["id"].get<std::string>()) || stores.count(st["id"])) continue;
      const Node* call = &i;
      if (isType(i, "Name")) call = boundOnce(ctx, i["id"].get<std::string>(), at);
      if (!call || !ctx.isTlCall(*call, "program_id")) continue;
      const Node* axis = (*call)["args"].empty() ? keywordArg(*call, "axis") : &(*call)["args"][0];
      auto d = axis ? intLiteral(*axis) : std::nullopt;
      if (!d || *d < 0 || *d > 2) continue;
      out->index = ctx.slice(i);
      out->index_node = &i;
      out->stride = st["id"].get<std::string>();
      out->axis = static_cast<int>(*d);
      return true;
    }
    return false;
  }

  static bool isSimpleName(const std::string& s) { return std::regex_match(s, std::regex("[A-Za-z_][A-Za-z_0-9]*")); }

  // The loop's statements: the loads, the accumulation, advances and dead index arithmetic.
  static bool matchAccumulation(const PassContext& ctx, const Node& loop, const Node& dot,
                                const std::vector<TileAccess>& loads, Accumulation* acc, std::string* why) {
    const Node& body = loop["body"];
    for (const auto& s : body) {
      if (ctx.range(s).begin <= ctx.range(dot).begin && ctx.range(dot).end <= ctx.range(s).end) acc->stmt = &s;
    }
    if (!acc->stmt) {
      *why = "the tl.dot is not a statement of the K loop's body";
      return false;
    }
    const Node& s = *acc->stmt;
    auto plain = [&](const Node& d) { return &d == &dot; };
    std::string a_name = dot["args"][0]["id"].get<std::string>(), b_name = dot["args"][1]["id"].get<std::string>();
    if (isType(s, "AugAssign") && isType(s["op"], "Add") && isType(s["target"], "Name") && plain(s["value"])) {
      acc->name = s["target"]["id"].get<std::string>();
    } else if (isType(s, "Assign") && s["targets"].size() == 1 && isType(s["targets"][0], "Name")) {
      const std::string t = s["targets"][0]["id"].get<std::string>();
      const Node& v = s["value"];
      auto isT = [&](const Node& e) { return isType(e, "Name") && e["id"] == t; };
      if (isType(v, "BinOp") && isType(v["op"], "Add") &&
          ((isT(v["left"]) && plain(v["right"])) || (isT(v["right"]) && plain(v["left"])))) {
        acc->name = t;
      } else if (plain(v)) {
        const Node* third = v["args"].size() > 2 ? &v["args"][2] : keywordArg(v, "acc");
        if (third && isT(*third)) acc->name = t;
      }
    }
    if (acc->name.empty()) {
      *why = fmt::format("line {}: the dot is not accumulated as `acc += tl.dot(a, b)` or `acc = tl.dot(a, b, acc)`",
                         nodePos(s)->line);
      return false;
    }
    if (dot["args"].size() > 3) {
      *why = "the tl.dot passes more than a, b and acc positionally";
      return false;
    }
    for (const auto& kw : dot["keywords"]) {
      std::string key = kw["arg"].is_string() ? kw["arg"].get<std::string>() : "**";
      std::string value = ctx.slice(kw["value"]);
      if (key == "acc" || key == "out_dtype") continue;
      if (key == "input_precision") {
        acc->precision_ok = value == "\"tf32\"" || value == "'tf32'";
        continue;
      }
      if (key == "allow_tf32") {
        acc->precision_ok = value == "True";
        continue;
      }
      *why = fmt::format("the tl.dot passes {}=...", key);
      return false;
    }
    // The accumulator's start: `acc = tl.zeros(shape, dtype)` at the top level before the loop.
    for (const auto& st : ctx.body()) {
      if (ctx.range(st).begin >= ctx.range(loop).begin) break;
      if (assignedName(st) == acc->name) acc->init = isType(st, "Assign") ? &st : nullptr;
    }
    if (!acc->init || !ctx.isTlCall((*acc->init)["value"], "zeros")) {
      *why = fmt::format("the accumulator '{}' is not made by tl.zeros before the K loop", acc->name);
      return false;
    }
    // The rest of the loop body: the loads, pointer advances, and index arithmetic that the
    // loads alone read.
    std::set<const Node*> known = {acc->stmt};
    for (const auto& t : loads) {
      known.insert(t.stmt);
      if (t.advance) known.insert(t.advance);
    }
    std::set<std::string> after;  // names read after the loop
    for (const auto& st : ctx.body()) {
      if (ctx.range(st).begin >= ctx.range(loop).end) forEachName(st, [&](const Node& n) { after.insert(n["id"]); });
    }
    for (const auto& st : body) {
      if (known.count(&st)) continue;
      std::string name = assignedName(st);
      bool pure = !name.empty() && isType(st, "Assign");
      if (pure) {
        walk(st["value"], [&](const Node& n) {
          if (isType(n, "Call") && !indexArithmetic(ctx, n) && !ctx.isTlCall(n, "arange") &&
              !ctx.isTlCall(n, "max_contiguous")) {
            pure = false;
          }
          return true;
        });
      }
      if (!pure || after.count(name) || mentionsName(*acc->stmt, name)) {
        *why = fmt::format("line {}: the K loop does more than load the two tiles and accumulate their dot (`{}`)",
                           nodePos(st)->line, firstLine(ctx, st));
        return false;
      }
    }
    for (const std::string& n : {a_name, b_name}) {
      if (after.count(n)) {
        *why = fmt::format("the operand '{}' is read after the K loop", n);
        return false;
      }
    }
    return true;
  }

  // A call of integer index arithmetic (tl.cdiv, tl.minimum, tl.maximum, tl.multiple_of).
  static bool indexArithmetic(const PassContext& ctx, const Node& call) {
    std::string fn = ctx.tlFunction(call);
    return fn == "cdiv" || fn == "minimum" || fn == "maximum" || fn == "multiple_of";
  }

  static std::string firstLine(const PassContext& ctx, const Node& st) {
    std::string text = ctx.slice(st);
    return text.substr(0, text.find('\n'));
  }

  // The code the lowering adds: the Gluon partitions and kernel, the launch helper, the route,
  // and the companion the compile check compiles (transform/pass.h).
  struct Emit {
    const PassContext& ctx;
    const Node& loop;
    const TileAccess& A;
    const TileAccess& B;
    const Accumulation& acc;
    const OperandType* type;
    BatchMove batch[2];  // A's and B's batch offsets (axis -1: none)
    int group = 8, stages = 0, warps = 0;
    std::string torch;
    std::string k, gl_kernel, pid[3];
    std::vector<std::string> params, names;  // the kernel's parameters as written; their names

    // The Gluon kernel as the launch takes it for a K-major B (the layout fp8, int8 and tf32
    // need) or an N-major one.
    Companion companion(bool b_kmajor) const {
      Companion c;
      c.kernel = gl_kernel;
      c.types["GRID_0"] = c.types["GRID_1"] = c.types["GRID_2"] = "i32";
      auto desc = [&](int i, const std::string& d0, const std::string& d1) {
        return fmt::format("tensordesc<{}[{}{}, {}]>", type->desc, batch[i].axis >= 0 ? "1, " : "", d0, d1);
      };
      c.types["a_desc"] = desc(0, A.tile[0], A.tile[1]);
      c.types["b_desc"] = b_kmajor ? desc(1, B.tile[1], B.tile[0]) : desc(1, B.tile[0], B.tile[1]);
      c.constexprs["GROUP"] = group;
      c.constexprs["B_KMAJOR"] = b_kmajor ? 1 : 0;
      c.config = "_" + k + "_gluon_config";
      c.config_args = {A.tile[0], B.tile[1], A.tile[1], std::to_string(type->bytes)};
      c.config_sets = {"STAGES", "num_warps"};
      return c;
    }

    // @triton.autotune or @triton.heuristics wrap the kernel: the route goes under them.
    bool underTuner() const { return ctx.kernel->autotune || !ctx.kernel->heuristics.empty(); }

    std::string batchIndex(int i, const TextEdits& edits) const { return sliceWith(ctx, *batch[i].index_node, edits); }

    // Text of the top-level statements in [from, to) (byte offsets of whole lines) with the
    // edits, re-indented to `indent`.
    std::string region(size_t from, size_t to, const TextEdits& edits, const std::string& indent) const {
      return reindent(sliceWith(ctx, Range{from, to}, edits), ctx.bodyIndent(), indent);
    }

    // tl.program_id(d) -> the tile's program id, tl.num_programs(d) -> GRID_d, tl.arange ->
    // Gluon's (its layout left to the uses), the accumulator's tl.zeros given its layout.
    TextEdits carryEdits() const {
      TextEdits edits;
      walk(ctx.body(), [&](const Node& n) {
        if (&n == &loop) return false;
        if (!isType(n, "Call")) return true;
        std::string fn = ctx.tlFunction(n);
        if (fn == "program_id" || fn == "num_programs") {
          const Node* axis = n["args"].empty() ? keywordArg(n, "axis") : &n["args"][0];
          auto d = axis ? intLiteral(*axis) : std::nullopt;
          int ax = d ? static_cast<int>(*d) : -1;
          edits.push_back({ctx.range(n), ax < 0 || ax > 2 ? "?" : (fn == "program_id" ? pid[ax] : fmt::format("GRID_{}", ax))});
          return false;
        }
        if (fn == "arange" || fn == "full" || fn == "zeros" || fn == "zeros_like" || fn == "full_like") {
          Range callee = ctx.range(n["func"]);
          if (&n == &(*acc.init)["value"]) {
            edits.push_back({callee, "_gl.zeros"});
            edits.push_back({Range{ctx.range(n).end - 1, ctx.range(n).end}, ", layout=ACC)"});
          } else {
            edits.push_back({callee, "_gl." + fn});
          }
        }
        return true;
      });
      return edits;
    }

    // The statements the loader needs for its offsets (and the loop's bounds): scalar
    // assignments of the body before the loop and of the loop's body, transitively.
    bool loaderStatements(const std::set<std::string>& seed, std::vector<const Node*>* pro,
                          std::vector<const Node*>* in_loop, std::string* why) const {
      std::set<std::string> need = seed;
      std::set<const Node*> chosen;
      bool grew = true;
      while (grew) {
        grew = false;
        for (const auto* list : {&ctx.body(), &loop["body"]}) {
          for (const auto& st : *list) {
            if (&st == &loop || chosen.count(&st)) continue;
            if (list == &ctx.body() && ctx.range(st).begin > ctx.range(loop).begin) break;
            std::string name = assignedName(st);
            if (name.empty() || !need.count(name)) continue;
            bool scalar = isType(st, "Assign");
            walk(st["value"], [&](const Node& n) {
              if (isType(n, "Subscript")) scalar = false;
              if (isType(n, "Call")) {
                bool ok = indexArithmetic(ctx, n) || ctx.isTlCall(n, "program_id") || ctx.isTlCall(n, "num_programs");
                if (!ok && isType(n["func"], "Name")) {
                  std::string f = n["func"]["id"];
                  ok = f == "min" || f == "max";
                }
                scalar = scalar && ok;
              }
              return true;
            });
            if (!scalar) {
              *why = fmt::format("line {}: a tile offset reads '{}', which is not a scalar computed before the loads",
                                 nodePos(st)->line, name);
              return false;
            }
            chosen.insert(&st);
            forEachName(st["value"], [&](const Node& n) {
              if (need.insert(n["id"].get<std::string>()).second) grew = true;
            });
          }
        }
      }
      // Every name the offsets read is bound by a chosen statement, or is a parameter, the loop's
      // variable, or the module's.
      std::set<std::string> bound;
      for (const Node* st : chosen) bound.insert(assignedName(*st));
      for (const auto& n : need) {
        if (bound.count(n) || ctx.kernel->param(n) || n == loop["target"]["id"] || ctx.ir->module_assignments.count(n) ||
            n == ctx.tl() || n == ctx.triton() || n == "min" || n == "max") {
          continue;
        }
        *why = fmt::format("a tile offset reads '{}', which the kernel does not bind once, as a scalar, before the "
                           "loads",
                           n);
        return false;
      }
      for (const auto& st : ctx.body()) {
        if (chosen.count(&st)) pro->push_back(&st);
      }
      for (const auto& st : loop["body"]) {
        if (chosen.count(&st)) in_loop->push_back(&st);
      }
      return true;
    }

    std::string statements(const std::vector<const Node*>& list, const TextEdits& edits,
                           const std::string& indent) const {
      std::string out;
      for (const Node* st : list) {
        Range r = ctx.lineRange(*st);
        out += region(r.begin, r.end, edits, indent);
      }
      return out;
    }

    // range(args) of the K loop, as written, without tl.range's keywords.
    std::string loopHeader(const TextEdits& edits) const {
      std::vector<std::string> a;
      for (const auto& arg : loop["iter"]["args"]) a.push_back(sliceWith(ctx, arg, edits));
      return fmt::format("for {} in range({}):", ctx.slice(loop["target"]), fmt::join(a, ", "));
    }

    bool build(std::string* out, std::string* why) {
      k = ctx.kernel->name;
      gl_kernel = "_" + k + "_gluon";
      for (int d = 0; d < 3; ++d) pid[d] = ctx.freshName(fmt::format("pid_{}", d));
      // The kernel's parameters, as written (annotations, defaults), and their names.
      for (const auto& p : ctx.kernel->params) {
        std::string text = p.name;
        if (!p.annotation.empty()) text += ": " + p.annotation;
        if (p.default_value) text += " = " + ctx.slice(*p.default_value);
        params.push_back(text);
        names.push_back(p.name);
      }
      for (const char* fixed : {"a_desc", "b_desc", "a_s", "b_s", "ready", "empty", "GRID_0", "GRID_1", "GRID_2",
                                "STAGES", "GROUP", "B_KMAJOR", "ACC", "EPILOGUE", "NBYTES", "WARPS", "tile", "it",
                                "kt", "s", "i"}) {
        if (ctx.kernelNames().count(fixed)) {
          *why = fmt::format("the kernel uses the name '{}', which the Gluon kernel needs", fixed);
          return false;
        }
      }
      TextEdits edits = carryEdits();
      for (const auto& [r, text] : edits) {
        if (text == "?") {
          *why = "a program id or program count is not taken along a literal axis 0, 1 or 2";
          return false;
        }
      }
      // Offsets the loader issues its copies at.
      std::string a0 = A.offset[0], a1 = A.offset[1], b0 = B.offset[0], b1 = B.offset[1];
      std::set<std::string> seed;
      for (const auto& t : {a0, a1, b0, b1, batch[0].index, batch[1].index}) {
        for (const auto& id : identifiers(t)) seed.insert(id);
      }
      for (const auto& arg : loop["iter"]["args"]) {
        forEachName(arg, [&](const Node& n) { seed.insert(n["id"].get<std::string>()); });
      }
      std::vector<const Node*> pro, in_loop;
      if (!loaderStatements(seed, &pro, &in_loop, why)) return false;

      const std::string i1 = kIndent, i2 = std::string(kIndent) + kIndent, i3 = i2 + kIndent, i4 = i3 + kIndent,
                        i5 = i4 + kIndent;
      std::string body_pro;  // the body before the loop, for the MMA partition
      {
        const Node& first = ctx.body()[0];
        size_t from = ctx.lineRange(first).begin;
        bool doc = isType(first, "Expr") && isType(first["value"], "Constant") && first["value"]["vt"] == "str";
        if (doc) from = ctx.lineRange(first).end;
        size_t to = ctx.text().offset(nodePos(loop)->line, 0);
        body_pro = region(from, to, edits, i3);
      }
      std::string body_epi;
      {
        size_t from = ctx.text().offset(nodePos(loop)->end_line + 1, 0);
        size_t to = ctx.text().offset(nodePos(*ctx.kernel->def)->end_line + 1, 0);
        body_epi = region(from, to, edits, i3);
      }
      std::string header = loopHeader(edits);
      // A name the carried statements rebind (a batched kernel's `c_ptr += batch * stride_cb`)
      // starts every tile from the value it had on entry, not from the last tile's.
      LoopEntryValues entry = loopEntryValues(ctx, 0);
      std::string saved, reset;
      for (const auto& l : entry.saved) saved += i2 + l + "\n";
      for (const auto& l : entry.reset) reset += i3 + l + "\n";
      // A copy's coordinates: the batch's first for a 3-D descriptor (its index as the loader
      // computes it: a program id taken from the tile).
      auto coords = [&](int i, const std::string& d0, const std::string& d1) {
        if (batch[i].axis < 0) return fmt::format("[{}, {}]", d0, d1);
        return fmt::format("[{}, {}, {}]", batchIndex(i, edits), d0, d1);
      };
      std::string tiles = fmt::format("tile, GRID_0, GRID_1, GRID_2, GROUP");
      // A partition's or the kernel's definition: `def name(first..., GRID..., the kernel's parameters):`.
      auto def = [&](const std::string& name, std::vector<std::string> first) {
        for (const char* x : {"GRID_0", "GRID_1", "GRID_2", "GROUP: _gl.constexpr", "B_KMAJOR: _gl.constexpr"}) {
          first.push_back(x);
        }
        first.insert(first.end(), params.begin(), params.end());
        return i1 + "@_gluon.jit\n" + i1 + wrapCall("def " + name, first, i1.size()) + ":\n";
      };
      std::string s;
      s += "\n\n# gluon-gemm: " + k +
           " lowered to Gluon for Hopper (persistent programs, a TMA loader warp, an mbarrier ring of stages,\n"
           "# asynchronous wgmma); _" + k + "_gluon_launch routes each launch to it or to the kernel as written.\n";
      s += "try:\n";
      s += i1 + "from triton.experimental import gluon as _gluon\n";
      s += i1 + "from triton.experimental.gluon import language as _gl\n";
      s += i1 + "from triton.experimental.gluon.language.nvidia.hopper import mbarrier as _mbarrier, tma as _tma\n";
      s += i1 + "from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma as _wgmma\n";
      s += i1 + "from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma_wait as _wgmma_wait\n";
      s += i1 + "from triton.experimental.gluon.nvidia.hopper import TensorDescriptor as _TensorDescriptor\n";
      s += "except ImportError:  # a Triton without Gluon's Hopper support: the kernel as written runs\n";
      s += i1 + "_gluon = None\n\n";
      s += "if _gluon is not None:\n\n";
      // the tile -> program ids map
      s += i1 + "@_gluon.jit\n";
      s += i1 + fmt::format("def {}_tile(tile, GRID_0, GRID_1, GRID_2, GROUP: _gl.constexpr):\n", gl_kernel);
      s += i2 + "# programs along axis 0 taken GROUP at a time (tiles that share operands run together)\n";
      s += i2 + "per_plane = GRID_0 * GRID_1\n";
      s += i2 + "t = tile % per_plane\n";
      s += i2 + "width = GROUP * GRID_1\n";
      s += i2 + "first = (t // width) * GROUP\n";
      s += i2 + "rows = _gl.minimum(GRID_0 - first, GROUP)\n";
      s += i2 + "return first + (t % width) % rows, (t % width) // rows, tile // per_plane\n\n";
      // the loader
      std::string pids = fmt::format("{}, {}, {}", pid[0], pid[1], pid[2]);
      s += def(gl_kernel + "_load", {"a_desc", "b_desc", "a_s", "b_s", "ready", "empty"});
      s += i2 + "STAGES: _gl.constexpr = a_s.type.shape[0]\n";
      s += i2 + "NBYTES: _gl.constexpr = a_desc.block_type.nbytes + b_desc.block_type.nbytes\n";
      s += i2 + "it = 0\n";
      s += saved;
      s += i2 + "for tile in range(_gl.program_id(0), GRID_0 * GRID_1 * GRID_2, _gl.num_programs(0)):\n";
      s += reset;
      s += i3 + fmt::format("{} = {}_tile({})\n", pids, gl_kernel, tiles);
      s += statements(pro, edits, i3);
      s += i3 + header + "\n";
      s += statements(in_loop, edits, i4);
      s += i4 + "s = it % STAGES\n";
      s += i4 + "_mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)\n";
      s += i4 + "_mbarrier.expect(ready.index(s), NBYTES)\n";
      s += i4 + fmt::format("_tma.async_copy_global_to_shared(a_desc, {}, ready.index(s), a_s.index(s))\n", coords(0, a0, a1));
      s += i4 + "if B_KMAJOR:\n";
      s += i5 + fmt::format("_tma.async_copy_global_to_shared(b_desc, {}, ready.index(s), b_s.index(s))\n", coords(1, b1, b0));
      s += i4 + "else:\n";
      s += i5 + fmt::format("_tma.async_copy_global_to_shared(b_desc, {}, ready.index(s), b_s.index(s))\n", coords(1, b0, b1));
      s += i4 + "it += 1\n\n";
      // the MMA partition
      s += def(gl_kernel + "_mma", {"a_s", "b_s", "ready", "empty"});
      s += i2 + "STAGES: _gl.constexpr = a_s.type.shape[0]\n";
      s += i2 + "WARPS: _gl.constexpr = _gl.num_warps()\n";
      s += i2 + fmt::format("ACC: _gl.constexpr = _gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[WARPS, 1],\n");
      s += i2 + fmt::format("                                             instr_shape=[16, {}, 256 // a_s.dtype.primitive_bitwidth])\n",
                            B.tile[1]);
      s += i2 + "EPILOGUE: _gl.constexpr = _gl.BlockedLayout([1, 8], [4, 8], [WARPS, 1], [1, 0])\n";
      s += i2 + "it = 0\n";
      s += saved;
      s += i2 + "for tile in range(_gl.program_id(0), GRID_0 * GRID_1 * GRID_2, _gl.num_programs(0)):\n";
      s += reset;
      s += i3 + fmt::format("{} = {}_tile({})\n", pids, gl_kernel, tiles);
      s += body_pro;
      s += i3 + "kt = 0\n";
      s += i3 + header + "\n";
      s += i4 + "s = it % STAGES\n";
      s += i4 + "_mbarrier.wait(ready.index(s), (it // STAGES) & 1)\n";
      // A batched operand's stage is [1, rows, cols]: the MMA reads it as [rows, cols].
      auto stage = [&](int i) {
        const char* x = i == 0 ? "a_s" : "b_s";
        return batch[i].axis < 0 ? fmt::format("{}.index(s)", x)
                                 : fmt::format("{0}.index(s).reshape([{0}.type.shape[2], {0}.type.shape[3]])", x);
      };
      s += i4 + "if B_KMAJOR:\n";
      s += i5 + fmt::format("{0} = _wgmma({1}, {2}.permute((1, 0)), {0}, is_async=True)\n", acc.name, stage(0), stage(1));
      s += i4 + "else:\n";
      s += i5 + fmt::format("{0} = _wgmma({1}, {2}, {0}, is_async=True)\n", acc.name, stage(0), stage(1));
      s += i4 + fmt::format("{0}, _, _ = _wgmma_wait(num_outstanding=1, deps=({0}, a_s.index(s), b_s.index(s)))\n",
                            acc.name);
      s += i4 + "# the stage the previous MMA read is free\n";
      s += i4 + "_mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1, pred=kt > 0)\n";
      s += i4 + "it += 1\n";
      s += i4 + "kt += 1\n";
      s += i3 + fmt::format("{0} = _wgmma_wait(num_outstanding=0, deps=({0},))\n", acc.name);
      s += i3 + "_mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1, pred=kt > 0)\n";
      s += i3 + fmt::format("{0} = _gl.convert_layout({0}, EPILOGUE)\n", acc.name);
      s += body_epi;
      s += "\n";
      // the kernel: shared memory, barriers, the fork
      s += def(gl_kernel, {"a_desc", "b_desc", "STAGES: _gl.constexpr"});
      for (int i = 0; i < 2; ++i) {
        const char* x = i == 0 ? "a" : "b";
        std::string block = batch[i].axis < 0
                                ? fmt::format("{0}_desc.block_type.shape[0], {0}_desc.block_type.shape[1]", x)
                                : fmt::format("1, {0}_desc.block_type.shape[1], {0}_desc.block_type.shape[2]", x);
        s += i2 + fmt::format("{0}_s = _gl.allocate_shared_memory({0}_desc.dtype, [STAGES, {1}],\n", x, block);
        s += i2 + fmt::format("                                  {}_desc.layout)\n", x);
      }
      s += i2 + "ready = _gl.allocate_shared_memory(_gl.int64, [STAGES, 1], _mbarrier.MBarrierLayout())\n";
      s += i2 + "empty = _gl.allocate_shared_memory(_gl.int64, [STAGES, 1], _mbarrier.MBarrierLayout())\n";
      s += i2 + "for i in _gl.static_range(STAGES):\n";
      s += i3 + "_mbarrier.init(ready.index(i), count=1)\n";
      s += i3 + "_mbarrier.init(empty.index(i), count=1)\n";
      auto partition = [&](const std::string& fn, std::vector<std::string> args) {
        for (const char* x : {"GRID_0", "GRID_1", "GRID_2", "GROUP", "B_KMAJOR"}) args.push_back(x);
        args.insert(args.end(), names.begin(), names.end());
        std::string head = "(" + fn + ", ";
        return i3 + head + wrapCall("", args, i3.size() + head.size()) + "),\n";
      };
      s += i2 + "_gl.warp_specialize([\n";
      s += partition(gl_kernel + "_mma", {"a_s", "b_s", "ready", "empty"});
      s += partition(gl_kernel + "_load", {"a_desc", "b_desc", "a_s", "b_s", "ready", "empty"});
      s += i2 + "], [1], [24])\n\n\n";
      s += launchHelper();
      if (underTuner()) {
        s += fmt::format("\n\n_{0}_GluonRoute.under({0}, _{0}_gluon_launch)\n", k);
      } else {
        s += fmt::format("\n\n{0} = _{0}_GluonRoute({0}, _{0}_gluon_launch)\n", k);
      }
      *out = s;
      return true;
    }

    // The host side: the route object and the launch helper.
    std::string launchHelper() const {
      const std::string i1 = kIndent, i2 = std::string(kIndent) + kIndent;
      const std::string a = A.base, b = B.base;
      std::string s;
      // dtypes wgmma takes
      std::string dtypes;
      for (const auto& t : kOperandTypes) {
        if (std::string(t.signature) == "*fp32" && !acc.precision_ok) continue;
        if (type && type != &t) continue;
        dtypes += fmt::format("{}{}getattr({}, \"{}\", None): _gl.{},\n", i1, i1, torch, t.torch, t.gluon);
      }
      s += fmt::format("def _{}_gluon_types():\n", k);
      s += i1 + "return {\n" + dtypes + i1 + "} if _gluon is not None else {}\n\n\n";
      s += fmt::format("_{}_GLUON_SMS = {{}}\n\n\n", k);
      s += fmt::format("def _{}_gluon_config(bm, bn, bk, es, stages={}, warps={}):\n", k, stages, warps);
      s += i1 + "\"\"\"Stages of the operand ring (0: as many as fit 160 KiB, 2 to 6) and warps of the MMA partition "
                "for these tiles\n";
      s += i1 + "(es: bytes per element), or None when wgmma and TMA do not take them (the kernel as written "
                "runs).\"\"\"\n";
      s += i1 + "if not stages:\n";
      s += i2 + "stages = max(2, min(6, (160 * 1024) // max(1, (bm + bn) * bk * es)))\n";
      s += i1 + "if not warps:\n";
      s += i2 + "warps = 8 if bm * bn >= 128 * 256 else 4\n";
      s += i1 + "if bm % (16 * warps) or bn % 16 or bn > 256 or bm > 256 or (bk * es) % 32 or bk > 256:\n";
      s += i2 + "return None\n";
      s += i1 + "return stages, warps\n\n\n";
      {
        std::vector<std::string> args = {"grid"};
        args.insert(args.end(), params.begin(), params.end());
        args.push_back("**options");
        s += wrapCall(fmt::format("def _{}_gluon_launch", k), args, 0) + ":\n";
      }
      s += i1 + fmt::format("\"\"\"Launches the Gluon lowering of {} and returns the launched kernel, or says False when "
                            "this call does not fit it\n",
                            k);
      s += i1 + "(no Gluon, not a Hopper GPU, operands TMA or wgmma cannot take): the caller then launches the "
                "kernel as written.\"\"\"\n";
      s += i1 + fmt::format("a, b = {}, {}\n", a, b);
      s += i1 + fmt::format("types = _{}_gluon_types()\n", k);
      s += i1 + fmt::format("if (not isinstance(a, {0}.Tensor) or not isinstance(b, {0}.Tensor) or not a.is_cuda or "
                            "a.dtype != b.dtype\n",
                            torch);
      s += i1 + fmt::format("        or types.get(a.dtype) is None or {}.cuda.get_device_capability(a.device)[0] != 9):\n",
                            torch);
      s += i2 + "return False\n";
      s += i1 + "es = a.element_size()\n";
      // A: rows along K.
      std::string a_row = A.stride[0], a_k = A.stride[1];
      s += i1 + fmt::format("if {} != 1 or ({} * es) % 16 or a.data_ptr() % 16 or b.data_ptr() % 16:\n", a_k, a_row);
      s += i2 + "return False\n";
      std::string b_k = B.stride[0], b_n = B.stride[1];
      s += i1 + fmt::format("if {} == 1 and ({} * es) % 16 == 0:\n", b_k, b_n);
      s += i2 + "b_kmajor = True\n";
      s += i1 + fmt::format("elif es == 2 and {} == 1 and ({} * es) % 16 == 0:\n", b_n, b_k);
      s += i2 + "b_kmajor = False\n";
      s += i1 + "else:\n";
      s += i2 + "return False\n";
      s += i1 + fmt::format("bm, bn, bk = {}, {}, {}\n", A.tile[0], B.tile[1], A.tile[1]);
      s += i1 + fmt::format("config = _{}_gluon_config(bm, bn, bk, es)\n", k);
      s += i1 + "if config is None:\n";
      s += i2 + "return False\n";
      s += i1 + "stages, warps = config\n";
      s += i1 + fmt::format("if callable(grid):\n");
      {
        std::vector<std::string> kv;
        for (const auto& p : names) kv.push_back(fmt::format("{0}={0}", p));
        kv.push_back("**options");
        s += i2 + "grid = grid(" + wrapCall("dict", kv, i2.size() + 12) + ")\n";
      }
      s += i1 + "grid = tuple(grid) + (1,) * (3 - len(grid))\n";
      s += i1 + "tiles = grid[0] * grid[1] * grid[2]\n";
      s += i1 + "if tiles <= 0:\n";
      s += i2 + "return False\n";
      // The descriptors: 2-D over the extents the masks give, or 3-D for a batched operand (the
      // batch first: its extent the grid's along the program id, its stride the kernel's).
      auto descriptor = [&](int i, const std::string& x, const std::string& e0, const std::string& e1,
                            const std::string& row, const std::string& block) {
        const BatchMove& m = batch[i];
        std::string shape = m.axis < 0 ? fmt::format("[{}, {}]", e0, e1) : fmt::format("[grid[{}], {}, {}]", m.axis, e0, e1);
        std::string strides = m.axis < 0 ? fmt::format("[{}, 1]", row) : fmt::format("[{}, {}, 1]", m.stride, row);
        std::string blk = m.axis < 0 ? block : "[1, " + block.substr(1);
        return fmt::format("{0}_desc = _TensorDescriptor({0}, {1}, {2}, {3},\n{4}                           "
                           "_gl.NVMMASharedLayout.get_default_for({3}, dt))\n",
                           x, shape, strides, blk, i == 0 ? i1 : i2);
      };
      for (int i = 0; i < 2; ++i) {
        if (batch[i].axis < 0) continue;
        s += i1 + fmt::format("if {0} <= 0 or ({0} * es) % 16:  # TMA's strides: positive, multiples of 16 bytes\n", batch[i].stride);
        s += i2 + "return False\n";
      }
      s += i1 + "dt = types[a.dtype]\n";
      s += i1 + descriptor(0, "a", A.extent[0], A.extent[1], a_row, "[bm, bk]");
      s += i1 + "if b_kmajor:\n";
      s += i2 + descriptor(1, "b", B.extent[1], B.extent[0], b_n, "[bn, bk]");
      s += i1 + "else:\n";
      s += i2 + descriptor(1, "b", B.extent[0], B.extent[1], b_k, "[bk, bn]");
      s += i1 + fmt::format("sms = _{}_GLUON_SMS.get(a.device.index)\n", k);
      s += i1 + "if sms is None:\n";
      s += i2 + fmt::format("sms = _{}_GLUON_SMS[a.device.index] = {}.cuda.get_device_properties(a.device).multi_processor_count\n",
                            k, torch);
      {
        std::vector<std::string> args = {"a_desc", "b_desc", "stages", "grid[0]", "grid[1]", "grid[2]",
                                         std::to_string(group), "b_kmajor"};
        args.insert(args.end(), names.begin(), names.end());
        args.push_back("num_warps=warps");
        s += i1 + "return " + wrapCall(gl_kernel + "[(min(sms, tiles),)]", args, i1.size() + 7) + "\n\n\n";
      }
      s += launchRouteClass(fmt::format("_{}_GluonRoute", k),
                            fmt::format("{} launched through its Gluon lowering where the call fits it, as written "
                                        "otherwise (`.fn` is the kernel).",
                                        k),
                            underTuner());
      return s;
    }

  };

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeGluonGemmPass() { return std::make_unique<GluonGemmPass>(); }

}  // namespace tf
