// What a launcher does to a kernel's output after the launch, done by the kernel instead: two
// passes over one analysis of the buffers a launch fills (allocated by the launching function,
// passed for a pointer parameter that the kernel only stores through, and afterwards used only
// for its metadata and for that one epilogue).
//
// fused-sum: a whole-tensor sum that the launcher takes of a tensor the kernel fills, taken by
// the kernel instead. Loss kernels write one term per element (or per row) into a buffer the
// launcher allocates, and the launcher reduces it with torch afterwards:
//
//   loss = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
//   kernel[grid](x, ..., loss, loss.stride(0), ...)          # tl.store(loss_ptr + offs, terms, mask=m)
//   loss = torch.sum(loss)
//
// Zeroing the buffer, writing it and reading it back cost three passes over a tensor as large
// as the input (for Liger's JSD loss at 2048 x 128256 in float32, 1 GiB each) that nothing else
// reads. After the pass, each store adds the sum of what it would have written into one of
// 1,024 slots of an accumulator (a @triton.jit helper: the values rounded to the buffer's dtype
// as the store would, broadcast to the store's addresses, masked, summed in float32 (float64
// for a float64 buffer), one tl.atomic_add per store into the slot its program ids pick), and
// the launcher sums the slots:
//
//   loss = torch.empty(x.shape, dtype=torch.float32, device=x.device)      # shape and strides only
//   loss_total = torch.zeros(1024, dtype=torch.promote_types(loss.dtype, torch.float32), device=loss.device)
//   kernel[grid](x, ..., loss, loss.stride(0), ..., loss_ptr_total=loss_total)
//   loss = loss_total.sum().to(loss.dtype)
//
// What changes: the order of the additions (atomics land in any order, so the last bits of
// the sum may differ from run to run, as with any atomic reduction), never what is summed.
// Refused: a buffer read, returned or passed anywhere else than the launch, its metadata
// (shape, strides, dtype, device) and one whole-tensor sum or mean after the launch; a kernel
// that loads through the pointer, passes it to a function, or makes a block pointer of it; a
// launch in a loop (several launches would add into one sum what each overwrote);
// @triton.autotune kernels (the autotuner's timing runs would add into the sum again). A
// buffer of integers fails the helper's static assertion at compile time (the candidate is
// refused by the measurement). A kernel that writes an element twice would count it twice:
// verification against the reference decides.
//
// A sum along one dimension (`dW = _dW.sum(0)` of per-program partial rows) is taken through a
// stride-0 view of a zeroed accumulator instead (FusedSumPass::alongDimension).
//
// fused-cast: an output the launcher converts to another dtype after the launch, written in
// that dtype by the kernel. DeepSeek's weight dequantization writes float32 (the default
// dtype) and returns `y.to(torch.bfloat16)`: 4 bytes written, 4 read and 2 written again per
// element where 2 suffice. The buffer is allocated in the final dtype and the conversion
// dropped; tl.store converts the stored values to the pointer's element type itself, as torch's
// conversion would have (round to nearest even), so only values stored from a wider type than
// the buffer's could round differently (twice before, once now): verification decides. The
// kernel is not edited.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <set>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

using Parents = std::vector<const Node*>;

// Calls fn(node, parents) on every node below `n`, `parents` the chain from `n` down.
void walkWithParents(const Node& n, Parents& parents, const std::function<void(const Node&, const Parents&)>& fn) {
  if (n.is_object()) {
    if (!n.contains("_t")) return;
    fn(n, parents);
    parents.push_back(&n);
    for (const auto& [k, v] : n.items()) {
      if (k == "_t" || k == "_p") continue;
      if (v.is_object() || v.is_array()) walkWithParents(v, parents, fn);
    }
    parents.pop_back();
  } else if (n.is_array()) {
    for (const auto& c : n) walkWithParents(c, parents, fn);
  }
}

// Is `target` the node `root` or one below it?
bool contains(const Node& root, const Node* target) {
  bool found = false;
  walk(root, [&](const Node& n) {
    if (&n == target) found = true;
    return !found;
  });
  return found;
}

bool isStatement(const Node& n) {
  static const std::set<std::string> kStatements = {"Expr", "Assign", "AugAssign", "AnnAssign", "If",
                                                    "For",  "While",  "Return",    "With",      "Assert",
                                                    "Pass", "Break",  "Continue",  "Try",       "FunctionDef"};
  return n.is_object() && kStatements.count(nodeType(n)) > 0;
}

bool isLoop(const Node& n) {
  return isType(n, "For") || isType(n, "While") || isType(n, "ListComp") || isType(n, "GeneratorExp") ||
         isType(n, "SetComp") || isType(n, "DictComp");
}

// A tensor's metadata read through an attribute: it keeps no claim on the tensor's values.
bool isMetadataAttribute(const std::string& attr) {
  static const std::set<std::string> kMeta = {"stride",     "shape",         "size",         "numel",
                                              "dtype",      "device",        "dim",          "ndim",
                                              "ndimension", "is_contiguous", "element_size", "is_cuda"};
  return kMeta.count(attr) > 0;
}

// What the launcher does to a buffer after the launch.
enum class Epilogue {
  kSum,   // torch.sum(t), t.sum(), torch.mean(t), t.mean()
  kCast,  // t.to(dtype), t.to(dtype=...), t.bfloat16(), t.half(), t.float(), t.double()
};

// One use of the buffer after the launch: the call, whether it is a mean, and for a conversion
// the dtype: the expression `.to(...)` names, or torch's name of it for `.half()` and the like.
struct PostUse {
  const Node* call = nullptr;
  bool mean = false;
  const Node* dtype_expr = nullptr;
  std::string dtype_short;  // "float16" for .half(), when dtype_expr is null
  std::string dtype;        // the dtype's text in the launcher (bufferUses)
  std::optional<int64_t> dim = std::nullopt;  // a sum along it (t.sum(0), torch.sum(t, dim=-1)); none: whole
};

