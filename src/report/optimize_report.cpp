#include "report/optimize_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>

#include "report/diff.h"
#include "report/html_report.h"
#include "util/build_info.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/fs.h"
#include "worker/protocol.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

nlohmann::json environmentJson(const OptimizeResult& r) {
  const auto& h = r.environment;
  nlohmann::json env = {{"python", h.value("python", "")},
                        {"triton", h.contains("triton") ? h["triton"] : nullptr},
                        {"torch", h.contains("torch") ? h["torch"] : nullptr},
                        {"hostname", h.value("hostname", "")}};
  env["gpu"] = h.contains("gpu") ? h["gpu"] : nullptr;
  if (!r.gpu) env["no_gpu_reason"] = r.no_gpu_reason;
  return env;
}

// The name of the first Gluon kernel among a case's launched kernels, empty when none is.
std::string gluonKernel(const nlohmann::json& kernels) {
  if (!kernels.is_array()) return {};
  for (const auto& k : kernels) {
    if (k.is_object() && k.value("dialect", "") == "gluon") return k.value("name", "?");
  }
  return {};
}

nlohmann::json perCase(const Task& task, const std::vector<CaseMeasurement>& ms) {
  nlohmann::json arr = nlohmann::json::array();
  for (size_t i = 0; i < ms.size(); ++i) {
    const auto& m = ms[i];
    nlohmann::json j = {{"case", task.cases[i]}, {"label", task.caseLabel(i)}, {"status", toString(m.status)}};
    if (m.timing) {
      j["time_ms"] = m.timing->median_ms;
      j["iqr_ms"] = m.timing->q3_ms - m.timing->q1_ms;
      j["timing_method"] = m.timing->method;
      j["reps"] = m.timing->reps;
    }
    j["verify"] = m.verify.toJson();
    if (!gluonKernel(m.kernels).empty()) j["route"] = "gluon";
    arr.push_back(j);
  }
  return arr;
}

// The route each case of the best took, when any took a Gluon lowering (a kernel the worker
// marked `"dialect": "gluon"`): which kernel ran it, or that the call fell back to the kernel as
// written (the route's conditions did not hold for that case). Empty when no case took one.
std::vector<std::string> routeLines(const Task& task, const std::vector<CaseMeasurement>& ms) {
  std::vector<std::string> lines;
  bool any = false;
  for (const auto& m : ms) any = any || !gluonKernel(m.kernels).empty();
  if (!any) return lines;
  for (size_t i = 0; i < ms.size(); ++i) {
    std::string g = gluonKernel(ms[i].kernels);
    lines.push_back(g.empty() ? fmt::format("{}: the kernel as written (the Gluon route does not fit this call)", task.caseLabel(i))
                              : fmt::format("{}: the Gluon kernel {}", task.caseLabel(i), g));
  }
  return lines;
}

}  // namespace

