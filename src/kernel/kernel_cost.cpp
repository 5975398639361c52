// Map: staticCoalescing (per access, no values) -> deriveFacts (symbolic totals, shared
// memory per stage, constraints) -> estimate (one configuration: values, widths, sectors per
// request, totals over the grid, constraint checks).
#include "kernel/kernel_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tf {
namespace {

bool isConstexprParam(const KernelIR& ir, const std::string& n) {
  const IrParam* p = ir.param(n);
  return p && p->kind == ParamKind::kConstexpr;
}

std::string elemVar(const std::string& base) { return "elem_bytes(" + base + ")"; }

sym::Expr elemSize(const IrAccess& a) {
  if (int b = dtypeBytes(a.dtype)) return sym::num(b);
  if (!a.ptr.base.empty()) return sym::var(elemVar(a.ptr.base));
  return nullptr;
}

// Product of the trip counts of `loop` and its parents; null when one is unknown.
sym::Expr loopFactor(const KernelIR& ir, int loop, std::string* why) {
  sym::Expr f = sym::num(1);
  for (int l = loop; l >= 0; l = ir.loops[l].parent) {
    const IrLoop& L = ir.loops[l];
    if (!L.trips || !L.trips_note.empty()) {
      if (why) *why = fmt::format("the loop at line {} has an unknown trip count ({})", L.loc.line,
                                  L.trips_note.empty() ? "not an integer expression" : L.trips_note);
      if (!L.trips) return nullptr;
      if (L.trips_note.rfind("depends on the variable", 0) == 0) return nullptr;
    }
    f = sym::mul(f, L.trips);
  }
  return f;
}

sym::Expr guarded(const std::vector<IrGuard>& guards, sym::Expr amount, std::vector<std::string>* notes) {
  for (auto it = guards.rbegin(); it != guards.rend(); ++it) {
    if (!it->cond) {
      if (notes) notes->push_back(fmt::format("work under `if {}` is counted as if the condition held", it->text));
      continue;
    }
    sym::Expr c = it->negated ? sym::logicalNot(it->cond) : it->cond;
    amount = sym::select(c, amount, sym::num(0));
  }
  return amount;
}

sym::Expr numel(const std::vector<sym::Expr>& dims) { return sym::product(dims); }

Coalescing staticCoalescing(const KernelIR& ir, const IrAccess& a) {
  Coalescing c;
  if (a.descriptor >= 0) {
    c.verdict = "tma";
    c.note = "a tensor-descriptor (TMA) copy: the hardware moves whole boxes";
    return c;
  }
  if (!a.shape_known) {
    c.verdict = "unknown";
    c.note = "the tile shape is not known";
    return c;
  }
  if (!a.ptr.affine) {
    c.verdict = "unknown";
    c.note = a.ptr.irregular.empty() ? "the address is not understood" : a.ptr.irregular.front();
    return c;
  }
  for (int i = static_cast<int>(a.shape.size()) - 1; i >= 0; --i) {
    if (sym::constant(a.shape[i]) != 1) {
      c.inner_axis = i;
      break;
    }
  }
  std::vector<const IndexTerm*> terms;
  for (const auto& t : a.ptr.terms) if (sym::constant(t.extent) != 1) terms.push_back(&t);
  if (terms.empty()) {
    c.verdict = "scalar";
    c.note = "one address per program (all threads read the same element)";
    return c;
  }
  for (const auto* t : terms) {
    if (sym::constant(t->stride) == 1) {
      c.verdict = "coalesced";
      c.unit_axis = t->axis;
      c.innermost_unit = t->axis == c.inner_axis;
      if (!c.innermost_unit) {
        c.note = fmt::format("unit stride along axis {}, not the innermost: Triton lays threads along axis {}", t->axis, t->axis);
      }
      return c;
    }
  }
  // No literal unit stride: a parameter stride may be 1 at run time.
  const IndexTerm* inner = nullptr;
  for (const auto* t : terms) if (t->axis == c.inner_axis) inner = t;
  if (!inner) inner = terms.back();
  bool all_constant = true;
  for (const auto* t : terms) if (!sym::constant(t->stride)) all_constant = false;
  if (all_constant) {
    c.verdict = "uncoalesced";
    c.note = fmt::format("no tile axis has unit stride (innermost stride {})", sym::str(inner->stride));
    return c;
  }
  c.verdict = "depends";
  std::string cond;
  for (const auto* t : terms) {
    if (sym::constant(t->stride)) continue;
    cond += (cond.empty() ? "" : " or ") + sym::str(t->stride) + " == 1";
  }
  c.condition = cond;
  c.note = "coalesced if " + cond + " at run time (Triton specializes an argument equal to 1)";
  return c;
}

std::vector<std::string> paramsIn(const KernelIR& ir, const sym::Expr& e) {
  std::vector<std::string> out;
  for (const auto& v : sym::vars(ir.expand(e))) if (isConstexprParam(ir, v)) out.push_back(v);
  return out;
}

void addConstraint(KernelStaticFacts& f, Constraint c) {
  for (const auto& o : f.constraints) if (o.kind == c.kind && o.text == c.text) return;
  f.constraints.push_back(std::move(c));
}

}  // namespace

