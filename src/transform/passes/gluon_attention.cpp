// gluon-attention: an attention forward kernel's launches routed to the Gluon attention
// template for Hopper (templates/gluon_attention.py: a TMA loader warp and two consumer warp
// groups in FlashAttention-3's order; 0.89-1.02 of cuDNN attention on an H100).
//
//   @triton.jit                                       @triton.jit
//   def attn(q_ptr, k_ptr, v_ptr, o_ptr, ...):        def attn(...): ...            (unchanged)
//       <Q tile of a program's rows>              ->  <the template, its names prefixed>
//       for start_n in range(0, end, BLOCK_N):        def _attn_attention_launch(grid, ...): ...
//           <online softmax, P V>                     attn = _attn_AttentionRoute(attn, ...)
//       tl.store(o_ptr + ..., acc / l[:, None])
//
// What the kernel computes is read from its source (attention_form.h: an abstract evaluation
// proves the online softmax, the scale, the exponent's base and the masks); where each
// program reads and writes is read per launch: the route evaluates the kernel's own address
// expressions for every program of the grid (once per set of integer arguments) and launches
// the template only when they are exactly one (batch, head) attention problem per pair of
// Q/output and K/V offsets, every stored row computed once (plan_view in the template).
// Otherwise, and wherever the template refuses (no Gluon, not sm_90, a dtype, head size or
// stride it does not take), the kernel as written runs. So the result stays drop-in for
// every call.
//
// Also taken: block pointers (boundary checks with zero padding read as masks), tensor
// descriptors built in the kernel or on the host (each tile checked per call to lie inside its
// descriptor's shape: a crossing tile would be zero-filled or clipped; a host descriptor's
// strides and shape read from the call's arguments), a row log-sum-exp store, finite mask
// values (checked per call to lie far below the scores), constexpr flags and modes read per
// value (a Kernel IR per value), the key loop in a @triton.jit helper and split in two (the keys
// before the diagonal block, then the diagonal block), the normalized form (the accumulator kept
// divided by the running sum). Not taken yet: an additive mask tensor, sliding windows,
// soft-capping, packed variable-length sequences.
#include <fmt/format.h>

#include <deque>
#include <functional>
#include <regex>
#include <set>

#include "kernel/kernel_ir.h"
#include "transform/pass_context.h"
#include "transform/passes/attention_form.h"
#include "transform/passes/passes.h"