nlohmann::json optimizeResultJson(const Task& task, const TunableSet& tunables, const OptimizeResult& r,
                                  const OptimizeOptions& options, const fs::path& out_dir) {
  nlohmann::json j;
  j["schema"] = kResultSchema;
  j["tool"] = {{"name", "tritonforge"},
               {"version", toolVersion()},
               {"commit", toolCommit()},
               {"worker_protocol", kWorkerProtocolVersion}};
  j["date"] = utcTimestamp();
  j["task"] = task.toJson();
  j["environment"] = environmentJson(r);
  if (r.lanes.is_array()) j["gpus"] = r.lanes;
  j["tunables"] = tunablesJson(tunables);
  j["search"] = {{"strategy", r.strategy},
                 {"strategy_requested", options.strategy},
                 {"strategy_reason", r.strategy_reason},
                 {"engine", r.engine},
                 {"engine_usage", r.engine_usage},
                 {"budget_s", options.budget_s},
                 {"elapsed_s", r.elapsed_s},
                 {"rounds", r.rounds},
                 {"candidates", r.candidates.size()},
                 {"evaluated", r.evaluated},
                 {"measured", r.measured},
                 {"reused", r.reused},
                 {"preloaded", r.preloaded},
                 {"pruned", r.pruned},
                 {"space_size", r.space_size},
                 {"stopped_because", r.stop_reason},
                 {"seed", options.seed},
                 {"stall_rounds", options.stall_rounds},
                 {"timing_budget_ms", options.timing_budget_ms},
                 {"effort", options.effort},
                 {"objective", "geometric mean over cases of time / time as written (lower is better)"},
                 {"bases", r.bases}};
  j["database"] = r.db_path.empty() ? nlohmann::json(nullptr)
                                    : nlohmann::json({{"path", r.db_path},
                                                      {"run_id", r.run_id},
                                                      {"resumed_from", r.resumed_from ? nlohmann::json(*r.resumed_from)
                                                                                      : nlohmann::json(nullptr)}});
  if (!r.gpu) {
    j["status"] = "no-gpu";
    j["compile_checks"] = r.compile_checks;
    j["notes"] = r.notes;
    // No optimized source is written without a GPU; the rest is.
    j["outputs"] = {{"dir", out_dir.string()},
                    {"diff", (out_dir / "changes.diff").string()},
                    {"result", (out_dir / "result.json").string()},
                    {"report", (out_dir / "report.md").string()},
                    {"html", (out_dir / "report.html").string()}};
    return j;
  }
  j["status"] = r.best >= 0 ? "improved" : "unchanged";
  nlohmann::json baseline;
  baseline["per_case"] = perCase(task, r.confirm_baseline.empty() ? r.candidates[0].cases : r.confirm_baseline);
  if (!r.candidates.empty()) baseline["kernels"] = r.candidates[0].cases.empty() ? nlohmann::json::array() : r.candidates[0].cases[0].kernels;
  if (!r.launcher_timeline.empty()) baseline["launcher_timeline"] = r.launcher_timeline;
  j["baseline"] = baseline;
  nlohmann::json best;
  if (r.best >= 0) {
    const CandidateRecord& c = r.candidates[static_cast<size_t>(r.best)];
    best = c.toJson();
    best.erase("cases");
    best["per_case"] = perCase(task, r.confirm_best);
    for (size_t i = 0; i < r.confirm_best.size() && i < r.confirm_baseline.size(); ++i) {
      if (r.confirm_best[i].timing && r.confirm_baseline[i].timing) {
        best["per_case"][i]["speedup"] = r.confirm_baseline[i].timing->median_ms / r.confirm_best[i].timing->median_ms;
      }
    }
    if (!c.cases.empty()) best["kernels"] = c.cases[0].kernels;
  } else {
    best = {{"id", 0}, {"config_text", "as written"}, {"per_case", baseline["per_case"]}};
  }
  j["best"] = best;
  j["speedup"] = r.speedup;
  if (r.dispatch.is_object()) {
    j["dispatch"] = r.dispatch;
    j["dispatch"]["handed_back"] = r.best >= 0 && r.dispatch.contains("candidate") && r.dispatch["candidate"] == r.best;
  }
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : r.candidates) cands.push_back(c.toJson());
  j["candidates"] = cands;
  j["trace"] = r.trace;
  j["notes"] = r.notes;
  j["outputs"] = {{"dir", out_dir.string()},
                  {"source", (out_dir / task.source.filename()).string()},
                  {"diff", (out_dir / "changes.diff").string()},
                  {"result", (out_dir / "result.json").string()},
                  {"report", (out_dir / "report.md").string()},
                  {"html", (out_dir / "report.html").string()}};
  return j;
}

