// Map: dryRun -> compileChecksOf (the source as written, with its texts) -> staticDiagnosis
// (src/diagnose/ rules on the compiled facts) -> one engine round -> checkRewrite (guard,
// parse, compile) for each rewrite proposal.
#include "search/dry_run.h"

#include <fmt/format.h>

#include <fstream>

#include "diagnose/diagnose.h"
#include "diagnose/static_facts.h"
#include "kernel/module_ir.h"
#include "search/loop_diagnosis.h"
#include "search/optimizer.h"
#include "search/space.h"
#include "task/source_parser.h"
#include "util/temp_dir.h"
#include "worker/worker_client.h"

namespace tf {
namespace {

// The compiled facts of one check as the diagnosis reads a launch (no grid: nothing ran).
LaunchFacts launchOf(const nlohmann::json& result) {
  LaunchFacts l;
  if (result.contains("num_warps") && result["num_warps"].is_number_integer()) l.warps = result["num_warps"];
  if (result.contains("shared_bytes") && result["shared_bytes"].is_number_integer()) {
    l.shared_bytes = result["shared_bytes"].get<int64_t>();
  }
  const nlohmann::json& cubin = result.contains("cubin") ? result["cubin"] : nlohmann::json();
  if (cubin.is_object() && cubin.contains("registers") && cubin["registers"].is_number_integer()) {
    l.registers = cubin["registers"];
  }
  const nlohmann::json& sp = result.contains("spills") ? result["spills"] : nlohmann::json();
  if (sp.is_object() && sp.contains("spill_store_bytes") && sp["spill_store_bytes"].is_number_integer()) {
    l.spills = sp["spill_store_bytes"].get<int>() / 4;  // words per thread, as Triton counts them
  }
  return l;
}

std::vector<EngineDiagnosis> staticDiagnosis(const nlohmann::json& checks) {
  std::vector<EngineDiagnosis> out;
  for (const auto& c : checks) {
    if (c.value("status", "") != "ok" || !c.contains("result")) continue;
    DiagnosisInput in;
    in.kernel = c.value("kernel", "");
    CompiledTexts texts = CompiledTexts::fromJson(c["result"]);
    if (!texts.empty()) in.static_facts = staticFactsFromTexts(texts);
    in.launch = launchOf(c["result"]);
    out.push_back(toEngineDiagnosis(diagnose(in)));
  }
  return out;
}

// The compile checks without the compiled texts (kept for the diagnosis, too long to print).
nlohmann::json withoutTexts(nlohmann::json checks) {
  for (auto& c : checks) {
    if (!c.contains("result") || !c["result"].is_object()) continue;
    for (const char* key : {"ttgir", "ttir", "ptx", "sass"}) c["result"].erase(key);
  }
  return checks;
}

// A rewrite as the loop would take it: the guard, then its kernels compiled for sm_90.
nlohmann::json checkRewrite(const Task& task, const TaskSources& sources, const Proposal& p, WorkerProcess& worker) {
  nlohmann::json out;
  WorkerClient client(worker);
  GuardReply g = client.guard(p.source, sources.source.source.text(), task.launcher);
  out["guard"] = {{"accepted", g.accepted()}, {"reasons", g.reasons}};
  if (!g.answered) out["guard"]["error"] = g.message;
  if (!g.accepted()) {
    out["status"] = "refused";
    return out;
  }
  // Beside nothing of the task's: a rewrite imports only torch, triton and math (the guard).
  TempDir dir("tritonforge-dry-run-");
  std::filesystem::path path = dir.path() / task.source.filename();
  std::ofstream(path) << p.source;
  try {
    ParsedSource parsed = parseSource(client, path, p.source);
    ModuleIR ir = buildModuleIR(parsed);
    TunableSet tunables = discoverTunables(ir, task.launcher, task.kernels, task.direction == "backward");
    nlohmann::json checks = compileChecksOf(task, path, ir, tunables, worker, {"spills"});
    out["compile"] = checks;
    bool failed = false, skipped = false;
    for (const auto& c : checks) {
      failed = failed || (c.value("status", "") != "ok" && c.value("status", "") != "skipped");
      skipped = skipped || c.value("status", "") == "skipped";
    }
    out["status"] = failed ? "compile-error" : checks.empty() || skipped ? "not-compiled" : "compiles";
  } catch (const std::exception& e) {
    out["status"] = "compile-error";
    out["error"] = e.what();
  }
  return out;
}

}  // namespace

nlohmann::json dryRun(const Task& task, const TaskSources& sources, const TunableSet& tunables,
                      ReasoningEngine& engine, WorkerProcess& worker, const std::vector<std::string>& passes) {
  nlohmann::json checks = compileChecksOf(task, task.source, sources.ir, tunables, worker, {"spills", "ttgir", "ptx"});
  std::vector<EngineDiagnosis> diagnosis = staticDiagnosis(checks);
  Space space(tunables, SpaceHints{});
  EngineInput in;
  in.round = 1;
  in.source = sources.source.source.text();
  in.tunables = &tunables;
  in.space = &space;
  // The loop's first round starts from the configuration as written.
  in.best = space.baseline();
  in.best_objective = 1.0;
  in.diagnosis = diagnosis;
  in.passes.assign(passes.begin(), passes.end());
  in.best_kernels = nlohmann::json::array();
  for (const auto& c : withoutTexts(checks)) {
    if (c.value("status", "") == "ok") in.best_kernels.push_back(c["result"]);
  }
  in.task = {{"launcher", task.launcher}, {"cases", task.cases}, {"roofline_ms", nlohmann::json::array()}};
  EngineOutput out = engine.propose(in);

  nlohmann::json j;
  j["schema"] = kDryRunSchema;
  j["task"] = task.name;
  j["engine"] = engine.name();
  j["compile_checks"] = withoutTexts(checks);
  nlohmann::json diag = nlohmann::json::array();
  for (const auto& d : diagnosis) diag.push_back(d.toJson());
  j["diagnosis"] = diag;
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : out.findings) findings.push_back(f.toJson());
  j["findings"] = findings;
  nlohmann::json proposals = nlohmann::json::array();
  for (size_t i = 0; i < out.proposals.size(); ++i) {
    Proposal p = out.proposals[i];
    p.id = fmt::format("P{}", i + 1);
    nlohmann::json pj = p.toJson();
    if (p.kind == Proposal::Kind::kRewrite) pj.update(checkRewrite(task, sources, p, worker));
    proposals.push_back(pj);
  }
  j["proposals"] = proposals;
  j["error"] = out.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(out.error);
  j["engine_usage"] = engine.usage();
  j["measured"] = false;
  return j;
}

