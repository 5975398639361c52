#include "kernel/kernel_ir_json.h"

#include <map>

namespace tf {
namespace {

using nlohmann::json;

json exprList(const std::vector<sym::Expr>& xs) {
  json a = json::array();
  for (const auto& x : xs) a.push_back(exprJson(x));
  return a;
}

json shapeJson(const std::vector<sym::Expr>& dims, bool known) { return known ? exprList(dims) : json(nullptr); }

json viaJson(const std::vector<std::string>& via) { return via; }

json guardsJson(const std::vector<IrGuard>& guards) {
  json a = json::array();
  for (const auto& g : guards) a.push_back(g.negated ? "not (" + g.text + ")" : g.text);
  return a;
}

json optInt(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }
json optDouble(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json strOrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

}  // namespace

json exprJson(const sym::Expr& e) { return e ? json(sym::str(e)) : json(nullptr); }

json kernelIRJson(const KernelIR& ir, const KernelStaticFacts& facts) {
  json k;
  json params = json::array();
  for (const auto& p : ir.params) {
    json pj = {{"name", p.name}, {"index", p.index}, {"kind", toString(p.kind)}, {"evidence", p.evidence},
               {"type", strOrNull(p.type)}, {"used", p.used}};
    params.push_back(pj);
  }
  k["params"] = params;

  json axes = json::array();
  for (const auto& a : ir.program_axes) {
    json uses = json::array();
    for (const auto& u : a.uses) {
      uses.push_back({{"access", u.access}, {"base", u.base}, {"kind", u.kind}, {"dim", u.dim}, {"extent", exprJson(u.extent)},
                      {"stride", exprJson(u.stride)}, {"through", strOrNull(u.through)}});
    }
    axes.push_back({{"axis", a.axis}, {"names", a.names}, {"grouped", a.grouped}, {"uses", uses}});
  }
  k["program_axes"] = axes;

  json loops = json::array();
  for (const auto& L : ir.loops) {
    loops.push_back({{"id", L.id}, {"line", L.loc.line}, {"kind", L.kind}, {"var", L.var}, {"parent", L.parent},
                     {"depth", L.depth}, {"start", exprJson(L.start)}, {"stop", exprJson(L.stop)}, {"step", exprJson(L.step)},
                     {"trips", exprJson(L.trips)}, {"trips_expanded", L.trips ? exprJson(ir.expand(L.trips)) : json(nullptr)},
                     {"trips_note", strOrNull(L.trips_note)}, {"num_stages", optInt(L.num_stages)},
                     {"loop_unroll_factor", optInt(L.loop_unroll_factor)}, {"warp_specialize", L.warp_specialize},
                     {"flatten", L.flatten}, {"guards", guardsJson(L.guards)}, {"via", viaJson(L.via)}});
  }
  k["loops"] = loops;

  json accesses = json::array();
  for (size_t i = 0; i < ir.accesses.size(); ++i) {
    const auto& a = ir.accesses[i];
    json terms = json::array();
    for (const auto& t : a.ptr.terms) {
      terms.push_back({{"axis", t.axis}, {"index", t.index}, {"stride", exprJson(t.stride)}, {"extent", exprJson(t.extent)},
                       {"wrap", strOrNull(t.wrap)}});
    }
    json bounds = json::array();
    for (const auto& b : a.mask_bounds) bounds.push_back({{"axis", b.axis}, {"index", b.index}, {"bound", exprJson(b.bound)}, {"text", b.text}});
    const Coalescing& c = facts.coalescing[i];
    json aj = {{"id", a.id},
               {"kind", toString(a.kind)},
               {"api", a.api},
               {"op", strOrNull(a.op)},
               {"line", a.loc.line},
               {"col", a.loc.col},
               {"text", a.text},
               {"loop", a.loop},
               {"via", viaJson(a.via)},
               {"guards", guardsJson(a.guards)},
               {"shape", shapeJson(a.shape, a.shape_known)},
               {"dtype", strOrNull(a.dtype)},
               {"pointer", {{"affine", a.ptr.affine}, {"base", strOrNull(a.ptr.base)}, {"base_evidence", strOrNull(a.ptr.base_evidence)},
                            {"offset", exprJson(a.ptr.offset)}, {"terms", terms}, {"irregular", a.ptr.irregular}}},
               {"block_ptr", a.block_ptr >= 0 ? json(a.block_ptr) : json(nullptr)},
               {"descriptor", a.descriptor >= 0 ? json(a.descriptor) : json(nullptr)},
               {"mask", strOrNull(a.mask)},
               {"mask_bounds", bounds},
               {"other", strOrNull(a.other)},
               {"cache_modifier", strOrNull(a.cache_modifier)},
               {"eviction_policy", strOrNull(a.eviction_policy)},
               {"volatile", a.is_volatile},
               {"boundary_check", strOrNull(a.boundary_check)},
               {"padding_option", strOrNull(a.padding_option)},
               {"sem", strOrNull(a.sem)},
               {"scope", strOrNull(a.scope)},
               {"coalescing", {{"verdict", c.verdict}, {"unit_axis", c.unit_axis >= 0 ? json(c.unit_axis) : json(nullptr)},
                               {"innermost_unit", c.innermost_unit}, {"condition", strOrNull(c.condition)}, {"note", strOrNull(c.note)}}}};
    accesses.push_back(aj);
  }
  k["accesses"] = accesses;

  json bps = json::array();
  for (const auto& b : ir.block_ptrs) {
    bps.push_back({{"id", b.id}, {"line", b.loc.line}, {"base", strOrNull(b.base)}, {"shape", exprList(b.shape)},
                   {"strides", exprList(b.strides)}, {"offsets", exprList(b.offsets)}, {"block_shape", exprList(b.block_shape)},
                   {"order", b.order}, {"advanced_from", b.advanced_from >= 0 ? json(b.advanced_from) : json(nullptr)},
                   {"advance", exprList(b.advance)}});
  }
  k["block_ptrs"] = bps;
  json descs = json::array();
  for (const auto& d : ir.descriptors) {
    descs.push_back({{"id", d.id}, {"line", d.loc.line}, {"base", strOrNull(d.base)}, {"host", d.host}, {"shape", exprList(d.shape)},
                     {"strides", exprList(d.strides)}, {"block_shape", exprList(d.block_shape)}});
  }
  k["descriptors"] = descs;

  json dots = json::array();
  for (const auto& d : ir.dots) {
    dots.push_back({{"id", d.id}, {"line", d.loc.line}, {"loop", d.loop}, {"via", viaJson(d.via)}, {"m", exprJson(d.m)},
                    {"n", exprJson(d.n)}, {"k", exprJson(d.k)}, {"batch", exprJson(d.batch)}, {"a_dtype", strOrNull(d.a_dtype)},
                    {"b_dtype", strOrNull(d.b_dtype)}, {"acc_dtype", strOrNull(d.acc_dtype)}, {"out_dtype", strOrNull(d.out_dtype)},
                    {"input_precision", strOrNull(d.input_precision)},
                    {"allow_tf32", d.allow_tf32 ? json(*d.allow_tf32) : json(nullptr)}, {"has_acc", d.has_acc},
                    {"scaled", d.scaled}, {"a_access", d.a_access >= 0 ? json(d.a_access) : json(nullptr)},
                    {"b_access", d.b_access >= 0 ? json(d.b_access) : json(nullptr)}, {"b_transposed", d.b_transposed}});
  }
  k["dots"] = dots;

  json reds = json::array();
  for (const auto& r : ir.reductions) {
    reds.push_back({{"id", r.id}, {"line", r.loc.line}, {"loop", r.loop}, {"via", viaJson(r.via)}, {"op", r.op}, {"scan", r.scan},
                    {"axis", r.axis_known ? (r.axis ? json(*r.axis) : json("all")) : json(nullptr)},
                    {"in_shape", shapeJson(r.in_shape, r.shape_known)}, {"dtype", strOrNull(r.dtype)}, {"keep_dims", r.keep_dims}});
  }
  k["reductions"] = reds;
  json casts = json::array();
  for (const auto& c : ir.casts) {
    casts.push_back({{"line", c.loc.line}, {"loop", c.loop}, {"from", strOrNull(c.from)}, {"to", strOrNull(c.to)}, {"bitcast", c.bitcast},
                     {"shape", shapeJson(c.shape, c.shape_known)}});
  }
  k["casts"] = casts;
  // Elementwise math, grouped by operation.
  std::map<std::string, json> ew;
  for (const auto& m : ir.math) {
    auto& e = ew[m.op];
    if (e.is_null()) e = {{"op", m.op}, {"count", 0}, {"flops_per_element", m.flops}, {"lines", json::array()}};
    e["count"] = e["count"].get<int>() + 1;
    if (std::find(e["lines"].begin(), e["lines"].end(), m.loc.line) == e["lines"].end()) e["lines"].push_back(m.loc.line);
  }
  json ewa = json::array();
  for (auto& [op, e] : ew) ewa.push_back(e);
  k["elementwise"] = ewa;
  json calls = json::array();
  for (const auto& c : ir.calls) calls.push_back({{"line", c.loc.line}, {"callee", c.callee}, {"inlined", c.inlined}, {"note", strOrNull(c.note)}});
  k["calls"] = calls;
  json opaque = json::array();
  for (const auto& o : ir.opaque) opaque.push_back({{"line", o.loc.line}, {"col", o.loc.col}, {"text", o.text}, {"reason", o.reason}});
  k["opaque"] = opaque;
  json locals = json::object();
  for (const auto& [n, e] : ir.locals) locals[n] = exprJson(e);
  k["locals"] = locals;

  json constraints = json::array();
  for (const auto& c : facts.constraints) {
    constraints.push_back({{"kind", c.kind}, {"params", c.params}, {"text", c.text}, {"why", c.why}, {"required", c.required},
                           {"when", strOrNull(c.when_text)}});
  }
  k["derived"] = {{"bytes_loaded_per_program", exprJson(facts.bytes_loaded)},
                  {"bytes_stored_per_program", exprJson(facts.bytes_stored)},
                  {"flops_per_program", exprJson(facts.flops)},
                  {"notes", facts.notes},
                  {"shared_memory", {{"per_stage", exprJson(facts.smem_per_stage)},
                                     {"unpipelined", exprJson(facts.smem_unpipelined)},
                                     {"epilogue", exprJson(facts.smem_epilogue)},
                                     {"parts", facts.smem_parts}}},
                  {"constraints", constraints}};
  k["ir_notes"] = ir.notes;
  return k;
}

json estimateJson(const KernelIR& ir, const KernelStaticFacts& facts, const CostEstimate& est) {
  json j;
  j["per_program"] = {{"bytes_loaded", optDouble(est.bytes_loaded)},
                      {"bytes_stored", optDouble(est.bytes_stored)},
                      {"flops", optDouble(est.flops)},
                      {"varies", est.varies_per_program}};
  j["programs"] = optDouble(est.programs);
  j["total"] = {{"bytes", optDouble(est.total_bytes)}, {"flops", optDouble(est.total_flops)}};
  j["arithmetic_intensity"] = optDouble(est.intensity);
  json acc = json::array();
  for (const auto& a : est.accesses) {
    acc.push_back({{"id", a.access}, {"verdict", a.verdict}, {"unit_axis", a.unit_axis >= 0 ? json(a.unit_axis) : json(nullptr)},
                   {"elem_bytes", optInt(a.elem_bytes)}, {"vector_elems", optInt(a.vector_elems)},
                   {"width_bytes", optInt(a.width_bytes)}, {"sectors_per_request", optDouble(a.sectors_per_request)},
                   {"limited_by", strOrNull(a.limited_by)}, {"active", a.active ? json(*a.active) : json(nullptr)},
                   {"async_copy", a.async_copy}});
  }
  j["accesses"] = acc;
  json dots = json::array();
  for (const auto& d : est.dots) dots.push_back({{"id", d.dot}, {"tensor_core", strOrNull(d.tensor_core)}, {"why", strOrNull(d.why)}});
  j["dots"] = dots;
  if (est.smem.applies) {
    j["shared_memory"] = {{"per_stage", optInt(est.smem.per_stage)}, {"stages", optInt(est.smem.stages)},
                          {"buffers", optInt(est.smem.buffers)},
                          {"unpipelined", optInt(est.smem.unpipelined)}, {"total", optInt(est.smem.total)},
                          {"lower", optInt(est.smem.lower)}, {"epilogue", optInt(est.smem.epilogue)},
                          {"unpipelined_operands", est.smem.unpipelined_operands},
                          {"limit", est.smem.limit}, {"fits", est.smem.fits ? json(*est.smem.fits) : json(nullptr)}};
  } else {
    j["shared_memory"] = nullptr;
  }
  json cons = json::array();
  for (size_t i = 0; i < est.constraints.size() && i < facts.constraints.size(); ++i) {
    cons.push_back({{"kind", facts.constraints[i].kind}, {"text", facts.constraints[i].text}, {"status", est.constraints[i].status},
                    {"detail", strOrNull(est.constraints[i].detail)}, {"required", facts.constraints[i].required}});
  }
  j["constraints"] = cons;
  j["notes"] = est.notes;
  (void)ir;
  return j;
}

}  // namespace tf