int64_t specializedDivisibility(int64_t value) {
  if (value == 1) return 1;
  return value % 16 == 0 ? 16 : 1;
}

namespace {

// Derived values built from expressions over the symbolic limits (sym::kMaxTerms) are unknown.
std::string limitNote(const char* what) {
  return fmt::format("{} builds expressions over the symbolic limits ({} terms or depth {}): not judged, those values are unknown",
                     what, sym::kMaxTerms, sym::kMaxDepth);
}

}  // namespace

KernelStaticFacts deriveFacts(const KernelIR& ir) {
  KernelStaticFacts f;
  const uint64_t limit_hits = sym::limitHits();
  for (const auto& a : ir.accesses) f.coalescing.push_back(staticCoalescing(ir, a));

  // Bytes per program.
  sym::Expr loaded = sym::num(0), stored = sym::num(0);
  for (const auto& a : ir.accesses) {
    std::string why;
    sym::Expr trips = loopFactor(ir, a.loop, &why);
    sym::Expr es = elemSize(a);
    if (!a.shape_known || !trips || !es) {
      std::string reason = !a.shape_known ? "its tile shape is unknown" : !trips ? why : "its element type is unknown";
      f.notes.push_back(fmt::format("the {} at line {} is not counted: {}", a.api, a.loc.line, reason));
      if (a.kind == AccessKind::kStore) stored = nullptr;
      else loaded = nullptr;
      if (a.kind == AccessKind::kAtomic) stored = nullptr;
      continue;
    }
    sym::Expr amount = guarded(a.guards, sym::mul(sym::mul(numel(a.shape), es), trips), &f.notes);
    if (a.kind == AccessKind::kLoad) loaded = sym::add(loaded, amount);
    else if (a.kind == AccessKind::kStore) stored = sym::add(stored, amount);
    else {  // an atomic reads and writes
      loaded = sym::add(loaded, amount);
      stored = sym::add(stored, amount);
    }
  }
  f.bytes_loaded = loaded;
  f.bytes_stored = stored;

  // FLOPs per program.
  sym::Expr flops = sym::num(0);
  for (const auto& d : ir.dots) {
    std::string why;
    sym::Expr trips = loopFactor(ir, d.loop, &why);
    if (!d.m || !d.n || !d.k || !trips) {
      f.notes.push_back(fmt::format("the dot at line {} is not counted: {}", d.loc.line, !trips ? why : "its shape is unknown"));
      flops = nullptr;
      continue;
    }
    sym::Expr amount = sym::mul(sym::num(2), sym::mul(sym::mul(d.m, d.n), d.k));
    if (d.batch) amount = sym::mul(amount, d.batch);
    flops = sym::add(flops, guarded(d.guards, sym::mul(amount, trips), &f.notes));
  }
  for (const auto& m : ir.math) {
    std::string why;
    sym::Expr trips = loopFactor(ir, m.loop, &why);
    if (!m.shape_known || !trips) {
      f.notes.push_back(fmt::format("the {} at line {} is not counted: {}", m.op, m.loc.line, !trips ? why : "its shape is unknown"));
      flops = nullptr;
      continue;
    }
    flops = sym::add(flops, guarded(m.guards, sym::mul(sym::mul(numel(m.shape), sym::num(m.flops)), trips), &f.notes));
  }
  for (const auto& r : ir.reductions) {
    std::string why;
    sym::Expr trips = loopFactor(ir, r.loop, &why);
    if (!r.shape_known || !trips) {
      f.notes.push_back(fmt::format("the {} at line {} is not counted: {}", r.op, r.loc.line, !trips ? why : "its shape is unknown"));
      flops = nullptr;
      continue;
    }
    flops = sym::add(flops, sym::mul(numel(r.in_shape), trips));
  }
  f.flops = flops;
  {
    std::vector<std::string> uniq;
    for (const auto& n : f.notes) if (std::find(uniq.begin(), uniq.end(), n) == uniq.end()) uniq.push_back(n);
    f.notes = uniq;
  }

  // Shared memory for dot operands.
  std::set<int> pipelined, outside;
  for (const auto& d : ir.dots) {
    for (int ai : {d.a_access, d.b_access}) {
      if (ai < 0) continue;
      const IrAccess& a = ir.accesses[ai];
      if (d.loop >= 0 && a.loop == d.loop) pipelined.insert(ai);
      else outside.insert(ai);
    }
  }
  auto tileBytes = [&](int ai) -> sym::Expr {
    const IrAccess& a = ir.accesses[ai];
    sym::Expr es = elemSize(a);
    if (!a.shape_known || !es) return nullptr;
    return sym::mul(numel(a.shape), es);
  };
  auto partText = [&](int ai) {
    const IrAccess& a = ir.accesses[ai];
    std::string dims;
    for (size_t i = 0; i < a.shape.size(); ++i) dims += (i ? " x " : "") + sym::str(a.shape[i]);
    return fmt::format("{} tile {} ({} at line {})", a.ptr.base.empty() ? "?" : a.ptr.base, dims, a.api, a.loc.line);
  };
  for (const auto& a : ir.accesses) {
    if (a.kind == AccessKind::kLoad || !a.value_from_dot) continue;
    sym::Expr b = tileBytes(a.id);
    if (!b) continue;
    f.smem_epilogue = f.smem_epilogue ? sym::max(f.smem_epilogue, b) : b;
  }
  for (int ai : pipelined) f.smem_operands.push_back({ai, tileBytes(ai), true});
  for (int ai : outside) f.smem_operands.push_back({ai, tileBytes(ai), false});
  if (!pipelined.empty()) {
    sym::Expr s = sym::num(0);
    for (int ai : pipelined) {
      s = sym::add(s, tileBytes(ai));
      f.smem_parts.push_back("per stage: " + partText(ai));
    }
    f.smem_per_stage = s;
  }
  if (!outside.empty()) {
    sym::Expr s = sym::num(0);
    for (int ai : outside) {
      s = sym::add(s, tileBytes(ai));
      f.smem_parts.push_back("once: " + partText(ai));
    }
    f.smem_unpipelined = s;
  }

  // Constraints.
  for (const auto& p : ir.tile_params) {
    Constraint c;
    c.kind = "power_of_two";
    c.params = {p};
    c.lhs = sym::var(p);
    c.text = p + " is a power of two";
    c.why = "it is a tl.arange extent or a tensor dimension, which Triton requires to be a power of two";
    addConstraint(f, c);
  }
  for (const auto& d : ir.dots) {
    int bits = std::max(dtypeBytes(d.a_dtype), dtypeBytes(d.b_dtype)) * 8;
    int64_t kmin = bits == 8 ? 32 : 16;
    if (d.k && !sym::constant(d.k)) {
      Constraint c;
      c.kind = "dot_min";
      c.params = paramsIn(ir, d.k);
      c.lhs = d.k;
      c.rhs = sym::num(kmin);
      c.text = fmt::format("{} >= {}", sym::str(d.k), kmin);
      c.why = fmt::format("tl.dot needs K >= {} (Triton 3.6{})", kmin, bits == 8 ? ", 8-bit operands" : "");
      addConstraint(f, c);
    }
    for (const auto& [dim, name] : {std::pair{d.m, "M"}, std::pair{d.n, "N"}}) {
      if (!dim || sym::constant(dim)) continue;
      Constraint c;
      c.kind = "dot_min";
      c.params = paramsIn(ir, dim);
      c.lhs = dim;
      c.rhs = sym::num(16);
      c.text = fmt::format("{} >= 16", sym::str(dim));
      c.why = fmt::format("a dot {} below 16 is padded to the tensor-core tile: wasted work", name);
      c.required = false;
      addConstraint(f, c);
    }
  }
  // Loops stepping over a tile whose accesses are not masked along it: the bound must be a
  // multiple of the step.
  for (const auto& L : ir.loops) {
    if (!L.step || !L.stop || sym::constant(L.step)) continue;
    std::vector<int> lines;
    std::vector<const IrAccess*> unmasked;
    for (const auto& a : ir.accesses) {
      if (a.loop != L.id || a.descriptor >= 0) continue;
      bool masked = !a.mask.empty() || !a.boundary_check.empty();
      if (masked) continue;
      for (const auto& t : a.ptr.terms) {
        if (sym::same(ir.expand(t.extent), ir.expand(L.step))) {
          lines.push_back(a.loc.line);
          unmasked.push_back(&a);
          break;
        }
      }
    }
    if (lines.empty()) continue;
    // Guards the unmasked accesses share beyond the loop's own (if EVEN_K: ...).
    sym::Expr when;
    std::string when_text;
    {
      const auto& g0 = unmasked.front()->guards;
      for (size_t gi = L.guards.size(); gi < g0.size(); ++gi) {
        bool shared = true;
        for (const auto* a : unmasked) {
          if (a->guards.size() <= gi || a->guards[gi].text != g0[gi].text || a->guards[gi].negated != g0[gi].negated) shared = false;
        }
        if (!shared || !g0[gi].cond) continue;
        sym::Expr c = g0[gi].negated ? sym::logicalNot(g0[gi].cond) : g0[gi].cond;
        when = when ? sym::logicalAnd(when, c) : c;
        std::string t = g0[gi].negated ? "not (" + g0[gi].text + ")" : g0[gi].text;
        when_text = when_text.empty() ? t : when_text + " and " + t;
      }
    }
    Constraint c;
    c.kind = "divides";
    c.params = paramsIn(ir, L.step);
    c.lhs = L.start && sym::constant(L.start) == 0 ? L.stop : sym::sub(L.stop, L.start);
    c.rhs = L.step;
    c.text = fmt::format("{} % {} == 0", sym::str(c.lhs), sym::str(c.rhs));
    std::string ls;
    for (int l : lines) ls += (ls.empty() ? "" : ", ") + std::to_string(l);
    c.why = fmt::format("the accesses at line {} are not masked along the tile the loop at line {} steps over", ls, L.loc.line);
    c.when = when;
    c.when_text = when_text;
    if (!when_text.empty()) c.text += " (when " + when_text + ")";
    addConstraint(f, c);
  }
  // A tile that spans a whole dimension without a loop or a program id over it must cover it.
  for (const auto& a : ir.accesses) {
    for (const auto& mb : a.mask_bounds) {
      if (mb.axis < 0 || !mb.bound) continue;
      const IndexTerm* term = nullptr;
      for (const auto& t : a.ptr.terms) if (t.axis == mb.axis) term = &t;
      if (!term || sym::constant(term->extent)) continue;
      bool moves = false;
      for (const auto& v : sym::vars(ir.expand(mb.index_offset))) {
        if (v.rfind("program_id(", 0) == 0 || v.rfind("iter(", 0) == 0) moves = true;
        for (const auto& L : ir.loops) if (L.var == v) moves = true;
      }
      if (moves || a.loop >= 0) continue;
      Constraint c;
      c.kind = "covers";
      c.params = paramsIn(ir, term->extent);
      c.lhs = term->extent;
      c.rhs = mb.bound;
      c.text = fmt::format("{} >= {}", sym::str(term->extent), sym::str(mb.bound));
      c.why = fmt::format("the {} at line {} handles the whole dimension in one tile (mask {}), with no loop over it",
                          a.api, a.loc.line, mb.text);
      addConstraint(f, c);
    }
  }
  if (f.smem_per_stage) {
    Constraint c;
    c.kind = "shared_memory";
    c.lhs = f.smem_unpipelined ? sym::add(sym::mul(sym::var("num_stages"), f.smem_per_stage), f.smem_unpipelined)
                               : sym::mul(sym::var("num_stages"), f.smem_per_stage);
    c.rhs = sym::num(kSm90SharedPerBlock);
    for (const auto& p : paramsIn(ir, c.lhs)) c.params.push_back(p);
    c.params.push_back("num_stages");
    c.text = fmt::format("{} <= {}", sym::str(c.lhs), kSm90SharedPerBlock);
    c.why = "dot operands are buffered per pipeline stage in shared memory (num_stages buffers on the wgmma path, "
            "num_stages - 1 on the mma path; 227 KiB per block on sm_90); the check uses num_stages buffers";
    addConstraint(f, c);
  }
  Constraint w;
  w.kind = "warps_power_of_two";
  w.params = {"num_warps"};
  w.lhs = sym::var("num_warps");
  w.text = "num_warps is a power of two";
  w.why = "Triton's layouts split a block into a power-of-two number of warps";
  addConstraint(f, w);
  if (sym::limitHits() != limit_hits) f.notes.push_back(limitNote("deriving bytes, FLOPs, shared memory and constraints"));
  return f;
}