namespace tf {

extern const char* const kGluonAttentionTemplate;

namespace {

constexpr const char* kI1 = "    ";

// The template with its module-level names (and torch) prefixed, so that it can sit in any
// module beside the kernel it serves.
std::string prefixedTemplate(const std::string& prefix, std::set<std::string>* names) {
  std::string text = kGluonAttentionTemplate;
  static const std::regex top(R"((?:^|\n)(?:    )?(?:def|class) ([A-Za-z_][A-Za-z_0-9]*)|(?:^|\n)([A-Za-z_][A-Za-z_0-9]*) *[=:] )");
  static const std::regex alias(R"(\bas (_[A-Za-z_0-9]+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), top); it != std::sregex_iterator(); ++it) {
    names->insert((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
  }
  for (auto it = std::sregex_iterator(text.begin(), text.end(), alias); it != std::sregex_iterator(); ++it) {
    names->insert((*it)[1].str());
  }
  names->insert("torch");
  text = std::regex_replace(text, std::regex(R"((^|\n)import torch\n)"), "$1import torch as torch\n");
  std::string out;
  static const std::regex word(R"([A-Za-z_][A-Za-z_0-9]*)");
  size_t last = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it) {
    size_t at = static_cast<size_t>(it->position());
    out += text.substr(last, at - last);
    std::string w = it->str();
    bool attr = at > 0 && text[at - 1] == '.';
    // `import torch as torch`: the module name stays, its alias is prefixed
    bool module = w == "torch" && at >= 7 && text.compare(at - 7, 7, "import ") == 0;
    bool from = w == "torch" && at >= 5 && text.compare(at - 5, 5, "from ") == 0;
    out += (names->count(w) && !attr && !module && !from) ? prefix + w : w;
    last = at + w.size();
  }
  out += text.substr(last);
  return out;
}

class GluonAttentionPass : public Pass {
 public:
  GluonAttentionPass() {
    info_.name = "gluon-attention";
    info_.summary =
        "Route an attention forward kernel's launches to a Gluon attention for Hopper (a TMA loader warp, two "
        "consumer warp groups in FlashAttention-3's order); calls that do not fit it run the kernel as written.";
    info_.preconditions = {
        "two tl.dot calls in one range loop at the top of the body: Q K^T (Q loaded before the loop, K in it, "
        "loaded [keys, head] and transposed or [head, keys]) and P V (V loaded in the loop)",
        "the loop carries the online softmax: a running max from -inf, a running sum, an accumulator from zeros; "
        "m_new = max(m, rowmax(s)), p = exp or exp2 of the scaled s - m_new, alpha likewise of m - m_new, "
        "l = l * alpha + rowsum(p), acc = acc * alpha + dot(p cast to fp16/bf16, v); the kernel stores acc / l",
        "scores scaled by products of parameters and constants, masked only by tl.where(mask, s, -inf) with "
        "mask a conjunction of rows >= keys (causal), keys < bound, rows < bound",
        "Q, K, V and the output addressed as pointer parameter + offset + row index * stride + head index (unit "
        "stride); masks only on rows or keys; no other load or store",
        "@triton.autotune and @triton.heuristics stay (the route goes under them); another tuner is refused",
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs&) const override {
    const std::string& k = ctx.kernel->name;
    if (ctx.kernel->autotune && !ctx.kernel->autotune->tuner.empty()) {
      return refuse(fmt::format("{} is tuned by {}, not triton.autotune", k, ctx.kernel->autotune->tuner));
    }
    if (ctx.kernel->home) return refuse(fmt::format("{} is imported: the lowering rewrites this file's kernels", k));
    if (ctx.ir->functions.count("_" + k + "_attention_launch") || ctx.ir->module_assignments.count(k)) {
      return refuse(fmt::format("{} is lowered already (or rebound at module level)", k));
    }
    KernelIR kir = buildKernelIR(*ctx.ir, *ctx.kernel);
    adoptBoundaryChecks(kir);
    // One reading per value of each constexpr flag the body tests (at most 3 flags).
    std::vector<AttentionForm> forms;
    std::vector<std::map<std::string, bool>> pending = {{}};
    std::string why, first_why;
    static const std::regex flag(R"(flag:([A-Za-z_][A-Za-z_0-9]*))");
    while (!pending.empty()) {
      AttentionForm f;
      f.flags = pending.back();
      pending.pop_back();
      std::smatch m;
      if (readAttention(ctx, kir, &f, &why)) {
        forms.push_back(f);
      } else if (std::regex_search(why, m, flag) && !f.flags.count(m[1].str()) && f.flags.size() < 3) {
        for (bool v : {false, true}) {
          auto next = f.flags;
          next[m[1].str()] = v;
          pending.push_back(next);
        }
      } else if (first_why.empty()) {
        first_why = why;
      }
    }
    // Constexpr flags that choose between loads or masks (`if EVEN_N: k = tl.load(p) else: k =
    // tl.load(p, mask=...)`): no single reading of both branches is one attention; the kernel is
    // read once per value of its boolean flags, from a Kernel IR built with those values, as
    // Triton compiles each (at most 5 flags).
    std::deque<KernelIR> flagged;
    std::string flagged_why;
    int refused_values = 0;
    if (forms.empty()) {
      const std::vector<std::string> names = booleanFlags(ctx, kir);
      const std::map<std::string, std::vector<int64_t>> modes = modeValues(ctx, kir, names);
      // Tensor descriptors built on the host: their strides and shapes are the call's (symbols
      // the route evaluates on its arguments), their block shapes the signature's; the tiles'
      // constexprs are then pinned to the signature's values (read as modes: a call with other
      // values runs the kernel as written).
      ParamTypes base;
      base.prune_constant_branches = true;
      std::map<std::string, int64_t> pinned;
      if (std::any_of(kir.params.begin(), kir.params.end(),
                      [](const IrParam& p) { return p.kind == ParamKind::kDescriptor; })) {
        base.symbolic_host_descriptors = true;
        for (const auto& p : kir.params) {
          auto it = ctx.signature.find(p.name);
          if (it == ctx.signature.end()) continue;
          if (it->second.is_string()) base.types[p.name] = it->second.get<std::string>();
          const bool chosen = modes.count(p.name) || std::find(names.begin(), names.end(), p.name) != names.end();
          if (p.kind == ParamKind::kConstexpr && it->second.is_number_integer() && !chosen) {
            pinned[p.name] = it->second.get<int64_t>();
          }
        }
      }
      size_t mode_sets = 1;
      for (const auto& [n, vs] : modes) mode_sets *= vs.size();
      if ((!names.empty() || !modes.empty() || base.symbolic_host_descriptors) && names.size() <= 5 &&
          (mode_sets << names.size()) <= 64) {
        for (size_t combo = 0; combo < (mode_sets << names.size()); ++combo) {
          ParamTypes types = base;
          AttentionForm f;
          for (const auto& [n, v] : pinned) types.values[n] = f.modes[n] = v;
          for (size_t i = 0; i < names.size(); ++i) {
            const bool v = (combo >> i) & 1u;
            types.values[names[i]] = v ? 1 : 0;
            f.flags[names[i]] = v;
          }
          size_t rest = combo >> names.size();
          for (const auto& [n, vs] : modes) {
            types.values[n] = f.modes[n] = vs[rest % vs.size()];
            rest /= vs.size();
          }
          flagged.push_back(buildKernelIR(*ctx.ir, *ctx.kernel, types));
          adoptBoundaryChecks(flagged.back());
          std::string w;
          if (readAttention(ctx, flagged.back(), &f, &w)) {
            forms.push_back(f);
          } else if (refused_values < 4) {  // each assignment not taken, named with its reason
            flagged_why += fmt::format("{}{}: {}", refused_values++ ? "; " : "", fmt::join(assignments(f), ", "), w);
          }
        }
        // what the note says of the values not taken: the flagged readings', not the first's
        if (!forms.empty()) first_why = flagged_why;
        else if (!flagged_why.empty()) first_why += "; read per value of its constexpr flags and modes: " + flagged_why;
      }
    }
    if (forms.empty()) {
      return refuse(fmt::format("{} is not an attention forward the template takes: {}", k, first_why));
    }
    std::string block;
    if (!emit(ctx, *forms.front().kir, forms, &block, &why)) return refuse(why);
    PassOutcome out = withBlockAfterKernel(ctx, block);
    if (!out.applied) return out;
    out.notes.push_back(fmt::format(
        "{} now routes each launch: the Gluon attention where the call fits it (a Hopper GPU, fp16/bf16, head "
        "size 16-256, its programs one (batch, head) problem per pair of offsets), the kernel as written otherwise; "
        "read as {}",
        k, describe(forms)));
    if (!first_why.empty()) out.notes.push_back("values of its flags the template does not take: " + first_why);
    return out;
  }

 private:
  PassInfo info_;

  // The kernel's constexpr parameters used only as booleans in tests (`if FLAG:`, `not FLAG`,
  // `A | B`, `A and B`): their truth alone decides what the kernel does, so a call's
  // bool(FLAG) picks its form. A name used otherwise (`STAGE == 2`, `STAGE & 1`, arithmetic)
  // is not one.
  static std::vector<std::string> booleanFlags(const PassContext& ctx, const KernelIR& kir) {
    std::set<std::string> constexprs;
    for (const auto& p : kir.params) {
      if (p.kind == ParamKind::kConstexpr) constexprs.insert(p.name);
    }
    std::map<std::string, int> uses, in_tests;
    std::function<bool(const Node&, std::vector<std::string>*)> boolean = [&](const Node& t,
                                                                             std::vector<std::string>* out) {
      if (isType(t, "Name")) {
        if (!constexprs.count(t["id"].get<std::string>())) return false;
        out->push_back(t["id"]);
        return true;
      }
      if (isType(t, "UnaryOp") && nodeType(t["op"]) == "Not") return boolean(t["operand"], out);
      if (isType(t, "BoolOp")) {
        for (const auto& v : t["values"]) {
          if (!boolean(v, out)) return false;
        }
        return true;
      }
      if (isType(t, "BinOp") && (nodeType(t["op"]) == "BitAnd" || nodeType(t["op"]) == "BitOr")) {
        return boolean(t["left"], out) && boolean(t["right"], out);
      }
      return false;
    };
    walk(ctx.body(), [&](const Node& n) {
      if (isType(n, "Name")) ++uses[n["id"].get<std::string>()];
      if (isType(n, "If") || isType(n, "IfExp")) {
        std::vector<std::string> names;
        if (boolean(n["test"], &names)) {
          for (const auto& x : names) ++in_tests[x];
        }
      }
      return true;
    });
    std::vector<std::string> out;
    for (const auto& [name, count] : in_tests) {
      if (uses[name] == count) out.push_back(name);
    }
    return out;
  }

  // The kernel's constexpr parameters whose value (not only truth) decides what it does: tested
  // against integers (`STAGE == 2`, `STAGE & 1`). Each with the values worth a reading: the
  // integers it is compared with, and every combination of the bits it is tested for (at most
  // 3 bits, 8 values); at most two such parameters.
  static std::map<std::string, std::vector<int64_t>> modeValues(const PassContext& ctx, const KernelIR& kir,
                                                               const std::vector<std::string>& flags) {
    std::set<std::string> constexprs;
    for (const auto& p : kir.params) {
      if (p.kind == ParamKind::kConstexpr && std::find(flags.begin(), flags.end(), p.name) == flags.end()) {
        constexprs.insert(p.name);
      }
    }
    std::map<std::string, std::set<int64_t>> values;
    std::map<std::string, int64_t> bits;
    walk(ctx.body(), [&](const Node& n) {
      auto pair = [&](const Node& a, const Node& b, bool bit) {
        if (!isType(a, "Name") || !constexprs.count(a["id"].get<std::string>())) return;
        auto c = intLiteral(b);
        if (!c || *c < 0 || *c > 255) return;
        const std::string id = a["id"];
        if (bit) bits[id] |= *c;
        else values[id].insert(*c);
      };
      if (isType(n, "Compare") && n["ops"].size() == 1 && n["comparators"].size() == 1) {
        const std::string& op = nodeType(n["ops"][0]);
        if (op == "Eq" || op == "NotEq") {
          pair(n["left"], n["comparators"][0], false);
          pair(n["comparators"][0], n["left"], false);
        }
      } else if (isType(n, "BinOp") && nodeType(n["op"]) == "BitAnd") {
        pair(n["left"], n["right"], true);
        pair(n["right"], n["left"], true);
      }
      return true;
    });
    for (const auto& [id, mask] : bits) {
      if (mask >= 8) continue;
      for (int64_t v = 0; v < 8; ++v) {
        if ((v & ~mask) == 0) values[id].insert(v);
      }
    }
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& [id, vs] : values) {
      if (vs.size() <= 8 && out.size() < 2) out[id] = std::vector<int64_t>(vs.begin(), vs.end());
    }
    return out;
  }

  // The constexpr values a form was read with, as Python writes them: FLAG=True, STAGE=3.
  static std::vector<std::string> assignments(const AttentionForm& f) {
    std::vector<std::string> out;
    for (const auto& [n, v] : f.flags) out.push_back(fmt::format("{}={}", n, v ? "True" : "False"));
    for (const auto& [n, v] : f.modes) out.push_back(fmt::format("{}={}", n, v));
    return out;
  }

  static std::string describe(const std::vector<AttentionForm>& forms) {
    std::vector<std::string> parts;
    for (const auto& f : forms) {
      const std::vector<std::string> flags = assignments(f);
      parts.push_back(fmt::format("{}{} attention, scores scaled by {}{}",
                                  flags.empty() ? "" : fmt::format("({}) ", fmt::join(flags, ", ")),
                                  f.causal ? "causal" : "non-causal", fmt::join(f.scale, " * "),
                                  f.base == 2 ? " in base 2" : ""));
    }
    return fmt::format("{}", fmt::join(parts, "; "));
  }

  // The row (or key) term and the head term of an access: {row stride, row extent, head extent}.
  struct Terms {
    sym::Expr stride, rows, head;
  };
  static bool termsOf(const KernelIR& kir, const IrAccess& a, int head_axis, Terms* t, std::string* why) {
    for (const auto& term : a.ptr.terms) {
      if (!term.wrap.empty()) {
        *why = fmt::format("line {}: an index that wraps ({})", a.loc.line, term.wrap);
        return false;
      }
      if (term.axis == head_axis) {
        t->head = term.extent;
      } else {
        t->stride = term.stride;
        t->rows = term.extent;
      }
    }
    if (!t->head || !t->stride || !t->rows) {
      *why = fmt::format("line {}: no head dimension and rows", a.loc.line);
      return false;
    }
    return true;
  }

  // What the launch function needs of the kernel's reading, as Python text.
  struct LaunchText {
    std::string k, prefix;                            // the kernel, the template's name prefix
    std::vector<std::string> params, names;           // the kernel's parameters as written, their names
    std::vector<std::string> bases;                   // Q, K, V and the output's pointer parameters
    std::string lse_base, lse_stride;                 // the log-sum-exp's pointer and ", stride" ("" without)
    bool lse = false, base2 = false;
    std::vector<std::string> where_ret, scales, dtypes, flag_sets;  // per form
    std::vector<bool> causal;                         // per form
    std::set<std::string> flag_names;
    std::string strides, bm, bn, d, loop_var, loop_start, loop_step;
    std::vector<std::string> head_strides;            // parameters that must be 1 (the head dimension contiguous)
    std::vector<std::string> fills;                   // per form: ((value, factors), ...) of its finite mask fills
    std::set<std::string> mode_names;                 // flag_names that select by value (modes), not truth
    bool in_bounds = false;                           // where() ends with its descriptors' tiles inside them
    std::map<std::string, std::string> host_blocks;   // descriptor parameters built on the host: the block shapes read
  };

  // The launch helper: checks the call, reads the plan of the kernel's addressing (cached per
  // integer arguments), launches the template through it or says False.
  static std::string launchFunction(const LaunchText& t) {
    const std::string i1 = kI1, i2 = std::string(kI1) + kI1, i3 = i2 + kI1, i4 = i3 + kI1;
    auto T = [&](const std::string& name) { return t.prefix + name; };
    std::string s;
    s += fmt::format("\n\n{}PLANS = {{}}\n\n\n", t.prefix);
    {
      std::vector<std::string> args = {"grid"};
      args.insert(args.end(), t.params.begin(), t.params.end());
      args.push_back("**options");
      s += wrapCall(fmt::format("def _{}_attention_launch", t.k), args, 0) + ":\n";
    }
    s += i1 + fmt::format("\"\"\"Launches the Gluon attention for this call of {} and returns it, or False when the "
                          "call does not fit it\n", t.k);
    s += i1 + "(the caller then launches the kernel as written).\"\"\"\n";
    if (!t.host_blocks.empty()) {
      // descriptors built on the host: the block shapes the kernel was read with; their tensors
      std::vector<std::string> pairs;
      for (const auto& [n, b] : t.host_blocks) pairs.push_back(fmt::format("({}, {})", n, b));
      s += i1 + fmt::format("if any(list(getattr(_tf_d, \"block_shape\", ())) != _tf_b for _tf_d, _tf_b in ({},)):\n",
                            fmt::join(pairs, ", "));
      s += i2 + "return False\n";
    }
    auto tensor = [&](const std::string& b) {
      return t.host_blocks.count(b) ? fmt::format("getattr({}, \"base\", None)", b) : b;
    };
    s += i1 + fmt::format("_tf_t = ({}, {}, {}, {})\n", tensor(t.bases[0]), tensor(t.bases[1]), tensor(t.bases[2]),
                          tensor(t.bases[3]));
    if (t.lse) {
      s += i1 + fmt::format("if not isinstance({0}, {1}.Tensor) or {0}.dtype != {1}.float32:  # the log-sum-exp\n",
                            t.lse_base, T("torch"));
      s += i2 + "return False\n";
    }
    s += i1 + fmt::format("_tf_torch = {}\n", T("torch"));
    s += i1 + "if (not all(isinstance(_tf_x, _tf_torch.Tensor) for _tf_x in _tf_t)\n";
    s += i1 + "        or _tf_t[0].dtype not in (_tf_torch.float16, _tf_torch.bfloat16)\n";
    s += i1 + "        or any(_tf_x.dtype != _tf_t[0].dtype for _tf_x in _tf_t)):\n";
    s += i2 + "return False\n";
    // The form the call's constexpr flags select (the kernel read once per value of each flag it tests).
    {
      std::vector<std::string> kv;
      for (const auto& n : t.flag_names) {
        kv.push_back(t.mode_names.count(n) ? fmt::format("\"{0}\": getattr({0}, \"value\", {0})", n)
                                           : fmt::format("\"{0}\": bool({0})", n));
      }
      s += i1 + "_tf_flags = {" + fmt::format("{}", fmt::join(kv, ", ")) + "}\n";
      s += i1 + "_tf_form = next((_tf_i for _tf_i, _tf_f in enumerate([" + fmt::format("{}", fmt::join(t.flag_sets, ", ")) +
           "])\n";
      s += i1 + "                 if all(_tf_flags[_tf_n] == _tf_b for _tf_n, _tf_b in _tf_f.items())), None)\n";
    }
    s += i1 + "# the dtypes the form's casts of P and the output keep exact\n";
    s += i1 + "if _tf_form is None or _tf_t[0].dtype not in [" + fmt::format("{}", fmt::join(t.dtypes, ", ")) +
         "][_tf_form]:\n";
    s += i2 + "return False\n";
    if (!t.head_strides.empty()) {
      std::vector<std::string> ones(t.head_strides.size(), "1");
      s += i1 + fmt::format("if ({},) != ({},):  # the head dimension contiguous\n", fmt::join(t.head_strides, ", "),
                            fmt::join(ones, ", "));
      s += i2 + "return False\n";
    }
    s += i1 + "if callable(grid):\n";
    {
      std::vector<std::string> kv;
      for (const auto& p : t.names) kv.push_back(fmt::format("{0}={0}", p));
      kv.push_back("**options");
      s += i2 + "grid = grid(" + wrapCall("dict", kv, i2.size() + 12) + ")\n";
    }
    s += i1 + "grid = tuple(int(_tf_g) for _tf_g in grid)\n";
    s += i1 + fmt::format("_tf_key = (grid, _tf_form) + tuple(_tf_x if isinstance(_tf_x, (bool, int)) else None for _tf_x in "
                          "({},))\n", fmt::join(t.names, ", "));
    if (!t.host_blocks.empty()) {  // the plan reads the descriptors' shapes and strides too
      std::vector<std::string> ds;
      for (const auto& [n, b] : t.host_blocks) ds.push_back(n);
      s += i1 + fmt::format("_tf_key += tuple((tuple(_tf_d.shape), tuple(_tf_d.strides)) for _tf_d in ({},))\n",
                            fmt::join(ds, ", "));
    }
    {
      std::vector<std::string> cs;
      for (bool c : t.causal) cs.push_back(c ? "True" : "False");
      s += i1 + "_tf_causal = (" + fmt::format("{}", fmt::join(cs, ", ")) + ",)[_tf_form]\n";
    }
    s += i1 + fmt::format("_tf_plan = {}PLANS.get(_tf_key)\n", t.prefix);
    s += i1 + "if _tf_plan is None:\n";
    s += i2 + "def _tf_where(_tf_p, _tf_j):\n";
    s += i3 + "program_id = lambda a: _tf_p[a]  # noqa: E731\n";
    s += i3 + "num_programs = lambda a: grid[a] if a < len(grid) else 1  # noqa: E731\n";
    s += i3 + "cdiv = lambda a, b: -(-a // b)  # noqa: E731\n";
    s += i3 + "next_power_of_2 = lambda a: 1 << (max(int(a), 1) - 1).bit_length()  # noqa: E731\n";
    s += i3 + fmt::format("{} = _tf_j\n", t.loop_var);
    s += i3 + fmt::format("iter = lambda a: (_tf_j - ({})) // ({})  # noqa: E731  (iterations of loop a)\n",
                          t.loop_start, t.loop_step);
    for (size_t i = 0; i < t.where_ret.size(); ++i) {
      std::string ind = t.where_ret.size() > 1 ? i4 : i3;
      if (t.where_ret.size() > 1) s += i3 + fmt::format("if _tf_form == {}:\n", i);
      s += ind + "return " + indentFollowingLines(t.where_ret[i], ind + "       ") + "\n";
    }
    s += "\n";
    s += i2 + fmt::format("_tf_plan = {}(_tf_where, grid, {}, {}, {}, _tf_causal{}{})\n", T("plan_view"), t.bm, t.bn,
                          t.strides, t.lse_stride, t.in_bounds ? ", in_bounds=True" : "");
    s += i2 + fmt::format("if len({0}PLANS) > 64:\n", t.prefix);
    s += i3 + fmt::format("{}PLANS.clear()\n", t.prefix);
    s += i2 + fmt::format("{}PLANS[_tf_key] = _tf_plan\n", t.prefix);
    s += i1 + "if isinstance(_tf_plan, str):\n";
    s += i2 + "return False\n";
    if (t.where_ret.size() == 1) {
      s += i1 + "_tf_scale = " + t.scales[0] + "\n";
    } else {
      s += i1 + "_tf_scale = [" + fmt::format("{}", fmt::join(t.scales, ",\n" + i1 + "             ")) + "][_tf_form]\n";
    }
    s += i1 + "if not (0.0 < _tf_scale < float(\"inf\")):\n";
    s += i2 + "return False\n";
    if (std::any_of(t.fills.begin(), t.fills.end(), [](const std::string& x) { return x != "()"; })) {
      // a finite mask value stands for -inf only far below every score in the exponent
      s += i1 + "_tf_fills = [" + fmt::format("{}", fmt::join(t.fills, ", ")) + "][_tf_form]\n";
      s += i1 + "if not all(_tf_c > 0 and _tf_f * _tf_scale / _tf_c <= -1e4 for _tf_f, _tf_c in _tf_fills):\n";
      s += i2 + "return False\n";
    }
    s += i1 + fmt::format("_tf_v = [{}(_tf_x, _tf_o) for _tf_x, _tf_o in zip(_tf_t{}, _tf_plan[\"offsets\"])]\n",
                          T("at_offset"), t.lse ? " + (" + t.lse_base + ",)" : "");
    s += i1 + "if any(_tf_x is None for _tf_x in _tf_v):\n";
    s += i2 + "return False\n";
    s += i1 + fmt::format("return {}(*_tf_v[:4], _tf_plan[\"batch\"], _tf_plan[\"q_heads\"], _tf_plan[\"kv_heads\"], "
                          "_tf_plan[\"seq_q\"],\n",
                          T("launch_view"));
    if (t.lse) {
      // the log-sum-exp: fp32, in the exponent's base, through the view the plan read
      s += i1 + fmt::format("        _tf_plan[\"seq_k\"], {}, _tf_plan[\"strides\"][:4], _tf_scale, _tf_causal,\n", t.d);
      s += i1 + fmt::format("        (_tf_v[4], _tf_plan[\"strides\"][4], {}))\n\n\n", t.base2 ? "2" : "\"e\"");
    } else {
      s += i1 + fmt::format("        _tf_plan[\"seq_k\"], {}, _tf_plan[\"strides\"], _tf_scale, _tf_causal)\n\n\n", t.d);
    }
    return s;
  }

  static bool emit(const PassContext& ctx, const KernelIR& kir, const std::vector<AttentionForm>& forms,
                   std::string* out, std::string* why) {
    const AttentionForm& f = forms.front();  // the pointers, loop and tiles are every form's (checked below)
    const std::string& k = ctx.kernel->name;
    const KernelIR* cur = &kir;  // the Kernel IR of the form being written
    auto acc = [&](int id) -> const IrAccess& { return cur->accesses[static_cast<size_t>(id)]; };
    // Q's, K's, V's and the output's terms of a form, in the Kernel IR being written.
    auto terms = [&](const AttentionForm& g, Terms (&t)[4], std::string* w) {
      return termsOf(*cur, acc(g.q), 1, &t[0], w) && termsOf(*cur, acc(g.k), g.head_axis_k, &t[1], w) &&
             termsOf(*cur, acc(g.v), 1, &t[2], w) && termsOf(*cur, acc(g.o), 1, &t[3], w);
    };
    Terms first[4];
    if (!terms(f, first, why)) return false;
    const Terms &tq = first[0], &tk = first[1], &tv = first[2], &to = first[3];
    auto same = [&](const sym::Expr& a, const sym::Expr& b) { return sym::same(kir.expand(a), kir.expand(b)); };
    if (!same(tq.head, tk.head) || !same(tq.head, tv.head) || !same(tq.head, to.head) || !same(tq.rows, to.rows) ||
        !same(tk.rows, tv.rows)) {
      *why = "Q, K, V and the output tiles do not share the head size, or Q and the output the rows, or K and V the keys";
      return false;
    }
    // Every integer expression the route evaluates: names it may read.
    std::set<std::string> allowed;
    for (const auto& p : kir.params) allowed.insert(p.name);
    for (int a = 0; a < 3; ++a) {
      allowed.insert(pidVar(a));
      allowed.insert(numProgramsVar(a));
    }
    // tensor descriptors built on the host: the call's strides and shapes (their block shapes are
    // checked against the ones read)
    std::map<std::string, std::string> host_blocks;
    for (const auto& d : kir.descriptors) {
      if (!d.host) continue;
      std::vector<std::string> dims;
      for (size_t i = 0; i < d.shape.size(); ++i) {
        allowed.insert(fmt::format("{}.shape[{}]", d.base, i));
        allowed.insert(fmt::format("{}.strides[{}]", d.base, i));
        dims.push_back(sym::str(d.block_shape[i]));
      }
      host_blocks[d.base] = fmt::format("[{}]", fmt::join(dims, ", "));
    }
    for (const auto& g : forms) {
      allowed.insert(g.loop->var);
      allowed.insert(fmt::format("iter({})", g.loop->id));  // the loop's iteration count (pointers advanced along it)
    }
    std::string bad;
    auto py = [&](const sym::Expr& e) -> std::string {
      if (!e) {
        bad = "an expression the analysis could not read";
        return "None";
      }
      sym::Expr x = cur->expand(e);
      if (sym::isOpaque(x) || sym::overLimit(x)) bad = "an address or bound the analysis could not read";
      for (const auto& v : sym::vars(x)) {
        if (!allowed.count(v)) bad = fmt::format("an address or bound reads '{}', not a parameter or program id", v);
      }
      return sym::str(x);
    };
    auto bound = [&](int id) -> std::string {
      for (const auto& b : acc(id).mask_bounds) return py(b.bound);
      return "None";
    };
    // Per form: where each program reads and writes, the mask, the scale, the dtypes it rounds to.
    std::vector<std::string> where_ret, scales, dtypes, flag_sets, fills;
    std::set<std::string> flag_names, mode_names;
    size_t bounded = 0;  // forms whose where() says last whether their descriptors' tiles lie inside them
    // Forms read from Kernel IRs of their own (flag values) must agree on what the launch
    // function takes once: the pointers, the tiles, the strides and the loop's steps.
    auto common = [&](const AttentionForm& g) {
      Terms t[4];
      std::string w;
      if (!terms(g, t, &w)) return std::string("?");
      return fmt::format("{} {} {} {} | {} {} {} {} | {} {} {} | {} {} | {}", acc(g.q).ptr.base, acc(g.k).ptr.base,
                         acc(g.v).ptr.base, acc(g.o).ptr.base, py(t[0].stride), py(t[1].stride), py(t[2].stride),
                         py(t[3].stride), py(t[0].rows), py(t[1].rows), py(t[0].head), py(g.loop->start),
                         py(g.loop->step), g.lse >= 0 ? acc(g.lse).ptr.base : "");
    };
    const std::string shared = common(f);
    for (const auto& g : forms) {
      cur = g.kir ? g.kir : &kir;
      if (common(g) != shared) {
        *why = "the kernel's flags change its pointers, tiles or loop steps: one route cannot read every form";
        return false;
      }
      std::vector<std::string> rows;
      for (const auto& r : g.row_starts) rows.push_back(py(r));
      // A key that must not pass the program's first row: a first row of -1 where it does, which
      // no other way of saying the row agrees with (the plan refuses the call)
      auto notPast = [&](const std::string& key) {
        if (g.causal && !rows.empty()) rows.push_back(fmt::format("({0} if {1} <= {0} else -1)", rows.front(), key));
      };
      // Two key loops: the second's end is the keys'; with a causal mask only in the second, every
      // key of the first must precede the program's first row
      if (g.loop2) notPast(py(g.loop->stop));
      // The normalized form: the last key block the loop visits starts at or before the program's
      // first row (else a row of it is all masked, NaN in the kernel)
      if (g.normalized) notPast(fmt::format("((({0}) - 1) // ({1})) * ({1})", py(g.loop->stop), py(g.loop->step)));
      where_ret.push_back(fmt::format(
          "(({},), {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {})", fmt::join(rows, ", "), py(acc(g.q).ptr.offset),
          py(acc(g.o).ptr.offset), py(acc(g.k).ptr.offset), py(acc(g.v).ptr.offset),
          py(g.loop2 ? g.loop2->stop : g.loop->stop), bound(g.q),
          bound(g.o), bound(g.k), bound(g.v), g.where_key_bound ? py(g.where_key_bound) : "None",
          g.where_row_bound ? py(g.where_row_bound) : "None"));
      if (g.lse >= 0) {
        where_ret.back().pop_back();
        where_ret.back() += fmt::format(", {}, {})", py(acc(g.lse).ptr.offset), bound(g.lse));
      }
      // Tensor descriptors: the kernel's tiles are exact where they lie inside the descriptor's
      // shape (a tile that crosses it is zero-filled or clipped): said last, at j
      std::vector<std::string> inside;
      for (int id : {g.q, g.o, g.k, g.v}) {
        const IrAccess& a = acc(id);
        if (a.descriptor < 0) continue;
        const IrDescriptor& d = cur->descriptors[static_cast<size_t>(a.descriptor)];
        if (d.shape.size() != a.desc_offsets.size() || d.block_shape.size() != d.shape.size()) {
          *why = fmt::format("line {}: a tensor descriptor's shape is not read", a.loc.line);
          return false;
        }
        for (size_t i = 0; i < d.shape.size(); ++i) {
          inside.push_back(fmt::format("0 <= {0} and {0} + {1} <= {2}", py(a.desc_offsets[i]), py(d.block_shape[i]),
                                       py(d.shape[i])));
        }
      }
      if (!inside.empty()) {
        where_ret.back().pop_back();
        where_ret.back() += fmt::format(", {})", fmt::join(inside, " and "));
        ++bounded;
      }
      std::vector<std::string> fs;
      for (const auto& x : g.scale) fs.push_back("float(getattr(" + x + ", \"value\", " + x + "))");
      if (fs.empty()) fs.push_back("1.0");
      if (g.base == 2) fs.push_back("0.6931471805599453");
      scales.push_back(fmt::format("{}", fmt::join(fs, " * ")));
      std::vector<std::string> fl;
      for (const auto& x : g.fills) {
        std::vector<std::string> at;
        for (const auto& a : x.at) at.push_back("float(getattr(" + a + ", \"value\", " + a + "))");
        fl.push_back(fmt::format("({}, {})", x.value, at.empty() ? "1.0" : fmt::format("{}", fmt::join(at, " * "))));
      }
      fills.push_back(fl.empty() ? "()" : fmt::format("({},)", fmt::join(fl, ", ")));
      std::set<std::string> rounded;
      for (const auto& c : {g.p_cast, g.out_cast}) {
        if (c == "float16" || c == "bfloat16") rounded.insert(c);
      }
      if (rounded.size() > 1) {
        *why = "P and the output are rounded to different dtypes";
        return false;
      }
      dtypes.push_back(rounded.empty() ? "(_tf_torch.float16, _tf_torch.bfloat16)"
                                       : fmt::format("(_tf_torch.{},)", *rounded.begin()));
      std::vector<std::string> kv;
      for (const auto& [n, v] : g.flags) {
        kv.push_back(fmt::format("\"{}\": {}", n, v ? "True" : "False"));
        flag_names.insert(n);
      }
      for (const auto& [n, v] : g.modes) {
        kv.push_back(fmt::format("\"{}\": {}", n, v));
        flag_names.insert(n);
        mode_names.insert(n);
      }
      flag_sets.push_back("{" + fmt::format("{}", fmt::join(kv, ", ")) + "}");
    }
    cur = &kir;
    if (bounded != 0 && bounded != forms.size()) {
      *why = "the kernel's flags choose between tensor descriptors and pointers: one route cannot read every form";
      return false;
    }
    std::string strides = fmt::format("({}, {}, {}, {})", py(tq.stride), py(tk.stride), py(tv.stride), py(to.stride));
    std::string bm = py(tq.rows), bn = py(tk.rows), d = py(tq.head);
    if (!bad.empty()) {
      *why = bad;
      return false;
    }
    const std::string prefix = "_" + k + "_attention_";
    std::set<std::string> tnames;
    std::string templ = prefixedTemplate(prefix, &tnames);
    for (const auto& n : tnames) {
      if (ctx.ir->functions.count(prefix + n) || ctx.ir->module_assignments.count(prefix + n)) {
        *why = fmt::format("the module already defines '{}'", prefix + n);
        return false;
      }
    }
    for (const auto& n : ctx.kernelNames()) {
      if (n.rfind("_tf_", 0) == 0) {
        *why = fmt::format("the kernel uses the name '{}', which the route needs", n);
        return false;
      }
    }
    std::vector<std::string> params, names;
    for (const auto& p : ctx.kernel->params) {
      std::string text = p.name;
      if (!p.annotation.empty()) text += ": " + p.annotation;
      if (p.default_value) text += " = " + ctx.slice(*p.default_value);
      params.push_back(text);
      names.push_back(p.name);
    }
    const std::string i1 = kI1, i2 = std::string(kI1) + kI1, i3 = i2 + kI1, i4 = i3 + kI1;
    std::string s;
    LaunchText t{k, prefix, params, names, {acc(f.q).ptr.base, acc(f.k).ptr.base, acc(f.v).ptr.base, acc(f.o).ptr.base},
                 f.lse >= 0 ? acc(f.lse).ptr.base : "", f.lse >= 0 ? ", " + py(acc(f.lse).ptr.terms[0].stride) : "",
                 f.lse >= 0, f.base == 2, where_ret, scales, dtypes, flag_sets, {}, flag_names, strides, bm, bn, d,
                 f.loop->var, py(f.loop->start), py(f.loop->step), {}};
    t.in_bounds = bounded != 0;
    t.host_blocks = host_blocks;
    for (const auto& g : forms) t.causal.push_back(g.causal);
    for (const auto& h : f.head_strides) t.head_strides.push_back(py(h));
    t.fills = fills;
    t.mode_names = mode_names;
    if (!bad.empty()) {
      *why = bad;
      return false;
    }
    s += "\n\n# gluon-attention: " + k + "'s launches routed to a Gluon attention for Hopper (the template below, its\n";
    s += "# names prefixed); _" + k + "_attention_launch reads the kernel's own addressing per launch and falls back\n";
    s += "# to the kernel as written for any call the template does not compute exactly.\n";
    s += templ;
    s += launchFunction(t);
    bool tuned = ctx.kernel->autotune || !ctx.kernel->heuristics.empty();
    s += launchRouteClass(fmt::format("_{}_AttentionRoute", k),
                          fmt::format("{} launched through the Gluon attention where the call fits it, as written "
                                      "otherwise (`.fn` is the kernel).",
                                      k),
                          tuned);
    if (tuned) {
      s += fmt::format("\n\n_{0}_AttentionRoute.under({0}, _{0}_attention_launch)\n", k);
    } else {
      s += fmt::format("\n\n{0} = _{0}_AttentionRoute({0}, _{0}_attention_launch)\n", k);
    }
    *out = s;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeGluonAttentionPass() { return std::make_unique<GluonAttentionPass>(); }

}  // namespace tf