std::string dryRunSummary(const nlohmann::json& dry) {
  std::string s = fmt::format("Dry run of {} (engine {}; nothing measured)\n", dry.value("task", ""),
                              dry.value("engine", ""));
  for (const auto& c : dry["compile_checks"]) {
    s += fmt::format("  compile {} for {}: {}{}\n", c.value("kernel", ""), c.value("target", ""),
                     c.value("status", ""), c.contains("reason") ? " (" + c.value("reason", "") + ")" : "");
  }
  for (const auto& d : dry["diagnosis"]) {
    s += fmt::format("  diagnosis {}: {}\n", d.value("kernel", ""), d.value("bottleneck", ""));
    for (const auto& f : d["findings"]) s += fmt::format("    {}: {}\n", f.value("kind", ""), f.value("summary", ""));
  }
  for (const auto& f : dry["findings"]) {
    s += fmt::format("  engine finding {} on {}: {}\n", f.value("kind", ""), f.value("kernel", ""), f.value("summary", ""));
  }
  if (dry["proposals"].empty()) s += "  the engine proposes nothing\n";
  for (const auto& p : dry["proposals"]) {
    std::string kind = p.value("kind", "");
    std::string what = kind == "region" ? p["region"].dump() : kind == "pass" ? p.value("pass", "") + " " + p["params"].dump()
                                                                               : "the module rewritten";
    s += fmt::format("  {} {}: {}{}\n", p.value("id", ""), kind, what,
                     p.value("rationale", "").empty() ? "" : " (" + p.value("rationale", "") + ")");
    if (kind == "rewrite") {
      s += fmt::format("    guard: {}; {}\n", p["guard"].value("accepted", false) ? "accepted" : "refused",
                       p.value("status", ""));
      for (const auto& r : p["guard"]["reasons"]) s += "      " + r.get<std::string>() + "\n";
    }
  }
  if (dry.contains("error") && dry["error"].is_string()) s += "  engine error: " + dry["error"].get<std::string>() + "\n";
  return s;
}

}  // namespace tf