namespace {

class Evaluator {
 public:
  Evaluator(const KernelIR& ir, const AnalysisConfig& cfg) : ir_(ir), cfg_(cfg) {
    for (const auto& [k, v] : cfg.values) values_[k] = v;
    values_["num_warps"] = cfg.num_warps;
    values_["num_stages"] = cfg.num_stages;
    if (cfg.grid) for (int a = 0; a < 3; ++a) values_[numProgramsVar(a)] = (*cfg.grid)[a];
    for (const auto& p : ir.params) {
      auto t = cfg.types.find(p.name);
      if (t != cfg.types.end() && !t->second.empty() && t->second[0] == '*') {
        if (int b = dtypeBytes(t->second.substr(1))) values_[elemVar(p.name)] = b;
      }
    }
  }

  std::optional<int64_t> eval(const sym::Expr& e) const { return evalExpanded(ir_.expand(e)); }

  // For an expression whose locals are already expanded (evaluated once per program).
  std::optional<int64_t> evalExpanded(const sym::Expr& e) const {
    return sym::eval(e, [this](const std::string& n) -> std::optional<int64_t> {
      auto it = values_.find(n);
      if (it != values_.end()) return it->second;
      return std::nullopt;
    });
  }

  // Divisibility Triton sees for a name: constexprs exactly; integer arguments through the
  // JIT's specialization; loop variables by their start and step.
  int64_t div(const std::string& n) const {
    auto it = values_.find(n);
    if (it != values_.end()) {
      if (isConstexprParam(ir_, n) || n == "num_warps") return pow2(it->second);
      if (ir_.param(n)) return specializedDivisibility(it->second);
      return pow2(it->second);
    }
    auto l = ir_.locals.find(n);
    if (l != ir_.locals.end()) return sym::divisibility(l->second, [this](const std::string& x) { return div(x); });
    for (const auto& L : ir_.loops) {
      if (L.var == n && L.start && L.step) {
        auto dv = [this](const std::string& x) { return div(x); };
        int64_t a = sym::divisibility(ir_.expand(L.start), dv), b = sym::divisibility(ir_.expand(L.step), dv);
        if (a == 0) return b == 0 ? 1 : b;
        if (b == 0) return a;
        return std::min(a, b);
      }
    }
    return 1;
  }