namespace {

// What the trace says about the decisions: findings, the proposals they led to, what each
// proposal won or lost, and why the search stopped.
std::string decisionsMarkdown(const OptimizeResult& r) {
  std::ostringstream md;
  std::map<std::string, nlohmann::json> proposals;
  std::map<std::string, int> measured;
  std::map<std::string, double> best_gain;
  std::vector<nlohmann::json> findings, other;
  for (const auto& e : r.trace) {
    const std::string kind = e.value("kind", "");
    const auto& d = e["data"];
    if (kind == "finding") findings.push_back(d);
    else if (kind == "proposal") proposals[d.value("id", "")] = d;
    else if (kind == "round" && d.contains("outcomes")) {
      for (const auto& o : d["outcomes"]) {
        std::string pid = o.value("proposal", "");
        measured[pid] += o.value("measured", 0);
        if (o.contains("gain")) best_gain[pid] = std::max(best_gain.count(pid) ? best_gain[pid] : -1e9, o["gain"].get<double>());
      }
    } else if (kind == "pass-skipped" || kind == "pass-refused" || kind == "pass-result" || kind == "base" ||
               kind == "engine-error") {
      other.push_back(e);
    }
  }
  md << "## Decisions\n\n";
  md << fmt::format("- strategy: {} ({}); engine: {}\n", r.strategy, r.strategy_reason, r.engine);
  md << fmt::format("- {} candidates proposed; {} variants measured on the GPU (the original included), {} reused "
                    "from the results database, {} loaded from earlier runs\n",
                    r.evaluated, r.measured, r.reused, r.preloaded);
  md << "- stopped: " << r.stop_reason << "\n";
  if (findings.empty()) md << "- findings: none (no diagnosis ran, and the measurements showed nothing the rules act on)\n";
  for (const auto& f : findings) {
    md << fmt::format("- finding {} ({}, {}): {}\n", f.value("id", ""), f.value("kind", ""), f.value("source", ""),
                      f.value("summary", ""));
  }
  for (const auto& [id, p] : proposals) {
    std::string fs;
    if (p.contains("findings") && p["findings"].is_array()) {
      for (const auto& x : p["findings"]) fs += (fs.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
    }
    // A const json's operator[] on a missing key is undefined behaviour: a rewrite proposal
    // (the model engine's) has no "region" (report.md segfaulted about one run in ten).
    std::string what = p.value("kind", "") == "pass"  ? "pass " + p.value("pass", "")
                       : p.contains("region")          ? "region " + p["region"].dump()
                                                       : p.value("kind", std::string("proposal"));
    std::string outcome = measured.count(id) ? fmt::format("{} candidates", measured[id]) : "no candidates";
    if (best_gain.count(id)) {
      double g = best_gain[id];
      outcome += g > 0 ? fmt::format(", won: its best was {:.1f}% below the best before its round", 100 * g)
                       : fmt::format(", lost: its best was {:.1f}% above the best before its round", -100 * g);
    }
    md << fmt::format("- proposal {} from {}: {} ({}): {}\n", id, fs.empty() ? "-" : fs, what,
                      p.value("rationale", ""), outcome);
  }
  for (const auto& e : other) {
    md << fmt::format("- {}: {}\n", e.value("kind", ""), e["data"].dump());
  }
  if (measured.count("strategy")) {
    md << fmt::format("- the strategy's own proposals: {} candidates\n", measured["strategy"]);
  }
  md << "\n";
  return md.str();
}

// Which shapes get what, when a per-shape dispatch was built (result.json's "dispatch").
std::string dispatchMarkdown(const nlohmann::json& result) {
  const nlohmann::json d = result.value("dispatch", nlohmann::json());
  if (!d.is_object() || !d.value("built", false)) return "";
  std::ostringstream md;
  md << fmt::format("\n## Per-shape dispatch\n\n{} by {}: {:.3f}x on the search's measurements, against {:.3f}x for "
                    "the best single candidate{}.\n\n",
                    d.value("handed_back", false) ? "Handed back: the launcher picks" : "Built, not handed back: it picked",
                    d.value("feature", "?"), 1.0 / d.value("objective_search", 1.0),
                    1.0 / d.value("single_best_objective", 1.0),
                    d.contains("reason") ? " (" + d.value("reason", "") + ")" : "");
  md << "| " << d.value("feature", "?") << " | runs | measured cases | extra shapes verified |\n| --- | --- | --- | --- |\n";
  for (const auto& b : d.value("buckets", nlohmann::json::array())) {
    std::string cases, extra;
    for (const auto& c : b.value("cases", nlohmann::json::array())) cases += (cases.empty() ? "" : "; ") + c.get<std::string>();
    int verified = 0;
    for (const auto& e : b.value("extra_shapes", nlohmann::json::array())) verified += e.value("status", "") == "verified" ? 1 : 0;
    extra = b.value("candidate", nlohmann::json()).is_null() ? "-" : std::to_string(verified);
    md << fmt::format("| {}..{} | {} | {} | {} |\n", b.value("lo", 0), b.value("hi", 0), b.value("runs", "?"), cases, extra);
  }
  md << "\nA shape outside every row runs the kernel as written.\n";
  return md.str();
}

// Where the launcher as written spends its GPU time, per profiled case.
std::string timelineMarkdown(const nlohmann::json& result) {
  const nlohmann::json t = result["baseline"].value("launcher_timeline", nlohmann::json::array());
  const nlohmann::json& cases = result["baseline"]["per_case"];
  bool any = false;
  for (const auto& c : t) any = any || c.is_object();
  if (!any) return "";
  std::ostringstream md;
  md << "\n## Where the launcher's GPU time goes (as written)\n\nOne call profiled whole: its Triton kernels, "
        "the other kernels and copies it launches (torch's), and how often the host waited for the GPU.\n\n"
        "| case | GPU (ms) | Triton kernels | outside them | largest outside | host syncs |\n"
        "| --- | --- | --- | --- | --- | --- |\n";
  for (size_t i = 0; i < t.size(); ++i) {
    if (!t[i].is_object()) continue;
    double gpu = t[i].value("gpu_ms", 0.0);
    double outside = t[i].value("other_ms", 0.0) + t[i].value("copy_ms", 0.0);
    std::string top = "-";
    if (t[i].contains("outside") && t[i]["outside"].is_array() && !t[i]["outside"].empty()) {
      const auto& o = t[i]["outside"][0];
      top = fmt::format("`{}` {:.3f} ms", o.value("name", "?"), o.value("ms", 0.0));
    }
    std::string label = i < cases.size() ? cases[i].value("label", "") : std::to_string(i);
    md << fmt::format("| {} | {:.3f} | {:.3f} ms ({:.0f}%) | {:.3f} ms ({:.0f}%) | {} | {} |\n", label, gpu,
                      t[i].value("triton_ms", 0.0), gpu > 0 ? 100 * t[i].value("triton_ms", 0.0) / gpu : 0.0, outside,
                      gpu > 0 ? 100 * outside / gpu : 0.0, top, t[i].value("host_syncs", 0));
  }
  return md.str();
}

std::string reportMarkdown(const Task& task, const TunableSet& tunables, const OptimizeResult& r,
                           const nlohmann::json& result, const std::string& diff) {
  std::ostringstream md;
  md << "# tritonforge: " << task.name << "\n\n";
  const auto& env = result["environment"];
  std::string gpu = env["gpu"].is_object() ? env["gpu"].value("name", "?") : "no GPU";
  md << fmt::format("- date: {}\n- tritonforge {} (commit {})\n- GPU: {}\n- triton {}, torch {}, python {}\n",
                    result.value("date", ""), toolVersion(), toolCommit(), gpu,
                    env["triton"].is_string() ? env["triton"].get<std::string>() : "-",
                    env["torch"].is_string() ? env["torch"].get<std::string>() : "-", env.value("python", "-"));
  md << fmt::format("- search: effort {}, {} strategy, {} candidates in {} rounds, {:.1f} s, stopped: {}\n",
                    result["search"].value("effort", "default"), r.strategy, r.candidates.size(), r.rounds,
                    r.elapsed_s, r.stop_reason);
  if (!r.db_path.empty()) {
    md << fmt::format("- results database: {} (run #{}{})\n", r.db_path, r.run_id,
                      r.resumed_from ? fmt::format(", resuming run #{}", *r.resumed_from) : "");
  }
  md << "\n";
  if (!r.gpu) {
    md << "Nothing was measured: " << r.no_gpu_reason << ".\n";
    return md.str();
  }
  md << fmt::format("**Speed-up: {:.2f}x** (geometric mean over {} case(s), confirmed by an interleaved "
                    "re-measurement).\n\n",
                    r.speedup, task.cases.size());
  md << "| case | as written (ms) | optimized (ms) | speed-up |\n| --- | --- | --- | --- |\n";
  const auto& base = result["baseline"]["per_case"];
  const auto& best = result["best"]["per_case"];
  for (size_t i = 0; i < base.size(); ++i) {
    double b = base[i].value("time_ms", 0.0);
    double c = i < best.size() ? best[i].value("time_ms", b) : b;
    md << fmt::format("| {} | {:.4f} | {:.4f} | {:.2f}x |\n", base[i].value("label", ""), b, c, c > 0 ? b / c : 0);
  }
  if (r.best >= 0) {
    auto routes = routeLines(task, r.confirm_best);
    if (!routes.empty()) {
      md << "\nRoute taken by each case's launch:\n\n";
      for (const auto& l : routes) md << "- " << l << "\n";
    }
  }
  md << dispatchMarkdown(result);
  md << timelineMarkdown(result);
  md << "\n## Tunables\n\n| parameter | found as | role | value | tuned |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& t : tunables.items) {
    md << fmt::format("| {} | {} | {} | {} | {} |\n", t.id, toString(t.origin), toString(t.role),
                      t.value ? std::to_string(*t.value) : t.expr_text, t.tunable ? "yes" : "no: " + t.note);
  }
  md << decisionsMarkdown(r);
  std::map<std::string, int> by_status;
  for (const auto& c : r.candidates) by_status[toString(c.status)]++;
  md << "\n## Candidates\n\n";
  for (const auto& [s, n] : by_status) md << fmt::format("- {}: {}\n", s, n);
  md << "\n";
  if (!r.notes.empty()) {
    md << "## Notes\n\n";
    for (const auto& n : r.notes) md << "- " << n << "\n";
    md << "\n";
  }
  if (!diff.empty()) md << "## Changes\n\n```diff\n" << diff << "```\n";
  return md.str();
}

}  // namespace

