// tritonforge analyze SOURCE.py [--kernel NAME] [--launcher NAME] [--json]
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "kernel/kernel_analysis.h"
#include "kernel/module_ir.h"
#include "kernel/tunables.h"
#include "report/optimize_report.h"
#include "util/error.h"
#include "util/fs.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

struct AnalyzeFlags {
  std::string source;
  std::string kernel;
  std::string launcher;
  bool json = false;
};

nlohmann::json posJson(const SourceText& src, const Node* n) {
  if (!n) return nullptr;
  auto p = nodePos(*n);
  if (!p) return nullptr;
  return {{"line", p->line}, {"col", p->col}, {"end_line", p->end_line}, {"end_col", p->end_col}};
}

nlohmann::json analyzeJson(const ParsedSource& src, const ModuleIR& ir, const AnalyzeFlags& f) {
  nlohmann::json j;
  j["schema"] = "tritonforge.analyze/1";
  j["source"] = src.path.string();
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : ir.kernels) {
    if (!f.kernel.empty() && k.name != f.kernel) continue;
    nlohmann::json kj = {{"name", k.name}, {"position", posJson(src.source, k.def)}};
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : k.params) {
      nlohmann::json pj = {{"name", p.name}, {"index", p.index}, {"constexpr", p.is_constexpr}};
      if (!p.annotation.empty()) pj["annotation"] = p.annotation;
      if (p.default_value) pj["default"] = src.source.slice(*p.default_value);
      params.push_back(pj);
    }
    kj["params"] = params;
    if (k.autotune) {
      nlohmann::json cfgs = nlohmann::json::array();
      for (const auto& c : k.autotune->configs_list) cfgs.push_back({{"kwargs", c.kwargs}, {"options", c.options}});
      kj["autotune"] = {{"configs_understood", k.autotune->configs_understood}, {"configs", cfgs}, {"key", k.autotune->key}};
    }
    if (!k.heuristics.empty()) {
      nlohmann::json h = nlohmann::json::object();
      for (const auto& e : k.heuristics) h[e.param] = e.body ? src.source.slice(*e.body) : "";
      kj["heuristics"] = h;
    }
    KernelFacts facts = analyzeKernel(ir, k);
    nlohmann::json dots = nlohmann::json::array();
    for (const auto& d : facts.dots) dots.push_back({{"m", d.m}, {"n", d.n}, {"k", d.k}, {"in_loop", d.in_loop}});
    nlohmann::json usage = nlohmann::json::object();
    for (const auto& [name, u] : facts.params) {
      usage[name] = {{"used", u.used}, {"tile_extent", u.tile_extent}, {"pid_scaled", u.pid_scaled},
                     {"loop_stepped", u.loop_stepped}, {"dot_role", u.dot_role}, {"index_arith", u.index_arith}};
    }
    kj["facts"] = {{"dots", dots},       {"loops", facts.loops},   {"loop_has_load", facts.loop_has_load},
                   {"loads", facts.loads}, {"stores", facts.stores}, {"atomics", facts.atomics},
                   {"reductions", facts.reductions}, {"constexpr_usage", usage}, {"notes", facts.notes}};
    kj["notes"] = k.notes;
    kernels.push_back(kj);
  }
  j["kernels"] = kernels;
  nlohmann::json launches = nlohmann::json::array();
  std::set<std::string> launchers;
  for (const auto& l : ir.launches) {
    if (!f.kernel.empty() && l.kernel != f.kernel) continue;
    nlohmann::json lj = {{"kernel", l.kernel}, {"function", l.function}, {"position", posJson(src.source, l.call)},
                         {"grid", src.source.slice(*l.grid)}, {"has_starred", l.has_starred}};
    nlohmann::json args = nlohmann::json::object();
    for (const auto& a : l.args) args[a.param] = src.source.slice(*a.expr);
    lj["args"] = args;
    nlohmann::json opts = nlohmann::json::object();
    for (const auto& [name, a] : l.options) opts[name] = src.source.slice(*a.expr);
    lj["options"] = opts;
    launches.push_back(lj);
    if (!l.function.empty()) launchers.insert(l.function);
  }
  j["launches"] = launches;
  nlohmann::json tun = nlohmann::json::object();
  if (!f.launcher.empty()) launchers = {f.launcher};
  std::vector<std::string> only;
  if (!f.kernel.empty()) only.push_back(f.kernel);
  for (const auto& l : launchers) tun[l] = tunablesJson(discoverTunables(ir, l, only));
  j["tunables"] = tun;
  return j;
}