// One launch's buffer: the tensor the launcher allocates, passes for a pointer parameter and
// afterwards only sums or converts.
struct Buffer {
  const LaunchSite* site = nullptr;
  const Node* fn = nullptr;          // the launching function's def
  std::string tensor;                // its local name
  std::string param;                 // the kernel parameter it is passed for
  const Node* alloc_stmt = nullptr;  // `tensor = torch.zeros(...)`
  const Node* alloc_call = nullptr;  // the allocation's call
  std::string alloc_new;             // fused-sum: the callee's replacement ("" : already empty)
  std::vector<PostUse> uses;         // after the launch
  const Node* rebinding = nullptr;   // `tensor = <use>` at the function's top level
  bool maybe_none = false;           // also bound to None (`_dW = None` in another branch)
};

// Is the Name `n` (its parents `up`) the tensor of an epilogue call? The call, else nullopt;
// `other` says why a call of that kind is refused (options, a dimension).
std::optional<PostUse> postUse(const ModuleIR& ir, Epilogue kind, const Node& n, const Parents& up,
                               const std::string& name, std::string* other) {
  const Node* parent = up.empty() ? nullptr : up.back();
  const Node* grand = up.size() > 1 ? up[up.size() - 2] : nullptr;
  int line = nodePos(n)->line;
  bool method =
      parent && isType(*parent, "Attribute") && grand && isType(*grand, "Call") && &(*grand)["func"] == parent;
  std::string attr = method ? (*parent)["attr"].get<std::string>() : "";
  if (kind == Epilogue::kSum) {
    // The call's arguments after the tensor: none (the whole sum) or one dimension, an integer
    // written in the source, positional or `dim=`; anything else (a tuple of dimensions, keepdim,
    // dtype) is refused.
    auto sumOf = [&](const Node& call, size_t skip, bool mean, const std::string& spelled) -> std::optional<PostUse> {
      const Node& args = call["args"];
      const Node& kws = call["keywords"];
      const Node* dim = nullptr;
      if (args.size() == skip + 1 && kws.empty()) dim = &args[skip];
      if (args.size() == skip && kws.size() == 1) dim = keywordArg(call, "dim");
      PostUse u;
      u.call = &call;
      u.mean = mean;
      if (args.size() == skip && kws.empty()) return u;
      std::optional<int64_t> d = dim ? intLiteral(*dim) : std::nullopt;
      if (!d) {
        *other = fmt::format("line {}: {} sums along dimensions or with options this pass does not read", line,
                             spelled);
        return std::nullopt;
      }
      u.dim = d;
      return u;
    };
    if (attr == "sum" || attr == "mean") return sumOf(*grand, 0, attr == "mean", name + "." + attr + "(...)");
    if (parent && isType(*parent, "Call") && !(*parent)["args"].empty() && &(*parent)["args"][0] == &n) {
      std::string q = ir.qualifiedName((*parent)["func"]);
      if (q == "torch.sum" || q == "torch.mean") return sumOf(*parent, 1, q == "torch.mean", q + "(" + name + ", ...)");
    }
    return std::nullopt;
  }
  static const std::map<std::string, std::string> kShort = {
      {"bfloat16", "bfloat16"}, {"half", "float16"}, {"float", "float32"}, {"double", "float64"}};
  if (kShort.count(attr) && (*grand)["args"].empty() && (*grand)["keywords"].empty()) {
    PostUse u;
    u.call = grand;
    u.dtype_short = kShort.at(attr);
    return u;
  }
  if (attr != "to") return std::nullopt;
  const Node& call = *grand;
  const Node* dtype = nullptr;
  if (call["args"].size() == 1 && call["keywords"].empty()) dtype = &call["args"][0];
  if (call["args"].empty() && call["keywords"].size() == 1 && keywordArg(call, "dtype")) {
    dtype = &call["keywords"][0]["value"];
  }
  // A dtype, not a device or a tensor: torch.<dtype>, x.dtype, or a name that says so.
  static const std::set<std::string> kDtypes = {"float16", "half",   "bfloat16",      "float32",     "float",
                                                "float64", "double", "int8",          "uint8",       "int16",
                                                "int32",   "int64",  "float8_e4m3fn", "float8_e5m2", "bool"};
  bool is_dtype = false;
  if (dtype) {
    std::string q = ir.qualifiedName(*dtype);
    if (q.rfind("torch.", 0) == 0 && kDtypes.count(q.substr(6))) is_dtype = true;
    if (isType(*dtype, "Attribute") && (*dtype)["attr"] == "dtype") is_dtype = true;
    if (isType(*dtype, "Name") && (*dtype)["id"].get<std::string>().find("dtype") != std::string::npos) is_dtype = true;
    if (!call["keywords"].empty()) is_dtype = true;
  }
  if (!is_dtype) {
    *other = fmt::format("line {}: {}.to(...) is not a conversion to one dtype", line, name);
    return std::nullopt;
  }
  PostUse u;
  u.call = grand;
  u.dtype_expr = dtype;
  return u;
}

// `t = <epilogue of t>`: the value's epilogue call, else nullptr.
const Node* epilogueValue(const ModuleIR& ir, Epilogue kind, const Node& value, const std::string& name) {
  const Node* found = nullptr;
  Parents parents;
  walkWithParents(value, parents, [&](const Node& n, const Parents& up) {
    if (found || !isType(n, "Name") || n["id"] != name) return;
    std::string refused;  // a refused epilogue is no rebinding
    auto use = postUse(ir, kind, n, up, name, &refused);
    if (use && use->call == &value) found = use->call;
  });
  return found;
}

