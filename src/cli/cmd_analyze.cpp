// tritonforge analyze SOURCE.py [--kernel NAME] [--launcher NAME] [--cases TASK.toml] [--json]
//                    [--no-compile] [--compile-limit N]
//
// Static analysis of a Triton source: the Kernel IR of every kernel, derived facts, and with
// a task file, estimates per case and compiled facts (docs/analyze.md; JSON schema
// tritonforge.analyze/2).
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "compile/source_analysis.h"
#include "kernel/module_ir.h"
#include "task/imported_kernels.h"
#include "task/task.h"
#include "util/error.h"
#include "util/fs.h"
#include "worker/worker_process.h"
#include "task/source_parser.h"

namespace tf {
namespace {

using nlohmann::json;

struct AnalyzeFlags {
  std::string source;
  std::string kernel;
  std::string launcher;
  std::string cases;
  bool json = false;
  bool no_compile = false;
  int compile_limit = 4;
};

std::string str(const json& v) {
  if (v.is_null()) return "?";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string bytesText(const json& v) {
  if (!v.is_number()) return "?";
  double b = v.get<double>();
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} KB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

std::string countText(const json& v, const char* unit) {
  if (!v.is_number()) return std::string("? ") + unit;
  double x = v.get<double>();
  if (x >= 1e12) return fmt::format("{:.2f} T{}", x / 1e12, unit);
  if (x >= 1e9) return fmt::format("{:.2f} G{}", x / 1e9, unit);
  if (x >= 1e6) return fmt::format("{:.2f} M{}", x / 1e6, unit);
  if (x >= 1e3) return fmt::format("{:.1f} K{}", x / 1e3, unit);
  return fmt::format("{:.0f} {}", x, unit);
}

std::string shapeText(const json& s) {
  if (!s.is_array()) return "[?]";
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + str(s[i]);
  return out + "]";
}

void printKernel(const json& k) {
  const auto& ir = k["ir"];
  std::printf("kernel %s (line %d)\n", k["name"].get<std::string>().c_str(),
              k["position"].is_object() ? k["position"]["line"].get<int>() : 0);
  std::string params;
  for (const auto& p : k["params"]) {
    params += (params.empty() ? "" : ", ") + p["name"].get<std::string>() + " " + p["kind"].get<std::string>();
    if (p.contains("type")) params += " " + p["type"].get<std::string>();
    if (p.contains("default")) params += " = " + p["default"].get<std::string>();
  }
  std::printf("  params: %s\n", params.c_str());
  if (k.contains("autotune")) {
    const auto& at = k["autotune"];
    std::string how = at.value("configs_understood", false) ? fmt::format("{} configs", at["configs"].size())
                                                             : std::string("configs computed at run time");
    std::string tuner = at.contains("tuner") ? fmt::format(" (through {})", at["tuner"].get<std::string>()) : "";
    std::printf("  @triton.autotune%s: %s, key %s\n", tuner.c_str(), how.c_str(), at["key"].dump().c_str());
  }
  if (k.contains("heuristics")) std::printf("  @triton.heuristics: %s\n", k["heuristics"].dump().c_str());
  for (const auto& a : ir["program_axes"]) {
    std::string names;
    for (const auto& n : a["names"]) names += (names.empty() ? "" : ", ") + n.get<std::string>();
    std::string uses;
    for (const auto& u : a["uses"]) {
      if (u["kind"] == "tile") {
        uses += fmt::format("{}tiles of {} axis {} ({})", uses.empty() ? "" : "; ", str(u["base"]), u["dim"].get<int>(), str(u["extent"]));
      } else {
        uses += fmt::format("{}one {}-stride step of {} per program", uses.empty() ? "" : "; ", str(u["stride"]), str(u["base"]));
      }
    }
    std::printf("  program_id(%d)%s%s%s: %s\n", a["axis"].get<int>(), names.empty() ? "" : " = ", names.c_str(),
                a["grouped"].get<bool>() ? " (grouped order)" : "", uses.empty() ? "selects nothing that is stored" : uses.c_str());
  }
  for (const auto& L : ir["loops"]) {
    std::string opts;
    if (!L["num_stages"].is_null()) opts += fmt::format(", num_stages={}", L["num_stages"].get<int>());
    std::printf("  loop L%d (line %d, %s %s): trips %s%s%s\n", L["id"].get<int>(), L["line"].get<int>(), L["kind"].get<std::string>().c_str(),
                L["var"].get<std::string>().c_str(), str(L["trips_expanded"]).c_str(), opts.c_str(),
                L["trips_note"].is_null() ? "" : (" (" + L["trips_note"].get<std::string>() + ")").c_str());
  }
  for (const auto& a : ir["accesses"]) {
    const auto& p = a["pointer"];
    std::string addr = str(p["base"]);
    if (!p["offset"].is_null() && p["offset"] != "0") addr += " + " + str(p["offset"]);
    for (const auto& t : p["terms"]) {
      addr += fmt::format(" + {}@{}*{}", str(t["index"]), t["axis"].get<int>(), str(t["stride"]));
    }
    for (const auto& irr : p["irregular"]) addr += " + <" + irr.get<std::string>() + ">";
    const auto& c = a["coalescing"];
    std::string co = c["verdict"].get<std::string>();
    if (!c["condition"].is_null()) co += " (" + c["condition"].get<std::string>() + ")";
    std::printf("  #%d %s line %d %s %s: %s%s -> %s\n", a["id"].get<int>(), a["api"].get<std::string>().c_str(), a["line"].get<int>(),
                shapeText(a["shape"]).c_str(), str(a["dtype"]).c_str(), addr.c_str(),
                a["mask"].is_null() ? "" : ("  mask " + a["mask"].get<std::string>()).c_str(), co.c_str());
  }
  for (const auto& d : ir["dots"]) {
    std::printf("  dot line %d: %s x %s x %s (M x N x K), %s x %s -> acc %s%s%s\n", d["line"].get<int>(), str(d["m"]).c_str(),
                str(d["n"]).c_str(), str(d["k"]).c_str(), str(d["a_dtype"]).c_str(), str(d["b_dtype"]).c_str(),
                str(d["acc_dtype"]).c_str(), d["loop"].get<int>() >= 0 ? fmt::format(", in loop L{}", d["loop"].get<int>()).c_str() : "",
                d["input_precision"].is_null() ? "" : (", input_precision " + d["input_precision"].get<std::string>()).c_str());
  }
  for (const auto& r : ir["reductions"]) {
    std::printf("  %s line %d: %s over axis %s of %s\n", r["scan"].get<bool>() ? "scan" : "reduction", r["line"].get<int>(),
                r["op"].get<std::string>().c_str(), str(r["axis"]).c_str(), shapeText(r["in_shape"]).c_str());
  }
  if (!ir["elementwise"].empty()) {
    std::string ew;
    for (const auto& e : ir["elementwise"]) ew += fmt::format("{}{} x{}", ew.empty() ? "" : ", ", e["op"].get<std::string>(), e["count"].get<int>());
    std::printf("  elementwise: %s\n", ew.c_str());
  }
  for (const auto& c : ir["calls"]) {
    std::printf("  call line %d: %s%s\n", c["line"].get<int>(), c["callee"].get<std::string>().c_str(), c["inlined"].get<bool>() ? " (inlined)" : "");
  }
  const auto& d = ir["derived"];
  std::printf("  per program: loads %s B, stores %s B, %s FLOPs\n", str(d["bytes_loaded_per_program"]).c_str(),
              str(d["bytes_stored_per_program"]).c_str(), str(d["flops_per_program"]).c_str());
  if (!d["shared_memory"]["per_stage"].is_null()) {
    std::printf("  shared memory for dot operands: %s B per stage\n", str(d["shared_memory"]["per_stage"]).c_str());
  }
  for (const auto& c : d["constraints"]) {
    std::printf("  constraint: %s%s\n", c["text"].get<std::string>().c_str(), c["required"].get<bool>() ? "" : " (advice)");
  }
  for (const auto& n : d["notes"]) std::printf("  note: %s\n", n.get<std::string>().c_str());
  for (const auto& n : ir["ir_notes"]) std::printf("  note: %s\n", n.get<std::string>().c_str());
  for (const auto& n : k["notes"]) std::printf("  note: %s\n", n.get<std::string>().c_str());
  for (const auto& o : ir["opaque"]) {
    std::printf("  not understood: line %d `%s`: %s\n", o["line"].get<int>(), o["text"].get<std::string>().c_str(),
                o["reason"].get<std::string>().c_str());
  }
  for (const auto& c : k["cases"]) {
    const auto& cfg = c["config"];
    std::string grid = cfg["grid"].is_array() ? fmt::format("grid {}x{}x{}", cfg["grid"][0].get<int64_t>(), cfg["grid"][1].get<int64_t>(),
                                                             cfg["grid"][2].get<int64_t>())
                                               : "grid ?";
    std::printf("  case %s (%s, %d warps, %d stages):\n", c["label"].get<std::string>().c_str(), grid.c_str(),
                cfg["num_warps"].get<int>(), cfg["num_stages"].get<int>());
    const auto& pp = c["per_program"];
    std::printf("    per program: %s loaded, %s stored, %s%s; intensity %s FLOP/B; total %s, %s\n", bytesText(pp["bytes_loaded"]).c_str(),
                bytesText(pp["bytes_stored"]).c_str(), countText(pp["flops"], "FLOP").c_str(),
                pp["varies"].get<bool>() ? " (mean)" : "",
                c["arithmetic_intensity"].is_number() ? fmt::format("{:.2f}", c["arithmetic_intensity"].get<double>()).c_str() : "?",
                bytesText(c["total"]["bytes"]).c_str(), countText(c["total"]["flops"], "FLOP").c_str());
    for (const auto& a : c["accesses"]) {
      std::string w = a["width_bytes"].is_number() ? fmt::format("{} B per thread", a["width_bytes"].get<int>()) : "width ?";
      std::string s = a["sectors_per_request"].is_number() ? fmt::format(", {:.0f} sectors/request", a["sectors_per_request"].get<double>()) : "";
      std::printf("    #%d %s, %s%s%s\n", a["id"].get<int>(), a["verdict"].get<std::string>().c_str(), w.c_str(), s.c_str(),
                  a["limited_by"].is_null() ? "" : (" (limited by " + a["limited_by"].get<std::string>() + ")").c_str());
    }
    if (c["shared_memory"].is_object()) {
      const auto& sm = c["shared_memory"];
      std::printf("    shared memory: %s B (%s buffers x %s B + %s B) of %d: %s\n", str(sm["total"]).c_str(), str(sm["buffers"]).c_str(),
                  str(sm["per_stage"]).c_str(), str(sm["unpipelined"]).c_str(), sm["limit"].get<int>(),
                  sm["fits"].is_null() ? "unknown" : sm["fits"].get<bool>() ? "fits" : "does NOT fit");
    }
    for (const auto& d : c["dots"]) {
      std::printf("    dot #%d -> %s (%s)\n", d["id"].get<int>(), str(d["tensor_core"]).c_str(), str(d["why"]).c_str());
    }
    for (const auto& cs : c["constraints"]) {
      if (cs["status"] == "ok") continue;
      std::printf("    constraint %s: %s%s\n", cs["status"].get<std::string>().c_str(), cs["text"].get<std::string>().c_str(),
                  cs["detail"].is_null() ? "" : (" (" + cs["detail"].get<std::string>() + ")").c_str());
    }
    for (const auto& n : c["notes"]) std::printf("    note: %s\n", n.get<std::string>().c_str());
    if (c.contains("compiled") && c["compiled"].is_number()) std::printf("    compiled: see compile #%d\n", c["compiled"].get<int>());
  }
  int i = 0;
  for (const auto& cf : k["compiled"]) {
    if (cf["status"] != "ok") {
      std::printf("  compile #%d: %s: %s\n", i++, cf["status"].get<std::string>().c_str(), str(cf.value("reason", json())).c_str());
      continue;
    }
    const auto& in = cf["instructions"];
    std::string instr = "no instruction facts";
    if (in.is_object()) {
      std::string loads, stores;
      for (const auto& [w, n] : in["global_load_bits"].items()) loads += (loads.empty() ? "" : ", ") + w + "-bit x" + std::to_string(n.get<int>());
      for (const auto& [w, n] : in["global_store_bits"].items()) stores += (stores.empty() ? "" : ", ") + w + "-bit x" + std::to_string(n.get<int>());
      instr = fmt::format("tensor cores {} ({} mma, {} FFMA); loads {}; stores {}; cp.async {}, TMA {}/{}; local {}/{} (from {})",
                          in["tensor_core"].get<std::string>(), in["mma"].get<int>(), in["fma"].get<int>(), loads.empty() ? "none" : loads,
                          stores.empty() ? "none" : stores, in["cp_async"].get<int>(), in["tma_loads"].get<int>(), in["tma_stores"].get<int>(),
                          in["local_loads"].get<int>(), in["local_stores"].get<int>(), in["from"].get<std::string>());
    }
    std::printf("  compile #%d: %s registers, spills %s/%s B, shared %s B; %s\n", i++, str(cf["registers"]).c_str(),
                str(cf["spill_store_bytes"]).c_str(), str(cf["spill_load_bytes"]).c_str(), str(cf["shared_bytes"]).c_str(), instr.c_str());
    for (const auto& n : cf["notes"]) std::printf("    note: %s\n", n.get<std::string>().c_str());
  }
  if (k.contains("compiled_note") && k["cases"].empty()) std::printf("  compiled facts: %s\n", k["compiled_note"].get<std::string>().c_str());
}

void printAnalysis(const json& j) {
  std::printf("%s\n", j["source"].get<std::string>().c_str());
  for (const auto& k : j["kernels"]) printKernel(k);
  for (const auto& l : j["launches"]) {
    std::printf("launch %s[%s] in %s (line %d)\n", l["kernel"].get<std::string>().c_str(), l["grid"].get<std::string>().c_str(),
                l["function"].get<std::string>().empty() ? "<module>" : l["function"].get<std::string>().c_str(),
                l["position"].is_object() ? l["position"]["line"].get<int>() : 0);
  }
  if (j.contains("task")) {
    for (const auto& c : j["task"]["cases"]) {
      for (const auto& n : c["notes"]) std::printf("case %s: note: %s\n", c["label"].get<std::string>().c_str(), n.get<std::string>().c_str());
    }
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
  // A task file where the source goes is a likely slip: say what to do instead of a Python
  // syntax error about TOML.
  if (std::filesystem::path(f.source).extension() == ".toml") {
    throw UserError(fmt::format("{}: analyze takes the kernel's Python source, not a task file: tritonforge "
                                "analyze SOURCE.py --cases {}",
                                f.source, f.source));
  }
  WorkerProcess parser(wo);
  ParsedSource src = parseFile(parser, f.source, "source");
  const std::filesystem::path source_path = std::filesystem::absolute(f.source);
  auto imported = loadImportedKernels(parser, src, source_path, packageOf(source_path));
  ModuleIR ir = buildModuleIR(src, &imported->kernels);
  if (ir.kernels.empty()) throw UserError(fmt::format("{}: no @triton.jit kernel found", f.source));
  if (!f.kernel.empty() && !ir.kernel(f.kernel)) {
    throw UserError(fmt::format("{}: no @triton.jit kernel named '{}'", f.source, f.kernel));
  }
  std::string why;
  if (!f.launcher.empty() && ir.entryFunctions(f.launcher, &why).empty()) {
    throw UserError(fmt::format("{}: --launcher: {}", f.source, why));
  }
  std::optional<Task> task;
  std::optional<ParsedSource> harness_src;
  std::optional<ModuleIR> harness;
  if (!f.cases.empty()) {
    task = loadTask(f.cases);
    harness_src = parseFile(parser, task->harness, "harness");
    harness = buildModuleIR(*harness_src);
    std::string launcher = f.launcher.empty() ? task->launcher : f.launcher;
    if (ir.entryFunctions(launcher, &why).empty()) {
      throw UserError(fmt::format("{}: the task's launcher: {}", f.cases, why));
    }
  }
  AnalyzeOptions o;
  o.kernel = f.kernel;
  o.launcher = f.launcher;
  o.task = task ? &*task : nullptr;
  o.harness = harness ? &*harness : nullptr;
  o.compile_limit = f.compile_limit;
  std::unique_ptr<WorkerProcess> compiler;
  std::unique_ptr<WorkerClient> compile_client;
  if (task && !f.no_compile) {
    WorkerOptions co = workerOptionsFor(global, false);
    co.name = "compile worker";
    compiler = std::make_unique<WorkerProcess>(co);
    compile_client = std::make_unique<WorkerClient>(*compiler);
    o.compile_worker = compile_client.get();
  }
  json j = analyzeSource(src, ir, o);
  if (f.json) std::cout << j.dump(2) << std::endl;
  else printAnalysis(j);
  return 0;
}

}  // namespace

CommandRunner registerAnalyze(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kAnalyzeRegistration("analyze", 10, &registerAnalyze);

CommandRunner registerAnalyze(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<AnalyzeFlags>();
  CLI::App* sub = app.add_subcommand("analyze", "Static analysis of a Triton source: Kernel IR, derived and compiled facts");
  sub->add_option("source", flags->source, "The Python source file")->required();
  sub->add_option("--kernel", flags->kernel, "Only this kernel");
  sub->add_option("--launcher", flags->launcher, "Tunables and cases as reached from this function (default: the task's, else every launching function)");
  sub->add_option("--cases", flags->cases, "A task file: its cases, harness and [signature] give values, types and compiled facts");
  sub->add_flag("--json", flags->json, "JSON output (schema tritonforge.analyze/2, docs/analyze.md)");
  sub->add_flag("--no-compile", flags->no_compile, "With --cases: skip the ahead-of-time compiles");
  sub->add_option("--compile-limit", flags->compile_limit, "Distinct configurations compiled per kernel (default 4)")->check(CLI::Range(0, 64));
  return [flags, &global] { return runAnalyze(*flags, global); };
}

}  // namespace tf