  int64_t divOf(const sym::Expr& e) const {
    return sym::divisibility(ir_.expand(e), [this](const std::string& x) { return div(x); });
  }

  static int64_t pow2(int64_t v) {
    if (v == 0) return 0;
    int64_t d = 1;
    while (d < 1024 && v % (d * 2) == 0) d *= 2;
    return d;
  }

  void setPid(int axis, int64_t v) { values_[pidVar(axis)] = v; }

 private:
  const KernelIR& ir_;
  const AnalysisConfig& cfg_;
  std::map<std::string, int64_t> values_;
};

int64_t floorPow2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

AccessEstimate estimateAccess(const KernelIR& ir, const IrAccess& a, const Coalescing& st, const Evaluator& ev,
                              const AnalysisConfig& cfg) {
  AccessEstimate r;
  r.access = a.id;
  r.active = true;
  for (const auto& g : a.guards) {
    auto c = g.cond ? ev.eval(g.cond) : std::nullopt;
    if (!c) {
      r.active.reset();
      break;
    }
    if ((*c != 0) == g.negated) {
      r.active = false;
      break;
    }
  }
  for (int l = a.loop; l >= 0 && a.kind == AccessKind::kLoad; l = ir.loops[l].parent) {
    if (ir.loops[l].num_stages && *ir.loops[l].num_stages >= 2) r.async_copy = true;
  }
  if (int b = dtypeBytes(a.dtype)) r.elem_bytes = b;
  else if (!a.ptr.base.empty()) {
    auto t = cfg.types.find(a.ptr.base);
    if (t != cfg.types.end() && !t->second.empty() && t->second[0] == '*') {
      if (int b2 = dtypeBytes(t->second.substr(1))) r.elem_bytes = b2;
    }
  }
  std::optional<int64_t> n = a.shape_known ? ev.eval(numel(a.shape)) : std::nullopt;
  if (st.verdict == "tma" || st.verdict == "unknown" || st.verdict == "scalar") {
    r.verdict = st.verdict;
    if (st.verdict == "scalar" && r.elem_bytes) {
      r.vector_elems = 1;
      r.width_bytes = *r.elem_bytes;
      r.sectors_per_request = 1;
    }
    return r;
  }
  // Strides with the configuration's values.
  const IndexTerm* unit = nullptr;
  const IndexTerm* inner = nullptr;
  bool all_known = true;
  for (const auto& t : a.ptr.terms) {
    auto ext = ev.eval(t.extent);
    if (ext && *ext == 1) continue;
    auto s = ev.eval(t.stride);
    if (!s) all_known = false;
    else if (*s == 1 && !unit) unit = &t;
    if (!inner || t.axis > inner->axis) inner = &t;
  }
  if (!unit) {
    if (!all_known || !inner) {
      r.verdict = "unknown";
      return r;
    }
    r.verdict = "uncoalesced";
    if (r.elem_bytes) {
      r.vector_elems = 1;
      r.width_bytes = *r.elem_bytes;
      int64_t gap = std::llabs(*ev.eval(inner->stride)) * *r.elem_bytes;
      r.sectors_per_request = gap >= 32 ? 32.0 : std::ceil(32.0 * static_cast<double>(gap) / 32.0);
      r.limited_by = fmt::format("no unit-stride axis: consecutive threads are {} bytes apart", gap);
    }
    return r;
  }
  r.verdict = "coalesced";
  r.unit_axis = unit->axis;
  if (!r.elem_bytes || !n) return r;
  int64_t eb = *r.elem_bytes;
  auto extent = ev.eval(unit->extent);
  int64_t threads = 32 * cfg.num_warps;
  std::vector<std::pair<int64_t, std::string>> limits;
  limits.push_back({16 / eb, "16 bytes per thread (128-bit accesses)"});
  if (extent) limits.push_back({*extent, "the tile's extent along the unit-stride axis"});
  limits.push_back({std::max<int64_t>(1, *n / threads), fmt::format("{} elements over {} threads", *n, threads)});
  int64_t off_div = a.ptr.offset ? ev.divOf(a.ptr.offset) : 1;
  if (off_div != 0) limits.push_back({off_div, "the alignment of the offset (" + sym::str(a.ptr.offset) + ")"});
  for (const auto& t : a.ptr.terms) {
    if (&t == unit) continue;
    auto ext = ev.eval(t.extent);
    if (ext && *ext == 1) continue;
    int64_t d = ev.divOf(t.stride);
    if (d != 0) limits.push_back({d, "the alignment of the stride " + sym::str(t.stride)});
  }
  if (unit->wrap_by) {
    int64_t d = ev.divOf(unit->wrap_by);
    if (d != 0) limits.push_back({d, "the alignment of the wrap " + unit->wrap});
  }
  for (const auto& mb : a.mask_bounds) {
    if (mb.axis != unit->axis || !mb.bound) continue;
    int64_t d = ev.divOf(mb.bound);
    if (d != 0) limits.push_back({d, "the alignment of the mask bound " + sym::str(mb.bound)});
  }
  if (!a.mask.empty() && a.mask_bounds.empty()) {
    // A mask we could not read: assume it does not limit the vector width.
  }
  int64_t vec = INT64_MAX;
  for (const auto& [v, why] : limits) {
    if (v < vec) {
      vec = v;
      r.limited_by = why;
    }
  }
  vec = std::max<int64_t>(1, floorPow2(vec));
  r.vector_elems = vec;
  r.width_bytes = vec * eb;
  // Sectors touched by one warp-wide instruction: threads first along the unit axis.
  int64_t ext = extent ? *extent : vec * 32;
  int64_t tpw_u = std::clamp<int64_t>(ext / vec, 1, 32);
  int64_t rows = 32 / tpw_u;
  int64_t row_bytes = tpw_u * vec * eb;
  bool adjacent_rows = false;
  if (rows > 1) {
    for (const auto& t : a.ptr.terms) {
      if (&t == unit) continue;
      auto s = ev.eval(t.stride);
      if (s && *s == ext) adjacent_rows = true;
    }
  }
  if (rows == 1 || adjacent_rows) r.sectors_per_request = std::ceil(static_cast<double>(32 * vec * eb) / 32.0);
  else r.sectors_per_request = static_cast<double>(rows) * std::ceil(static_cast<double>(row_bytes) / 32.0);
  return r;
}

}  // namespace