// `name`'s uses in `f`: one allocation, the launch, metadata, epilogue calls after the launch.
// nullopt without a reason when it has no epilogue at all.
std::optional<Buffer> bufferUses(const PassContext& ctx, Epilogue kind, const FunctionInfo& f, const LaunchSite& site,
                                 const std::string& name, const Node& launch_arg, const std::string& torch,
                                 std::string* why) {
  Buffer b;
  b.tensor = name;
  const ModuleIR& ir = *ctx.ir;
  const size_t launch_at = ctx.range(*site.call).begin;
  std::string other;  // the first use that is none of those
  bool launch_in_loop = false;
  // `t = torch.sum(t)` at the function's top level (or in a `with`) rebinds the name to the
  // result: what follows it reads the result, not the buffer.
  size_t rebound_at = std::string::npos;
  Parents parents;
  walkWithParents(f.def->at("body"), parents, [&](const Node& n, const Parents& up) {
    if (b.rebinding || !isType(n, "Assign") || assignedName(n) != name || ctx.range(n).begin < launch_at) return;
    bool nested = std::any_of(up.begin(), up.end(), [](const Node* p) {
      return isStatement(*p) && !isType(*p, "With") && !isType(*p, "FunctionDef");
    });
    if (!nested && epilogueValue(ir, kind, n["value"], name)) {
      b.rebinding = &n;
      rebound_at = ctx.range(n).end;
    }
  });
  walkWithParents(f.def->at("body"), parents, [&](const Node& n, const Parents& up) {
    if (&n == site.call) {
      launch_in_loop = std::any_of(up.begin(), up.end(), [](const Node* p) { return isLoop(*p); });
    }
    // Every use is read (the first other one is kept): a refusal names the use that blocks
    // an epilogue found later (the buffer passed to another kernel in a branch before its sum).
    if (!isType(n, "Name") || n["id"] != name) return;
    if (&n == &launch_arg) return;
    if (ctx.range(n).begin >= rebound_at) return;  // the result, under the buffer's name
    int line = nodePos(n)->line;
    if (n.value("ctx", "") == "Store") return;  // the assignments are checked below
    const Node* parent = up.empty() ? nullptr : up.back();
    // t.stride(0), t.shape, t.dtype ...
    if (parent && isType(*parent, "Attribute") && isMetadataAttribute((*parent)["attr"])) return;
    std::string refused;
    auto use = postUse(ir, kind, n, up, name, &refused);
    if (!refused.empty() && other.empty()) other = refused;
    if (use) {
      if (ctx.range(*use->call).begin < launch_at) {
        if (other.empty()) {
          other = fmt::format("line {}: {} is {} before the launch", line, name,
                              kind == Epilogue::kSum ? "summed" : "converted");
        }
        return;
      }
      if (kind == Epilogue::kCast) {
        use->dtype = use->dtype_expr ? ctx.slice(*use->dtype_expr) : torch + "." + use->dtype_short;
      }
      b.uses.push_back(*use);
      return;
    }
    if (other.empty()) {
      // Passed to another launch (of another kernel, in another branch): that kernel would
      // see the buffer as this pass leaves it.
      const Node* call = parent && isType(*parent, "Call") ? parent : nullptr;
      if (call && isType(call->at("func"), "Subscript")) {
        other = fmt::format("line {}: {} is passed to another launch ({}), which this pass does not rewrite", line,
                            name, ctx.slice(call->at("func").at("value")));
      } else {
        other = fmt::format("line {}: {} is used otherwise than {} after the launch", line, name,
                            kind == Epilogue::kSum ? "summed (whole or along one dimension)"
                                                   : "converted to another dtype");
      }
    }
  });
  if (b.uses.empty()) {
    // No epilogue (no reason), unless there is one this pass refuses.
    if (other.find(" sums ") != std::string::npos || other.find("conversion") != std::string::npos) *why = other;
    return std::nullopt;
  }
  if (!other.empty()) {
    *why = other;
    return std::nullopt;
  }
  if (launch_in_loop) {
    *why = fmt::format("the launch of {} that fills {} is inside a loop", ctx.kernel->name, name);
    return std::nullopt;
  }
  // The allocation: the one assignment before the rebinding.
  std::vector<const Node*> assigns;
  if (auto as = f.assignments.find(name); as != f.assignments.end()) {
    for (const Assignment& a : as->second) {
      if (a.stmt == b.rebinding || ctx.range(*a.stmt).begin >= rebound_at) continue;
      if (a.augmented) {
        assigns.push_back(a.stmt);  // refused below: not one plain allocation
        continue;
      }
      // `t = None` where the tensor is not wanted (`if weight is not None: t = torch.empty(...)
      // else: t = None`): the launch passes None then, and the launcher does not sum it.
      if (isType(*a.stmt, "Assign") && a.stmt->at("targets").size() == 1 &&
          isType(a.stmt->at("value"), "Constant") && a.stmt->at("value").value("vt", "") == "None") {
        b.maybe_none = true;
        continue;
      }
      assigns.push_back(a.stmt);
    }
  }
  if (assigns.size() != 1 || !isType(*assigns[0], "Assign") || assigns[0]->at("targets").size() != 1 ||
      !isType(assigns[0]->at("targets")[0], "Name")) {
    *why = fmt::format("{} is not allocated by one assignment `{} = torch.empty(...)` in {}", name, name, f.name);
    return std::nullopt;
  }
  const Node& stmt = *assigns[0];
  if (ctx.range(stmt).begin > launch_at) {
    *why = fmt::format("{} is assigned after the launch", name);
    return std::nullopt;
  }
  const Node& value = stmt["value"];
  std::string q = isType(value, "Call") ? ir.qualifiedName(value["func"]) : "";
  std::string attr =
      isType(value, "Call") && isType(value["func"], "Attribute") ? value["func"]["attr"].get<std::string>() : "";
  bool zeros = q == "torch.zeros" || q == "torch.zeros_like" || (q.rfind("torch.", 0) != 0 && attr == "new_zeros");
  bool empty = q == "torch.empty" || q == "torch.empty_like" || (q.rfind("torch.", 0) != 0 && attr == "new_empty");
  if (!zeros && !empty) {
    *why = fmt::format(
        "{} is not allocated by torch.zeros / torch.empty / zeros_like / empty_like / new_zeros / "
        "new_empty",
        name);
    return std::nullopt;
  }
  b.alloc_stmt = &stmt;
  b.alloc_call = &value;
  if (zeros) {
    if (q == "torch.zeros")
      b.alloc_new = torch + ".empty";
    else if (q == "torch.zeros_like")
      b.alloc_new = torch + ".empty_like";
    else
      b.alloc_new = ctx.slice(value["func"]["value"]) + ".new_empty";
  }
  return b;
}