void printAnalysis(const nlohmann::json& j) {
  std::printf("%s\n", j["source"].get<std::string>().c_str());
  for (const auto& k : j["kernels"]) {
    const auto& pos = k["position"];
    std::printf("kernel %s (line %d)\n", k["name"].get<std::string>().c_str(), pos.is_object() ? pos["line"].get<int>() : 0);
    std::string params;
    for (const auto& p : k["params"]) {
      params += (params.empty() ? "" : ", ") + p["name"].get<std::string>();
      if (p["constexpr"].get<bool>()) params += ": constexpr";
      if (p.contains("default")) params += " = " + p["default"].get<std::string>();
    }
    std::printf("  params: %s\n", params.c_str());
    if (k.contains("autotune")) std::printf("  @triton.autotune: %zu configs, key %s\n", k["autotune"]["configs"].size(), k["autotune"]["key"].dump().c_str());
    if (k.contains("heuristics")) std::printf("  @triton.heuristics: %s\n", k["heuristics"].dump().c_str());
    const auto& f = k["facts"];
    std::printf("  loops %d, loads %d, stores %d, atomics %d, reductions %d\n", f["loops"].get<int>(), f["loads"].get<int>(),
                f["stores"].get<int>(), f["atomics"].get<int>(), f["reductions"].get<int>());
    for (const auto& d : f["dots"]) {
      std::printf("  dot: M=%s N=%s K=%s%s\n", d["m"].get<std::string>().c_str(), d["n"].get<std::string>().c_str(),
                  d["k"].get<std::string>().c_str(), d["in_loop"].get<bool>() ? " (in a loop)" : "");
    }
    for (const auto& n : k["notes"]) std::printf("  note: %s\n", n.get<std::string>().c_str());
  }
  for (const auto& l : j["launches"]) {
    std::printf("launch %s[%s] in %s (line %d)\n", l["kernel"].get<std::string>().c_str(), l["grid"].get<std::string>().c_str(),
                l["function"].get<std::string>().empty() ? "<module>" : l["function"].get<std::string>().c_str(),
                l["position"].is_object() ? l["position"]["line"].get<int>() : 0);
  }
  for (const auto& [launcher, items] : j["tunables"].items()) {
    std::printf("tunables reached from %s:\n", launcher.c_str());
    for (const auto& t : items) {
      std::string value = t.contains("value") ? std::to_string(t["value"].get<int64_t>()) : t.value("expression", "");
      std::printf("  %-30s %-18s %-10s %-12s %s\n", t["id"].get<std::string>().c_str(), t["origin"].get<std::string>().c_str(),
                  t["role"].get<std::string>().c_str(), value.c_str(),
                  t["tunable"].get<bool>() ? "tuned" : ("left alone: " + t.value("note", "")).c_str());
    }
  }
}

int runAnalyze(const AnalyzeFlags& f, const GlobalOptions& global) {
  WorkerOptions wo = workerOptionsFor(global, false);
  wo.name = "parse worker";
  WorkerProcess parser(wo);
  ParsedSource src = parseFile(parser, f.source, "source");
  ModuleIR ir = buildModuleIR(src);
  if (ir.kernels.empty()) throw UserError(fmt::format("{}: no @triton.jit kernel found", f.source));
  if (!f.kernel.empty() && !ir.kernel(f.kernel)) {
    throw UserError(fmt::format("{}: no @triton.jit kernel named '{}'", f.source, f.kernel));
  }
  if (!f.launcher.empty() && !ir.functions.count(f.launcher)) {
    throw UserError(fmt::format("{}: no function named '{}'", f.source, f.launcher));
  }
  nlohmann::json j = analyzeJson(src, ir, f);
  if (f.json) std::cout << j.dump(2) << std::endl;
  else printAnalysis(j);
  return 0;
}

}  // namespace

CommandRunner registerAnalyze(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kAnalyzeRegistration("analyze", 10, &registerAnalyze);

CommandRunner registerAnalyze(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<AnalyzeFlags>();
  CLI::App* sub = app.add_subcommand("analyze", "Kernels, parameters, launch sites and tunables of a Triton source");
  sub->add_option("source", flags->source, "The Python source file")->required();
  sub->add_option("--kernel", flags->kernel, "Only this kernel");
  sub->add_option("--launcher", flags->launcher, "Tunables as reached from this function (default: every launching function)");
  sub->add_flag("--json", flags->json, "JSON output (schema tritonforge.analyze/1)");
  return [flags, &global] { return runAnalyze(*flags, global); };
}

}  // namespace tf
