// Map: configurations (cases x launches x autotune configs, from the task through
// kernel/launch_binding; or given directly) -> Kernel IR with the first configuration's types
// -> estimates per configuration -> compile requests (deduplicated) -> JSON.
#include "compile/source_analysis.h"

#include <algorithm>
#include <fmt/format.h>

#include <set>

#include "compile/compiled_facts.h"
#include "kernel/kernel_analysis.h"
#include "kernel/kernel_ir.h"
#include "kernel/kernel_ir_json.h"
#include "kernel/launch_binding.h"
#include "kernel/tunables.h"
#include "worker/worker_client.h"

namespace tf {
namespace {

using nlohmann::json;

json posJson(const Node* n) {
  if (!n) return nullptr;
  auto p = nodePos(*n);
  if (!p) return nullptr;
  return {{"line", p->line}, {"col", p->col}, {"end_line", p->end_line}, {"end_col", p->end_col}};
}

struct Entry {
  std::string label;
  int case_index = -1;
  AnalysisConfig config;
  std::vector<std::string> notes;
};

std::string configLabel(const Task* task, int ci, const std::map<std::string, int64_t>& meta, bool autotuned) {
  std::string s = task && ci >= 0 ? task->caseLabel(static_cast<size_t>(ci)) : "";
  if (autotuned) {
    std::string m;
    for (const auto& [k, v] : meta) m += (m.empty() ? "" : ",") + k + "=" + std::to_string(v);
    s += (s.empty() ? "" : " ") + std::string("[") + m + "]";
  }
  return s;
}

std::vector<Entry> taskEntries(const ModuleIR& ir, const Kernel& k, const Task& task,
                               const std::vector<CaseBinding>& bindings, int max_configs) {
  std::vector<Entry> out;
  auto sig = task.signatures.find(k.name);
  for (size_t ci = 0; ci < bindings.size(); ++ci) {
    const CaseBinding& b = bindings[ci];
    int launches_of_k = 0;
    for (const auto& l : b.launches) {
      if (l.kernel != k.name) continue;
      ++launches_of_k;
      std::vector<std::pair<std::map<std::string, int64_t>, std::map<std::string, int64_t>>> metas;  // kwargs, options
      bool autotuned = k.autotune && k.autotune->configs_understood;
      if (autotuned) {
        for (const auto& c : k.autotune->configs_list) metas.push_back({c.kwargs, c.options});
      } else {
        metas.push_back({});
      }
      for (const auto& [kwargs, options] : metas) {
        if (static_cast<int>(out.size()) >= max_configs) break;
        Entry e;
        e.case_index = static_cast<int>(ci);
        AnalysisConfig& cfg = e.config;
        for (const auto& p : k.params) {
          auto it = l.args.find(p.name);
          if (it != l.args.end()) {
            if (it->second.isInt()) cfg.values[p.name] = it->second.i;
            if (!p.is_constexpr) {
              std::string t = tritonType(it->second);
              if (!t.empty()) cfg.types[p.name] = t;
            }
          } else if (p.default_int && !kwargs.count(p.name)) {
            cfg.values[p.name] = *p.default_int;
          }
        }
        for (const auto& [kk, v] : kwargs) cfg.values[kk] = v;
        if (sig != task.signatures.end()) {
          for (const auto& [p, v] : sig->second) {
            if (v.is_string()) {
              if (!cfg.types.count(p)) cfg.types[p] = v.get<std::string>();
            } else if (v.is_number_integer()) {
              // The task's [signature] values stand in for what the binding could not find.
              if (!cfg.values.count(p)) cfg.values[p] = v.get<int64_t>();
            } else if (v.is_boolean()) {
              if (!cfg.values.count(p)) cfg.values[p] = v.get<bool>() ? 1 : 0;
            }
          }
        }
        for (const auto& [hk, hv] : evalHeuristics(ir, k, l, cfg.values, &e.notes)) cfg.values[hk] = hv;
        cfg.num_warps = 4;
        cfg.num_stages = 3;
        auto opt = [&](const char* name) -> std::optional<int64_t> {
          if (options.count(name)) return options.at(name);
          if (l.options.count(name)) return l.options.at(name);
          return std::nullopt;
        };
        if (auto w = opt("num_warps")) cfg.num_warps = *w;
        else e.notes.push_back("num_warps not given: Triton's default 4");
        if (auto s = opt("num_stages")) cfg.num_stages = *s;
        std::map<std::string, int64_t> meta;
        for (const auto& p : k.params) if (p.is_constexpr && cfg.values.count(p.name)) meta[p.name] = cfg.values[p.name];
        cfg.grid = evalGrid(ir, l, meta);
        if (!cfg.grid) e.notes.push_back("the grid could not be evaluated");
        for (const auto& n : l.notes) e.notes.push_back(n);
        std::map<std::string, int64_t> shown = kwargs;
        for (const auto& [kk, v] : options) shown[kk] = v;
        e.label = configLabel(&task, static_cast<int>(ci), shown, autotuned);
        cfg.label = e.label;
        out.push_back(std::move(e));
      }
    }
    if (launches_of_k > 1) {
      for (auto& e : out) {
        if (e.case_index == static_cast<int>(ci)) e.notes.push_back("the launcher launches this kernel more than once");
      }
    }
  }
  return out;
}

// The Triton types the IR is built with: the first configuration's, else the task's signature.
ParamTypes typesFor(const Kernel& k, const std::vector<Entry>& entries, const Task* task) {
  ParamTypes pt;
  if (!entries.empty()) {
    pt.types = entries.front().config.types;
    return pt;
  }
  if (task) {
    auto sig = task->signatures.find(k.name);
    if (sig != task->signatures.end()) {
      for (const auto& [p, v] : sig->second) if (v.is_string()) pt.types[p] = v.get<std::string>();
    }
  }
  return pt;
}

json configJson(const AnalysisConfig& c) {
  json values = json::object(), types = json::object();
  for (const auto& [k, v] : c.values) values[k] = v;
  for (const auto& [k, v] : c.types) types[k] = v;
  json grid = c.grid ? json({(*c.grid)[0], (*c.grid)[1], (*c.grid)[2]}) : json(nullptr);
  return {{"values", values}, {"types", types}, {"num_warps", c.num_warps}, {"num_stages", c.num_stages}, {"grid", grid}};
}

// Predicted vs compiled, for the facts both sides have.
json agreementJson(const KernelIR& kir, const CostEstimate& est, const CompiledFacts& cf) {
  json a = json::object();
  if (est.smem.applies) a["shared_memory"] = {{"predicted", est.smem.total ? json(*est.smem.total) : json(nullptr)},
                                              {"compiled", cf.shared_bytes ? json(*cf.shared_bytes) : json(nullptr)}};
  if (!cf.instructions) return a;
  std::set<int> operand_loads;
  for (const auto& d : kir.dots) {
    if (d.a_access >= 0) operand_loads.insert(d.a_access);
    if (d.b_access >= 0) operand_loads.insert(d.b_access);
  }
  std::set<int> pl, ps;
  bool complete = true;
  for (const auto& ae : est.accesses) {
    const IrAccess& acc = kir.accesses[ae.access];
    if (operand_loads.count(ae.access) || acc.descriptor >= 0 || acc.kind == AccessKind::kAtomic) continue;
    if (ae.async_copy || (ae.active && !*ae.active)) continue;
    if (!ae.width_bytes) {
      complete = false;
      continue;
    }
    (acc.kind == AccessKind::kLoad ? pl : ps).insert(static_cast<int>(*ae.width_bytes * 8));
  }
  std::set<int> cl, cs;
  for (const auto& [w, n] : cf.instructions->global_loads) cl.insert(w);
  for (const auto& [w, n] : cf.instructions->global_stores) cs.insert(w);
  json widths = {{"predicted_load_bits", pl}, {"compiled_load_bits", cl}, {"predicted_store_bits", ps},
                 {"compiled_store_bits", cs}};
  if (complete && kir.dots.empty()) widths["agree"] = pl == cl && ps == cs;
  else widths["agree"] = nullptr;
  a["access_widths"] = widths;
  return a;
}

}  // namespace

json analyzeSource(const ParsedSource& src, const ModuleIR& ir, const AnalyzeOptions& o) {
  json j;
  j["schema"] = kAnalyzeSchema;
  j["source"] = src.path.string();
  std::string launcher = !o.launcher.empty() ? o.launcher : (o.task ? o.task->launcher : "");
  std::vector<CaseBinding> bindings;
  if (o.task) {
    for (const auto& c : o.task->cases) bindings.push_back(bindCase(ir, launcher, o.harness, c));
    json cases = json::array();
    for (size_t i = 0; i < bindings.size(); ++i) {
      json inputs = json::array();
      for (const auto& in : bindings[i].inputs) inputs.push_back(in.describe());
      json launches = json::array();
      for (const auto& l : bindings[i].launches) {
        json args = json::object();
        for (const auto& [k, v] : l.args) args[k] = v.describe();
        launches.push_back({{"kernel", l.kernel}, {"site", l.site}, {"args", args}, {"notes", l.notes}});
      }
      cases.push_back({{"label", o.task->caseLabel(i)}, {"case", o.task->cases[i]}, {"inputs", inputs},
                       {"launches", launches}, {"notes", bindings[i].notes}});
    }
    j["task"] = {{"path", o.task->path.string()}, {"launcher", launcher}, {"cases", cases}};
  }

  json kernels = json::array();
  for (const auto& k : ir.kernels) {
    if (!o.kernel.empty() && k.name != o.kernel) continue;
    // A module imported whole (`import pkg.ext as tle`) brings its @triton.jit functions to
    // be inlined where they are called; they are listed only where this source launches one.
    if (!k.imported_module.empty() && o.kernel != k.name &&
        std::none_of(ir.launches.begin(), ir.launches.end(), [&](const LaunchSite& l) { return l.kernel == k.name; })) {
      continue;
    }
    json kj = {{"name", k.name}, {"position", posJson(k.def)}};
    // Helpers: @triton.jit functions other kernels call (their facts are inlined there).
    json called_by = json::array();
    for (const auto& other : ir.kernels) {
      if (other.name == k.name) continue;
      bool calls = false;
      walk(other.def->at("body"), [&](const Node& n) {
        if (isType(n, "Call") && dottedName(n["func"]) == k.name) calls = true;
        return !calls;
      });
      if (calls) called_by.push_back(other.name);
    }
    bool launched = false;
    for (const auto& l : ir.launches) if (l.kernel == k.name) launched = true;
    kj["called_by"] = called_by;
    kj["launched"] = launched;
    std::vector<Entry> entries;
    if (o.task) entries = taskEntries(ir, k, *o.task, bindings, o.max_configs);
    for (const auto& ec : o.configs) {
      if (ec.kernel != k.name) continue;
      Entry e;
      e.label = ec.config.label;
      e.config = ec.config;
      entries.push_back(e);
    }
    KernelIR kir = buildKernelIR(ir, k, typesFor(k, entries, o.task));
    KernelStaticFacts sf = deriveFacts(kir);

    json params = json::array();
    for (size_t i = 0; i < k.params.size(); ++i) {
      const auto& p = k.params[i];
      const IrParam& ip = kir.params[i];
      json pj = {{"name", p.name}, {"index", p.index}, {"constexpr", p.is_constexpr}, {"kind", toString(ip.kind)},
                 {"evidence", ip.evidence}, {"used", ip.used}};
      if (!p.annotation.empty()) pj["annotation"] = p.annotation;
      if (p.default_value) pj["default"] = src.source.slice(*p.default_value);
      if (!ip.type.empty()) pj["type"] = ip.type;
      params.push_back(pj);
    }
    kj["params"] = params;
    if (k.autotune) {
      json cfgs = json::array();
      for (const auto& c : k.autotune->configs_list) cfgs.push_back({{"kwargs", c.kwargs}, {"options", c.options}});
      kj["autotune"] = {{"configs_understood", k.autotune->configs_understood}, {"configs", cfgs}, {"key", k.autotune->key}};
      if (!k.autotune->tuner.empty()) kj["autotune"]["tuner"] = k.autotune->tuner;
    }
    if (!k.heuristics.empty()) {
      json h = json::object();
      for (const auto& e : k.heuristics) h[e.param] = e.body ? src.source.slice(*e.body) : "";
      kj["heuristics"] = h;
    }
    // The first analysis' summary, kept for compatibility with tritonforge.analyze/1.
    KernelFacts facts = analyzeKernel(ir, k);
    json dots = json::array();
    for (const auto& d : facts.dots) dots.push_back({{"m", d.m}, {"n", d.n}, {"k", d.k}, {"in_loop", d.in_loop}});
    json usage = json::object();
    for (const auto& [name, u] : facts.params) {
      usage[name] = {{"used", u.used}, {"tile_extent", u.tile_extent}, {"pid_scaled", u.pid_scaled},
                     {"loop_stepped", u.loop_stepped}, {"dot_role", u.dot_role}, {"index_arith", u.index_arith}};
    }
    kj["facts"] = {{"dots", dots},       {"loops", facts.loops},   {"loop_has_load", facts.loop_has_load},
                   {"loads", facts.loads}, {"stores", facts.stores}, {"atomics", facts.atomics},
                   {"reductions", facts.reductions}, {"constexpr_usage", usage}, {"notes", facts.notes}};
    kj["notes"] = k.notes;
    kj["ir"] = kernelIRJson(kir, sf);

    json cases = json::array();
    std::vector<CostEstimate> estimates;
    for (const auto& e : entries) {
      CostEstimate est = estimate(kir, sf, e.config);
      json ej = estimateJson(kir, sf, est);
      ej["label"] = e.label;
      ej["case"] = e.case_index >= 0 ? json(e.case_index) : json(nullptr);
      ej["config"] = configJson(e.config);
      for (const auto& n : e.notes) ej["notes"].push_back(n);
      cases.push_back(ej);
      estimates.push_back(std::move(est));
    }
    kj["cases"] = cases;

    // Compiled facts, one per distinct configuration.
    json compiled = json::array();
    if (!o.compile_worker) {
      kj["compiled"] = compiled;
      kj["compiled_note"] = entries.empty() ? "needs parameter types and values: give --cases TASK.toml"
                                            : "not compiled (--no-compile)";
    } else {
      std::map<std::string, int> seen;
      std::vector<std::string> order;
      for (const auto& p : k.params) order.push_back(p.name);
      std::vector<std::string> cx;
      for (const auto& p : k.params) if (p.is_constexpr) cx.push_back(p.name);
      for (size_t i = 0; i < entries.size(); ++i) {
        const auto& cfg = entries[i].config;
        std::string missing;
        std::map<std::string, int64_t> options = {{"num_warps", cfg.num_warps}, {"num_stages", cfg.num_stages}};
        CompileRequest req = compileRequest(src.path.string(), k.name, order, cfg.types, cfg.values, cx, options, &missing);
        if (!missing.empty()) {
          cases[i]["compiled"] = nullptr;
          cases[i]["notes"].push_back("not compiled: no type or value for " + missing);
          continue;
        }
        json req_json = toJson(req);
        std::string key = req_json.dump();
        auto it = seen.find(key);
        if (it != seen.end()) {
          cases[i]["compiled"] = it->second;
          compiled[it->second]["configs"].push_back(entries[i].label);
          continue;
        }
        if (static_cast<int>(seen.size()) >= o.compile_limit) {
          cases[i]["compiled"] = nullptr;
          cases[i]["notes"].push_back(fmt::format("not compiled: --compile-limit {} reached", o.compile_limit));
          continue;
        }
        CompiledFacts cf = parseCompiled(o.compile_worker->compile(req));
        int idx = static_cast<int>(compiled.size());
        seen[key] = idx;
        json cj = compiledFactsJson(cf);
        cj["configs"] = json::array({entries[i].label});
        cj["request"] = {{"signature", req_json["signature"]}, {"constexprs", req_json["constexprs"]},
                         {"attrs", req_json["attrs"]}, {"options", req_json["options"]}};
        if (cf.status == "ok") cj["agreement"] = agreementJson(kir, estimates[i], cf);
        compiled.push_back(cj);
        cases[i]["compiled"] = idx;
      }
      kj["cases"] = cases;
      kj["compiled"] = compiled;
    }
    kernels.push_back(kj);
  }
  j["kernels"] = kernels;

  json launches = json::array();
  std::set<std::string> launchers;
  for (const auto& l : ir.launches) {
    if (!o.kernel.empty() && l.kernel != o.kernel) continue;
    json lj = {{"kernel", l.kernel}, {"function", l.function}, {"position", posJson(l.call)},
               {"grid", src.source.slice(*l.grid)}, {"has_starred", l.has_starred}};
    json args = json::object();
    for (const auto& a : l.args) args[a.param] = src.source.slice(*a.expr);
    lj["args"] = args;
    json opts = json::object();
    for (const auto& [name, a] : l.options) opts[name] = src.source.slice(*a.expr);
    lj["options"] = opts;
    launches.push_back(lj);
    if (!l.function.empty()) launchers.insert(l.function);
  }
  j["launches"] = launches;
  json tun = json::object();
  if (!launcher.empty()) launchers = {launcher};
  std::vector<std::string> only;
  if (!o.kernel.empty()) only.push_back(o.kernel);
  // A backward task's tunables are its backward's (the kernels its optimize run tunes).
  const bool backward = o.task && o.task->direction == "backward";
  for (const auto& l : launchers) tun[l] = tunablesJson(discoverTunables(ir, l, only, backward));
  j["tunables"] = tun;
  return j;
}

}  // namespace tf