// The buffers one launch fills whose epilogue is `kind`, each with the pointer parameter it is
// passed for; empty and `why` when there is none (or one is refused).
std::vector<Buffer> filledBuffers(const PassContext& ctx, Epilogue kind, const LaunchSite& site,
                                  const std::string& torch, std::string* why) {
  const ModuleIR& ir = *ctx.ir;
  auto fit = ir.functions.find(site.function);
  if (fit == ir.functions.end() || !fit->second.def) {
    *why = fmt::format("the function that launches {} is not found", ctx.kernel->name);
    return {};
  }
  const FunctionInfo& f = fit->second;
  std::vector<Buffer> found;
  std::string reason;
  for (const LaunchArg& a : site.args) {
    const Param* p = ctx.kernel->param(a.param);
    if (!p || p->is_constexpr || !isType(*a.expr, "Name")) continue;
    std::string name = (*a.expr)["id"];
    std::string r;
    auto b = bufferUses(ctx, kind, f, site, name, *a.expr, torch, &r);
    if (!b) {
      if (!r.empty() && reason.empty()) reason = r;
      continue;
    }
    b->site = &site;
    b->fn = f.def;
    b->param = a.param;
    found.push_back(*b);
  }
  if (found.empty()) {
    *why = !reason.empty() ? reason
           : kind == Epilogue::kSum
               ? fmt::format(
                     "no tensor that {} launches {} with is summed after the launch (torch.sum(t), "
                     "t.sum(), t.sum(0), t.mean())",
                     site.function, ctx.kernel->name)
               : fmt::format(
                     "no tensor that {} launches {} with is converted to another dtype after the launch "
                     "(t.to(dtype), t.bfloat16(), ...)",
                     site.function, ctx.kernel->name);
  } else if (!reason.empty()) {
    *why = reason;  // another buffer's epilogue is refused: the launch is left as written
    return {};
  }
  return found;
}

// Does the kernel use `param` (and the names derived from it) only as the address of
// tl.store statements? Those stores, in source order.
bool storesOnly(const PassContext& ctx, const std::string& param, std::vector<const Node*>* stores, std::string* why) {
  std::set<std::string> derived = ctx.derivedFrom(param);
  derived.insert(param);
  std::set<const Node*> seen;
  std::string bad;
  Parents parents;
  walkWithParents(ctx.body(), parents, [&](const Node& n, const Parents& up) {
    if (!bad.empty() || !isType(n, "Name") || !derived.count(n["id"].get<std::string>())) return;
    int line = nodePos(n)->line;
    if (n.value("ctx", "") == "Store") {
      // Bound from the pointer: checked at its uses (`p = base + offs`, `p += step`).
      return;
    }
    // The innermost call and statement around the name.
    const Node* call = nullptr;
    size_t call_at = 0;
    for (size_t i = up.size(); i-- > 0;) {
      if (isType(*up[i], "Call")) {
        call = up[i];
        call_at = i;
        break;
      }
      if (isStatement(*up[i])) break;
    }
    if (call) {
      const Node* ptr = (*call)["args"].empty() ? keywordArg(*call, "pointer") : &(*call)["args"][0];
      bool in_ptr = ptr && contains(*ptr, &n);
      if (ctx.isTlCall(*call, "store") && in_ptr) {
        const Node* stmt = call_at > 0 ? up[call_at - 1] : nullptr;
        if (!stmt || !isType(*stmt, "Expr") || &(*stmt)["value"] != call) {
          bad = fmt::format("line {}: the tl.store through '{}' is not a statement of its own", line, param);
          return;
        }
        if (seen.insert(call).second) stores->push_back(call);
        return;
      }
      bad = fmt::format("line {}: '{}' is passed to {} (only tl.store's address may use it)", line,
                        n["id"].get<std::string>(), ctx.slice((*call)["func"]));
      return;
    }
    // Pointer arithmetic bound to a derived name: `p = param + offs`, `param += step`.
    for (size_t i = up.size(); i-- > 0;) {
      if (!isStatement(*up[i])) continue;
      std::string target = assignedName(*up[i]);
      if (!target.empty() && derived.count(target)) return;
      break;
    }
    bad = fmt::format("line {}: '{}' is read otherwise than as a tl.store's address", line, n["id"].get<std::string>());
  });
  if (!bad.empty()) {
    *why = bad;
    return false;
  }
  std::sort(stores->begin(), stores->end(),
            [&](const Node* a, const Node* b) { return ctx.range(*a).begin < ctx.range(*b).begin; });
  return true;
}