void checkOutputDir(const Task& task, const fs::path& out_root) {
  fs::path dir = fs::absolute(out_root / task.name).lexically_normal();
  std::error_code ec;
  for (const fs::path& mine : {task.source, task.harness, task.path}) {
    if (fs::equivalent(dir / task.source.filename(), mine, ec)) {
      throw UserError(fmt::format("{}: refusing to write the optimized source over the task's own file; choose "
                                  "another --out",
                                  (dir / task.source.filename()).string()));
    }
    for (const char* name : {"result.json", "changes.diff", "report.md", "report.html"}) {
      if (fs::equivalent(dir / name, mine, ec)) {
        throw UserError(fmt::format("{}: refusing to overwrite a task file; choose another --out", (dir / name).string()));
      }
    }
  }
}

fs::path writeOptimizeOutputs(const Task& task, const TunableSet& tunables, const OptimizeResult& r,
                              const OptimizeOptions& options, const fs::path& out_root, nlohmann::json* result_json) {
  checkOutputDir(task, out_root);
  fs::path dir = fs::absolute(out_root / task.name).lexically_normal();
  fs::path src_out = dir / task.source.filename();
  nlohmann::json result = optimizeResultJson(task, tunables, r, options, dir);
  std::string original = readTextFile(task.source, "kernel source", kMaxSourceFileBytes);
  std::string diff = unifiedDiff(original, r.best_source, task.source.filename().string(),
                                 task.source.filename().string());
  if (r.gpu) writeFileAtomic(src_out, r.best_source);
  writeFileAtomic(dir / "changes.diff", diff);
  writeFileAtomic(dir / "result.json", result.dump(2) + "\n");
  writeFileAtomic(dir / "report.md", reportMarkdown(task, tunables, r, result, diff));
  // After the rest: the page reads result.json and changes.diff, and never fails the run.
  HtmlReportOutcome html = writeHtmlReport(dir, options.evaluator.worker.python, options.evaluator.worker.package_dir);
  if (!html.rendered) std::fprintf(stderr, "note: report.html holds no report: %s\n", html.why.c_str());
  if (result_json) *result_json = std::move(result);
  return dir;
}