CostEstimate estimate(const KernelIR& ir, const KernelStaticFacts& facts, const AnalysisConfig& cfg) {
  CostEstimate out;
  const uint64_t limit_hits = sym::limitHits();
  Evaluator ev(ir, cfg);
  for (size_t i = 0; i < ir.accesses.size(); ++i) {
    AccessEstimate ae = estimateAccess(ir, ir.accesses[i], facts.coalescing[i], ev, cfg);
    out.accesses.push_back(ae);
  }
  // Triton gives a tensor one layout, chosen for its contiguous accesses: when a coalesced
  // access of a tile of the same size holds v elements per thread, a strided access of that
  // tile does too, so its neighbouring threads are v * stride elements apart (measured on an
  // H200: a stride-2 fp32 load beside a 128-bit store touches 32 sectors per request, not 8).
  auto tileElems = [&](size_t i) -> std::optional<int64_t> {
    const IrAccess& a = ir.accesses[i];
    return a.shape_known ? ev.eval(numel(a.shape)) : std::nullopt;
  };
  for (size_t i = 0; i < out.accesses.size(); ++i) {
    AccessEstimate& u = out.accesses[i];
    if (u.verdict != "uncoalesced" || !u.elem_bytes || !u.sectors_per_request || *u.sectors_per_request >= 32) continue;
    auto n = tileElems(i);
    if (!n) continue;
    int64_t v = 1;
    for (size_t j = 0; j < out.accesses.size(); ++j) {
      const AccessEstimate& c = out.accesses[j];
      if (c.verdict == "coalesced" && c.vector_elems && tileElems(j) == n) v = std::max(v, *c.vector_elems);
    }
    if (v <= 1) continue;
    double sectors = std::min(32.0, *u.sectors_per_request * static_cast<double>(v));
    u.sectors_per_request = sectors;
    u.limited_by += fmt::format("; the tile's layout holds {} elements per thread (from its coalesced accesses)", v);
  }
  // Totals: per program, averaged over the grid when they vary with the program id.
  std::set<int> pid_axes;
  for (const sym::Expr* e : {&facts.bytes_loaded, &facts.bytes_stored, &facts.flops}) {
    if (!*e) continue;
    for (const auto& v : sym::vars(ir.expand(*e))) {
      if (v.rfind("program_id(", 0) == 0) pid_axes.insert(std::stoi(v.substr(11)));
    }
  }
  if (cfg.grid) out.programs = static_cast<double>((*cfg.grid)[0]) * (*cfg.grid)[1] * (*cfg.grid)[2];
  const sym::Expr el = facts.bytes_loaded ? ir.expand(facts.bytes_loaded) : nullptr;
  const sym::Expr es = facts.bytes_stored ? ir.expand(facts.bytes_stored) : nullptr;
  const sym::Expr ef = facts.flops ? ir.expand(facts.flops) : nullptr;
  auto add = [&](const sym::Expr& e, double* acc, bool* ok) {
    if (!e || !*ok) {
      *ok = false;
      return;
    }
    auto v = ev.evalExpanded(e);
    if (v) *acc += static_cast<double>(*v);
    else *ok = false;
  };
  auto evalAll = [&](double* l, double* s, double* f, bool* ok_l, bool* ok_s, bool* ok_f) {
    add(el, l, ok_l);
    add(es, s, ok_s);
    add(ef, f, ok_f);
  };
  double l = 0, s = 0, fl = 0;
  bool ok_l = true, ok_s = true, ok_f = true;
  if (pid_axes.empty()) {
    evalAll(&l, &s, &fl, &ok_l, &ok_s, &ok_f);
  } else if (cfg.grid && out.programs && *out.programs <= (1 << 20)) {
    out.varies_per_program = true;
    const auto& g = *cfg.grid;
    for (int64_t z = 0; z < g[2]; ++z) {
      for (int64_t y = 0; y < g[1]; ++y) {
        for (int64_t x = 0; x < g[0]; ++x) {
          ev.setPid(0, x);
          ev.setPid(1, y);
          ev.setPid(2, z);
          evalAll(&l, &s, &fl, &ok_l, &ok_s, &ok_f);
        }
      }
    }
    l /= *out.programs;
    s /= *out.programs;
    fl /= *out.programs;
    out.notes.push_back("work varies with the program id: per-program figures are the mean over the grid");
  } else {
    ok_l = ok_s = ok_f = false;
    out.notes.push_back("work varies with the program id and the grid is not known (or too large to enumerate)");
  }
  if (ok_l) out.bytes_loaded = l;
  if (ok_s) out.bytes_stored = s;
  if (ok_f) out.flops = fl;
  if (ok_l && ok_s && ok_f && l + s > 0) out.intensity = fl / (l + s);
  if (out.programs) {
    if (ok_l && ok_s) out.total_bytes = (l + s) * *out.programs;
    if (ok_f) out.total_flops = fl * *out.programs;
  }

  // Tensor-core path of each dot.
  bool any_mma = false, any_wgmma = false;
  for (const auto& d : ir.dots) {
    DotEstimate de;
    de.dot = d.id;
    auto m = d.m ? ev.eval(d.m) : std::nullopt;
    auto n = d.n ? ev.eval(d.n) : std::nullopt;
    std::string at = d.a_dtype;
    if (at.empty()) {
      de.why = "operand types unknown";
    } else if (at == "fp32" && (d.input_precision == "ieee" || (d.allow_tf32 && !*d.allow_tf32))) {
      de.tensor_core = "fma";
      de.why = "fp32 operands with input_precision ieee";
    } else if (!m || !n) {
      de.why = "tile shape unknown";
    } else if (d.batch) {
      de.tensor_core = "mma";
      de.why = "a batched (3-D) dot";
    } else if (*m % 64 == 0 && *n % 8 == 0 && cfg.num_warps % 4 == 0) {
      de.tensor_core = "wgmma";
      de.why = fmt::format("M = {} is a multiple of 64 and {} warps fill warpgroups", *m, cfg.num_warps);
    } else {
      de.tensor_core = "mma";
      de.why = *m % 64 != 0 ? fmt::format("M = {} is not a multiple of 64", *m)
                            : cfg.num_warps % 4 != 0 ? fmt::format("{} warps do not fill a warpgroup", cfg.num_warps)
                                                     : fmt::format("N = {} is not a multiple of 8", *n);
    }
    if (de.tensor_core == "mma") any_mma = true;
    if (de.tensor_core == "wgmma") any_wgmma = true;
    out.dots.push_back(de);
  }

  // Shared memory.
  out.smem.limit = cfg.smem_limit;
  if (!ir.dots.empty()) {
    out.smem.applies = true;
    int64_t stages = cfg.num_stages;
    for (const auto& d : ir.dots) {
      if (d.loop >= 0 && ir.loops[d.loop].num_stages) stages = *ir.loops[d.loop].num_stages;
    }
    out.smem.stages = stages;
    // The wgmma pipeline keeps num_stages operand buffers; the mma (cp.async) one num_stages - 1.
    if (any_wgmma || any_mma) {
      out.smem.buffers = any_wgmma ? std::max<int64_t>(stages, 1) : std::max<int64_t>(stages - 1, 1);
    }
    // Per operand: pipelined when it is loaded in the loop and can be copied asynchronously.
    std::optional<int64_t> per = 0, once = 0, uncertain = 0;
    for (const auto& op : facts.smem_operands) {
      auto b = ev.eval(op.bytes);
      if (!b) {
        per.reset();
        break;
      }
      if (!op.in_loop) {
        *once += *b;
        continue;
      }
      const IrAccess& a = ir.accesses[op.access];
      const AccessEstimate& ae = out.accesses[op.access];
      bool async = a.descriptor >= 0 || (ae.width_bytes && *ae.width_bytes >= 4);
      bool known = a.descriptor >= 0 || ae.width_bytes.has_value();
      if (dtypeBytes(a.dtype) == 1) known = false;  // 8-bit operands: not modelled
      if (!known) {
        *per += *b;
        *uncertain += *b;
      } else if (async) {
        *per += *b;
      } else {
        *once += *b;
        out.smem.unpipelined_operands.push_back(op.access);
      }
    }
    if (per) {
      out.smem.per_stage = per;
      out.smem.unpipelined = once;
      int64_t buffers = out.smem.buffers.value_or(std::max<int64_t>(stages, 1));
      if (out.smem.buffers || *per == 0) {
        out.smem.total = buffers * *per + *once;
        if (*uncertain > 0) out.smem.lower = buffers * (*per - *uncertain) + *once + *uncertain;
        if (facts.smem_epilogue) {
          if (auto ep = ev.eval(facts.smem_epilogue)) {
            out.smem.epilogue = *ep;
            out.smem.total = std::max(*out.smem.total, *ep);
            if (out.smem.lower) out.smem.lower = std::max(*out.smem.lower, *ep);
          }
        }
        int64_t low = out.smem.lower.value_or(*out.smem.total);
        if (*out.smem.total <= cfg.smem_limit) out.smem.fits = true;
        else if (low > cfg.smem_limit) out.smem.fits = false;
      }
      if (*uncertain > 0) {
        out.notes.push_back("whether every dot operand is pipelined is unknown (an access width is unknown): "
                            "shared memory is given as a range");
      }
    }
  }

  // Constraints.
  for (const auto& c : facts.constraints) {
    ConstraintCheck chk;
    if (c.when) {
      auto w = ev.eval(c.when);
      if (w && *w == 0) {
        chk.status = "ok";
        chk.detail = "does not apply: " + c.when_text + " is false";
        out.constraints.push_back(chk);
        continue;
      }
    }
    if (c.kind == "power_of_two" || c.kind == "warps_power_of_two") {
      auto v = ev.eval(c.lhs);
      if (!v) chk.status = "unknown";
      else {
        bool ok = *v > 0 && (*v & (*v - 1)) == 0;
        chk.status = ok ? "ok" : "violated";
        chk.detail = fmt::format("{} = {}", sym::str(c.lhs), *v);
      }
    } else if (c.kind == "dot_min" || c.kind == "covers") {
      auto l2 = ev.eval(c.lhs), r2 = ev.eval(c.rhs);
      if (!l2 || !r2) chk.status = "unknown";
      else {
        chk.status = *l2 >= *r2 ? "ok" : "violated";
        chk.detail = fmt::format("{} vs {}", *l2, *r2);
      }
    } else if (c.kind == "divides") {
      auto l2 = ev.eval(c.lhs), r2 = ev.eval(c.rhs);
      if (!l2 || !r2 || *r2 == 0) chk.status = "unknown";
      else {
        chk.status = *l2 % *r2 == 0 ? "ok" : "violated";
        chk.detail = fmt::format("{} % {} = {}", *l2, *r2, *l2 % *r2);
      }
    } else if (c.kind == "shared_memory") {
      if (!out.smem.total || !out.smem.fits) chk.status = "unknown";
      else {
        chk.status = *out.smem.fits ? "ok" : "violated";
        chk.detail = fmt::format("{} bytes of {}", *out.smem.total, cfg.smem_limit);
      }
    } else {
      chk.status = "unknown";
    }
    out.constraints.push_back(chk);
  }
  if (sym::limitHits() != limit_hits) out.notes.push_back(limitNote("estimating this case"));
  return out;
}

}  // namespace tf