// Every launch is one the passes read: in a function of this file, without *args.
bool launchForms(const PassContext& ctx, std::string* why) {
  if (ctx.sites.empty()) {
    *why = fmt::format("no launch of {} inside a function of this file", ctx.kernel->name);
    return false;
  }
  for (const LaunchSite* site : ctx.sites) {
    if (site->function.empty()) {
      *why = fmt::format("{} is launched at module level", ctx.kernel->name);
      return false;
    }
    // **options leave every visible argument's parameter known (only more keywords come
    // from the dict); after *args the positions are not.
    if (hidesArguments(*ctx.ir, *site, *ctx.kernel, why)) return false;
  }
  return true;
}

// The buffers each launch fills whose epilogue is `kind` (one list per launch, none empty), and
// the module's spelling of torch; nullopt and `why` when a launch fills none, or the module or
// a launch is of a form the passes do not read.
std::optional<std::vector<std::vector<Buffer>>> launchBuffers(const PassContext& ctx, Epilogue kind, std::string* torch,
                                                              std::string* why) {
  *torch = torchAlias(ctx);
  if (torch->empty()) {
    *why = "the module does not import torch (import torch)";
    return std::nullopt;
  }
  if (!launchForms(ctx, why)) return std::nullopt;
  std::vector<std::vector<Buffer>> out;
  for (const LaunchSite* site : ctx.sites) {
    std::vector<Buffer> found = filledBuffers(ctx, kind, *site, *torch, why);
    if (found.empty()) return std::nullopt;
    out.push_back(std::move(found));
  }
  return out;
}

// `base`, or `base_2`, ...: a name the module's text does not hold.
std::string freshModuleName(const PassContext& ctx, const std::string& base) {
  const std::string& text = ctx.text().text();
  for (int i = 1;; ++i) {
    std::string name = i == 1 ? base : fmt::format("{}_{}", base, i);
    if (text.find(name) == std::string::npos) return name;
  }
}

// `base`, or `base_2`, ...: a name the function does not mention.
std::string freshLocal(const Node& fn, const std::string& base) {
  std::set<std::string> names;
  walk(fn, [&](const Node& n) {
    if (isType(n, "Name")) names.insert(n["id"].get<std::string>());
    if (isType(n, "arg")) names.insert(n["arg"].get<std::string>());
    return true;
  });
  for (int i = 1;; ++i) {
    std::string name = i == 1 ? base : fmt::format("{}_{}", base, i);
    if (!names.count(name)) return name;
  }
}

// The accumulator's slots: each program adds into slot (its program ids, mixed) % kSlots, and
// the launcher sums the slots. Measured on an H100 (the golden elementwise loss at 2048 x
// 32000, 125 blocks per row): one slot took every program's atomics in turn, 0.494 ms against
// 0.439 ms as written.
constexpr int kSlots = 1024;