std::string optimizeSummary(const Task& task, const TunableSet& tunables, const OptimizeResult& r,
                            const fs::path& out_dir) {
  std::ostringstream s;
  if (!r.gpu) {
    s << "No CUDA GPU: " << r.no_gpu_reason << ".\n";
    s << "Measuring the kernel, verifying candidates against the reference and timing them need a CUDA GPU;\n"
         "what runs here is the analysis above and ahead-of-time compile checks for sm_90:\n";
    for (const auto& c : r.compile_checks) {
      if (c.value("status", "") == "ok") {
        const auto& res = c["result"];
        const auto& cub = res.contains("cubin") ? res["cubin"] : nlohmann::json::object();
        s << fmt::format("  {}: compiled for {}: {} warps, {} stages, {} B shared memory, {} registers{}\n",
                         c.value("kernel", ""), c.value("target", ""), res.value("num_warps", 0),
                         res.value("num_stages", 0), res.value("shared_bytes", 0),
                         cub.contains("registers") && cub["registers"].is_number() ? std::to_string(cub["registers"].get<int>()) : "?",
                         res.contains("spills") && res["spills"].is_object()
                             ? fmt::format(", spills {}/{} B", res["spills"].value("spill_store_bytes", 0),
                                           res["spills"].value("spill_load_bytes", 0))
                             : "");
      } else {
        s << fmt::format("  {}: {}: {}\n", c.value("kernel", ""), c.value("status", ""), c.value("reason", ""));
      }
    }
    s << fmt::format("Wrote {}\n", (out_dir / "result.json").string());
    return s.str();
  }
  const CandidateRecord& base = r.candidates[0];
  int ok = 0, failed = 0, pruned = 0;
  for (const auto& c : r.candidates) {
    if (c.status == CandidateStatus::kOk) ++ok;
    else if (c.status == CandidateStatus::kPruned) ++pruned;
    else if (c.status != CandidateStatus::kNotRun) ++failed;
  }
  s << fmt::format("{}: {} candidates ({} verified, {} failed, {} pruned) in {:.1f} s; {} strategy\n", task.name,
                   r.candidates.size(), ok, failed, pruned, r.elapsed_s, r.strategy);
  if (r.reused || r.preloaded) {
    s << fmt::format("  {} measured now, {} reused from the results database ({}{})\n", r.measured,
                     r.reused + r.preloaded, r.db_path,
                     r.resumed_from ? fmt::format(", resuming interrupted run #{}", *r.resumed_from) : "");
  }
  const auto& confirm_b = r.confirm_baseline.empty() ? base.cases : r.confirm_baseline;
  for (size_t i = 0; i < confirm_b.size(); ++i) {
    double b = confirm_b[i].timing ? confirm_b[i].timing->median_ms : 0;
    if (r.best >= 0 && i < r.confirm_best.size() && r.confirm_best[i].timing) {
      double c = r.confirm_best[i].timing->median_ms;
      s << fmt::format("  {}: {:.4f} ms -> {:.4f} ms ({:.2f}x)\n", task.caseLabel(i), b, c, b / c);
    } else {
      s << fmt::format("  {}: {:.4f} ms (unchanged)\n", task.caseLabel(i), b);
    }
  }
  if (r.best >= 0) {
    s << fmt::format("Best: {} -> {:.2f}x\n", r.candidates[static_cast<size_t>(r.best)].config_text, r.speedup);
    for (const auto& l : routeLines(task, r.confirm_best)) s << "  route: " << l << "\n";
  } else {
    s << "No faster verified configuration: the kernel is handed back as written.\n";
  }
  for (const auto& n : r.notes) s << "Note: " << n << "\n";
  s << fmt::format("Wrote {}/ ({}, changes.diff, result.json, report.md, report.html)\n", out_dir.string(),
                   task.source.filename().string());
  (void)tunables;
  return s.str();
}

}  // namespace tf