class FusedSumPass : public Pass {
 public:
  FusedSumPass() {
    info_.name = "fused-sum";
    info_.summary =
        "A sum the launcher takes of a buffer the kernel fills, whole (torch.sum(loss)) or along one dimension "
        "(_dW.sum(0) of partial rows), taken by the kernel: each store adds atomically into an accumulator "
        "(its block's sum into one of its slots, or its values into the one row a stride-0 view gives every "
        "program), and the buffer is neither zeroed, written nor read back";
    info_.preconditions = {
        "every launch passes, for each such pointer parameter, a tensor that its function allocates "
        "(torch.zeros/empty[_like], new_zeros/new_empty; or None in another branch) and afterwards only sums, "
        "whole or along one dimension written as an integer (torch.sum(t), t.sum(), t.sum(0), torch.mean(t, dim=1)), "
        "besides reading its shape, strides, dtype or device; a sum along a dimension of a float32 or float64 buffer",
        "no launch passes *args or a **dict holding a kernel parameter; no launch is inside a loop",
        "the kernel is not @triton.autotune'd and is defined in this file",
        "the kernel uses that pointer (and what it derives from it) only as the address of tl.store calls, "
        "each a statement on its own lines",
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs&) const override {
    const Kernel& k = *ctx.kernel;
    if (k.home) return refuse(fmt::format("{} is defined in another module (its file is not rewritten)", k.name));
    std::string torch, why;
    auto per_launch = launchBuffers(ctx, Epilogue::kSum, &torch, &why);
    if (!per_launch) return refuse(why);
    if (k.autotune) {
      return refuse(fmt::format("{} is autotuned: the autotuner's timing runs would add into the sum again", k.name));
    }

    // The summed buffers by the pointer parameter they are passed for: every launch passes one
    // for each such parameter (a launch that passed a plain tensor would be added into).
    std::map<std::string, std::vector<Buffer>> by_param;
    std::vector<std::string> params;  // in the first launch's order
    for (const Buffer& b : (*per_launch)[0]) {
      if (!by_param.count(b.param)) params.push_back(b.param);
      by_param[b.param];
    }
    for (const std::vector<Buffer>& found : *per_launch) {
      std::set<std::string> here;
      for (const Buffer& b : found) {
        if (!by_param.count(b.param)) {
          return refuse(fmt::format("the launches of {} sum buffers passed for different parameters ({} and {})",
                                    k.name, params[0], b.param));
        }
        here.insert(b.param);
        by_param[b.param].push_back(b);
      }
      if (here.size() != params.size()) {
        return refuse(fmt::format("the launches of {} sum buffers passed for different parameters", k.name));
      }
    }

    SourceEditor ed(ctx.text().text());
    std::vector<std::string> helpers;
    std::string whole_helper, along_helper;
    PassOutcome out;
    std::vector<std::string> notes;
    for (const std::string& param : params) {
      const std::vector<Buffer>& buffers = by_param[param];
      // The kernel: the pointer only addresses stores.
      std::vector<const Node*> stores;
      if (!storesOnly(ctx, param, &stores, &why)) return refuse(why);
      if (stores.empty()) return refuse(fmt::format("{} stores nothing through '{}'", k.name, param));
      // Whole sums, or sums along one dimension per buffer: not both.
      bool along = buffers[0].uses[0].dim.has_value();
      for (const Buffer& b : buffers) {
        for (const PostUse& u : b.uses) {
          if (u.dim.has_value() != along || (along && *u.dim != *b.uses[0].dim)) {
            return refuse(fmt::format("{} is summed {} and {} (line {})", b.tensor,
                                      along ? fmt::format("along dimension {}", *buffers[0].uses[0].dim) : "whole",
                                      u.dim ? fmt::format("along dimension {}", *u.dim) : "whole",
                                      nodePos(*u.call)->line));
          }
        }
      }
      std::string refused = along ? alongDimension(ctx, ed, param, buffers, stores, torch, &along_helper, &helpers,
                                                   &out, &notes)
                                  : whole(ctx, ed, param, buffers, stores, torch, &whole_helper, &helpers, &out,
                                          &notes);
      if (!refused.empty()) return refuse(refused);
    }
    // The helpers, above the kernel's decorators.
    int top = definitionTopLine(*k.def);
    for (const std::string& h : helpers) ed.insert(ctx.text().offset(top, 0), h + "\n\n");
    PassOutcome applied = appliedEdits(ed, k.name);
    if (!applied.applied) return applied;
    applied.param_types = out.param_types;
    applied.notes = notes;
    return applied;
  }

 private:
  // A whole-tensor sum: each store adds its block's sum into one of kSlots slots of an
  // accumulator the launcher allocates beside the buffer and sums afterwards. "" or why not.
  static std::string whole(const PassContext& ctx, SourceEditor& ed, const std::string& param,
                           const std::vector<Buffer>& buffers, const std::vector<const Node*>& stores,
                           const std::string& torch, std::string* helper, std::vector<std::string>* helpers,
                           PassOutcome* out, std::vector<std::string>* notes) {
    const Kernel& k = *ctx.kernel;
    const std::string tl = ctx.tl();
    const std::string total = ctx.freshName(param + "_total");
    if (helper->empty()) {
      *helper = freshModuleName(ctx, "_fused_sum_into");
      std::vector<std::string> h = {
          fmt::format("@{}.jit", ctx.triton()),
          fmt::format("def {}(total, ptr, value, mask):", *helper),
          fmt::format(
              "    # fused-sum: what `tl.store(ptr, value, mask=mask)` would write, added to one of the {} slots", kSlots),
          "    # of total (spread over programs: one address taking every program's atomics serializes them)",
          fmt::format("    {}.static_assert(ptr.dtype.element_ty.is_floating(), \"fused-sum: the summed buffer holds "
                      "floats\")",
                      tl),
          fmt::format("    v = {}.cast(value, ptr.dtype.element_ty)", tl),
          fmt::format("    slot = ({}.program_id(0) + {}.program_id(1) * 61 + {}.program_id(2) * 127) % {}", tl, tl,
                      tl, kSlots),
          "    if ptr.type.is_block():",
          fmt::format("        v = {}.broadcast_to(v, ptr.shape)", tl),
          "        if mask is not None:",
          fmt::format("            v = {}.where(mask, v, 0)", tl),
          fmt::format("        {}.atomic_add(total + slot, {}.sum(v.to(total.dtype.element_ty)), sem=\"relaxed\")",
                      tl, tl),
          "    else:",
          fmt::format("        {}.atomic_add(total + slot, v.to(total.dtype.element_ty), mask=mask, sem=\"relaxed\")",
                      tl),
      };
      helpers->push_back(joinLines(h, ""));
    }
    if (std::string why = storesToHelper(ctx, ed, stores, *helper + "(" + total); !why.empty()) return why;
    addKernelParam(ctx, ed, total, "");
    // The launchers.
    std::set<const Node*> done_allocs;
    std::vector<int> lines;
    for (const Buffer& b : buffers) {
      std::string acc = freshLocal(*b.fn, b.tensor + "_total");
      if (done_allocs.insert(b.alloc_stmt).second) {
        editAllocation(ctx, ed, b,
                       fmt::format("{} = {}.zeros({}, dtype={}.promote_types({}.dtype, {}.float32), device={}.device)",
                                   acc, torch, kSlots, torch, b.tensor, torch, b.tensor));
      }
      // A tensor also bound to None: None then (the accumulator is allocated in the other branch).
      addLaunchKeyword(ctx, ed, *b.site, total,
                       b.maybe_none ? fmt::format("{} if {} is not None else None", acc, b.tensor) : acc);
      for (const PostUse& u : b.uses) {
        std::string value = u.mean ? fmt::format("({}.sum() / {}.numel())", acc, b.tensor) : acc + ".sum()";
        ed.replace(ctx.range(*u.call), fmt::format("{}.to({}.dtype)", value, b.tensor));
        lines.push_back(nodePos(*u.call)->line);
      }
    }
    out->param_types[total] = "*fp32";
    notes->push_back(fmt::format("the sum of what {} stores through '{}' is taken by the kernel (line {} sums the "
                                 "accumulator's slots); atomics make its last bits depend on the order the programs add",
                                 k.name, param, fmt::join(lines, ", ")));
    return "";
  }

  // Sums along a dimension (`dW = _dW.sum(0)` of per-program partial rows): the buffer the kernel
  // is given is the accumulator seen through a stride-0 view along that dimension
  // (`torch.zeros_like(_dW.select(0, 0)).unsqueeze(0).expand_as(_dW)`), so every program's row
  // lands on the same row, and each store adds what it would have written there atomically. The
  // sum is then the accumulator (`_dW.select(0, 0)`). A kernel that addresses the buffer through
  // the strides it is given is unchanged otherwise; one that computes its own strides would
  // address past the accumulator: the helper drops every address outside the accumulator's
  // bytes, so such a kernel computes a wrong sum (refused by verification) and writes nothing
  // outside it. "" or why not.
  static std::string alongDimension(const PassContext& ctx, SourceEditor& ed, const std::string& param,
                                    const std::vector<Buffer>& buffers, const std::vector<const Node*>& stores,
                                    const std::string& torch, std::string* helper, std::vector<std::string>* helpers,
                                    PassOutcome* out, std::vector<std::string>* notes) {
    const Kernel& k = *ctx.kernel;
    for (const Buffer& b : buffers) {
      // Atomics in a narrower type would round every addition where torch's sum rounds once.
      if (const Node* dt = keywordArg(*b.alloc_call, "dtype")) {
        std::string q = ctx.ir->qualifiedName(*dt);
        if (q != "torch.float32" && q != "torch.float" && q != "torch.float64" && q != "torch.double") {
          return fmt::format("{} is summed along a dimension in {}: atomic additions would round each "
                             "partial sum to it (float32 and float64 buffers only)",
                             b.tensor, ctx.slice(*dt));
        }
      }
    }
    const std::string tl = ctx.tl();
    const std::string bytes = ctx.freshName(param + "_bytes");
    if (helper->empty()) {
      *helper = freshModuleName(ctx, "_fused_dim_sum_add");
      std::vector<std::string> h = {
          fmt::format("@{}.jit", ctx.triton()),
          fmt::format("def {}(base, nbytes, ptr, value, mask):", *helper),
          "    # fused-sum along a dimension: the summed dimension of the buffer has stride 0, so what",
          "    # `tl.store(ptr, value, mask=mask)` would write is added to the one row every program writes;",
          "    # an address outside the accumulator's bytes is dropped (written nowhere)",
          fmt::format("    {}.static_assert(ptr.dtype.element_ty == {}.float32 or ptr.dtype.element_ty == {}.float64,",
                      tl, tl, tl),
          "                     \"fused-sum along a dimension: the buffer holds float32 or float64\")",
          fmt::format("    v = {}.cast(value, ptr.dtype.element_ty)", tl),
          fmt::format("    offset = ptr.to({}.int64) - base.to({}.int64)", tl, tl),
          "    inside = (offset >= 0) & (offset < nbytes)",
          "    if mask is not None:",
          "        inside = inside & mask",
          "    if ptr.type.is_block():",
          fmt::format("        v = {}.broadcast_to(v, ptr.shape)", tl),
          fmt::format("    {}.atomic_add(ptr, v, mask=inside, sem=\"relaxed\")", tl),
      };
      helpers->push_back(joinLines(h, ""));
    }
    if (std::string why = storesToHelper(ctx, ed, stores, fmt::format("{}({}, {}", *helper, param, bytes));
        !why.empty()) {
      return why;
    }
    addKernelParam(ctx, ed, bytes, "");
    std::set<const Node*> done_allocs;
    std::vector<int> lines;
    for (const Buffer& b : buffers) {
      int64_t dim = *b.uses[0].dim;
      if (done_allocs.insert(b.alloc_stmt).second) {
        editAllocation(ctx, ed, b,
                       fmt::format("{} = {}.zeros_like({}.select({}, 0)).unsqueeze({}).expand_as({})", b.tensor, torch,
                                   b.tensor, dim, dim, b.tensor));
      }
      std::string size = fmt::format("{}.select({}, 0).numel() * {}.element_size()", b.tensor, dim, b.tensor);
      if (b.maybe_none) size = fmt::format("{} if {} is not None else 0", size, b.tensor);
      addLaunchKeyword(ctx, ed, *b.site, bytes, size);
      for (const PostUse& u : b.uses) {
        std::string value = fmt::format("{}.select({}, 0)", b.tensor, dim);
        if (u.mean) value = fmt::format("({} / {}.shape[{}])", value, b.tensor, dim);
        ed.replace(ctx.range(*u.call), value);
        lines.push_back(nodePos(*u.call)->line);
      }
    }
    out->param_types[bytes] = "i64";
    notes->push_back(fmt::format("what {} stores through '{}' is added along the summed dimension by the kernel (line "
                                 "{} reads the accumulator); atomics make its last bits depend on the order the "
                                 "programs add",
                                 k.name, param, fmt::join(lines, ", ")));
    return "";
  }

  // Each tl.store(ptr, value, mask) becomes `<call_head>, ptr, value, mask)`: a call of the
  // helper whose leading arguments `call_head` writes. "" or why not.
  static std::string storesToHelper(const PassContext& ctx, SourceEditor& ed, const std::vector<const Node*>& stores,
                                    const std::string& call_head) {
    for (const Node* call : stores) {
      const Node& args = call->at("args");
      const Node* ptr = args.empty() ? keywordArg(*call, "pointer") : &args[0];
      const Node* value = args.size() > 1 ? &args[1] : keywordArg(*call, "value");
      const Node* mask = args.size() > 2 ? &args[2] : keywordArg(*call, "mask");
      if (!ptr || !value) return fmt::format("line {}: a tl.store without its pointer and value", nodePos(*call)->line);
      ed.replace(ctx.range(*call), fmt::format("{}, {}, {}, {})", call_head, ctx.slice(*ptr), ctx.slice(*value),
                                               mask ? ctx.slice(*mask) : "None"));
    }
    return "";
  }

  // The buffer's allocation made empty (its shape and strides are still read) and `stmt`
  // written on the line after it, at its indentation.
  static void editAllocation(const PassContext& ctx, SourceEditor& ed, const Buffer& b, const std::string& stmt) {
    if (!b.alloc_new.empty()) ed.replace(ctx.range(b.alloc_call->at("func")), b.alloc_new);
    int last = nodePos(*b.alloc_stmt)->end_line;
    std::string indent = ctx.text().indentOf(nodePos(*b.alloc_stmt)->line);
    ed.insert(ctx.lineRange(last, last).end, indent + stmt + "\n");
  }

  PassInfo info_;
};

class FusedCastPass : public Pass {
 public:
  FusedCastPass() {
    info_.name = "fused-cast";
    info_.summary =
        "An output the launcher converts to another dtype after the launch (return y.to(torch.bfloat16)) "
        "allocated in that dtype: the kernel's stores convert as they write, and the conversion's "
        "read and write are gone";
    info_.preconditions = {
        "a launch passes, for a pointer parameter, a tensor that its function allocates "
        "(torch.empty/zeros[_like], new_empty/new_zeros) and afterwards only converts to one dtype "
        "(t.to(dtype), t.to(dtype=...), t.bfloat16(), t.half(), t.float(), t.double()), besides reading its "
        "shape, strides or device",
        "the dtype's names are bound before the allocation; no launch is inside a loop",
        "the kernel uses that pointer (and what it derives from it) only as the address of tl.store calls",
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs&) const override {
    const Kernel& k = *ctx.kernel;
    std::string torch, why;
    auto per_launch = launchBuffers(ctx, Epilogue::kCast, &torch, &why);
    if (!per_launch) return refuse(why);
    std::vector<Buffer> buffers;
    for (const std::vector<Buffer>& found : *per_launch) buffers.insert(buffers.end(), found.begin(), found.end());
    std::set<std::string> params;
    for (const Buffer& b : buffers) params.insert(b.param);
    for (const std::string& p : params) {
      std::vector<const Node*> stores;
      if (!storesOnly(ctx, p, &stores, &why)) return refuse(why);
    }

    SourceEditor ed(ctx.text().text());
    std::vector<std::string> notes;
    std::set<const Node*> done;
    for (const Buffer& b : buffers) {
      if (!done.insert(b.alloc_stmt).second) {
        return refuse(fmt::format("{} is passed to two launches of {}", b.tensor, k.name));
      }
      std::string dtype = b.uses[0].dtype;
      for (const PostUse& u : b.uses) {
        if (u.dtype != dtype) {
          return refuse(fmt::format("{} is converted to two dtypes ({} and {})", b.tensor, dtype, u.dtype));
        }
      }
      if (auto late = boundAfter(ctx, *b.fn, *b.alloc_stmt, b.uses[0])) {
        return refuse(fmt::format("the dtype {} reads '{}', bound after {} is allocated", dtype, *late, b.tensor));
      }
      // The allocation in the final dtype.
      const Node& alloc = *b.alloc_call;
      if (const Node* kw = keywordArg(alloc, "dtype")) {
        ed.replace(ctx.range(*kw), dtype);
      } else {
        addCallKeyword(ctx, ed, alloc, "dtype=" + dtype);
      }
      for (const PostUse& u : b.uses) {
        if (b.rebinding && &b.rebinding->at("value") == u.call && aloneOnItsLines(ctx, *b.rebinding)) {
          ed.replace(ctx.lineRange(*b.rebinding), "");  // `y = y.to(dtype)`: nothing left to do
        } else {
          ed.replace(ctx.range(*u.call), b.tensor);
        }
      }
      notes.push_back(
          fmt::format("{} (written through '{}') is allocated as {} and not converted after the launch "
                      "(line {})",
                      b.tensor, b.param, dtype, nodePos(*b.uses[0].call)->line));
    }
    PassOutcome out = appliedEdits(ed, k.name);
    if (!out.applied) return out;
    out.notes = notes;
    return out;
  }

 private:
  // A name the conversion's dtype reads that the function binds after `alloc` and before the
  // conversion (the dtype could not be read at the allocation), else nullopt.
  static std::optional<std::string> boundAfter(const PassContext& ctx, const Node& fn, const Node& alloc,
                                               const PostUse& use) {
    std::set<std::string> names;
    if (use.dtype_expr) forEachName(*use.dtype_expr, [&](const Node& n) { names.insert(n["id"].get<std::string>()); });
    size_t from = ctx.range(alloc).begin, to = ctx.range(*use.call).begin;
    std::optional<std::string> late;
    walk(fn.at("body"), [&](const Node& n) {
      if (late || !isType(n, "Name") || n.value("ctx", "") != "Store") return !late;
      std::string id = n["id"];
      size_t at = ctx.range(n).begin;
      if (names.count(id) && at >= from && at < to) late = id;
      return !late;
    });
    return late;
  }

  // Does the statement stand alone on its lines (nothing else before or after it there)?
  static bool aloneOnItsLines(const PassContext& ctx, const Node& stmt) {
    std::string_view lines = ctx.text().slice(ctx.lineRange(stmt));
    auto blank = [](std::string_view t) { return t.find_first_not_of(" \t\r\n") == std::string_view::npos; };
    Range r = ctx.range(stmt), l = ctx.lineRange(stmt);
    return blank(lines.substr(0, r.begin - l.begin)) && blank(lines.substr(r.end - l.begin));
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeFusedSumPass() { return std::make_unique<FusedSumPass>(); }
std::unique_ptr<Pass> makeFusedCastPass() { return std::make_unique<FusedCastPass>(); }

}  // namespace tf
