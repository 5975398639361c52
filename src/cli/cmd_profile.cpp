// tritonforge profile TASK.toml [--ncu] [--json] [--case I]... [--budget-ms MS] [--out DIR] ...
//
// Measures the task's kernel as written, case by case: verification (several seeds, poisoned
// and guarded outputs), time with its spread, % of the roofline (ceilings measured once per
// GPU and cached), and the diagnosis (from Nsight Compute with --ncu, else from the launch,
// the compiled kernel and the roofline). docs/profile.md describes the output.
//
// Exit codes: 0 every case verified; 1 environment failure; 2 bad input; 3 no GPU;
// 4 a case failed (wrong result, crash, timeout ...).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>

#include "cli/commands.h"
#include "diagnose/diagnose.h"
#include "diagnose/diagnosis_text.h"
#include "measure/case_request.h"
#include "worker/measurement.h"
#include "measure/ncu_runner.h"
#include "measure/roofline.h"
#include "task/task.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/temp_dir.h"
#include "worker/worker_client.h"
#include "worker/worker_process.h"

namespace tf {
namespace fs = std::filesystem;
namespace {

struct ProfileFlags {
  std::string task;
  bool ncu = false;
  bool json = false;
  std::vector<int> cases;
  double budget_ms = 400;
  bool remeasure_ceilings = false;
  bool no_roofline = false;
  std::string ncu_set = "full";
  std::string ncu_path;
  double ncu_timeout = 300;
  double run_timeout = 180;
  std::string out;
};

// A folder for ncu's files: --out (kept), else a temporary one removed at the end.
struct WorkDir {
  fs::path path;
  bool keep = false;
  std::optional<TempDir> temp;
};

std::string human(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  return fmt::format("{:.3g} {}{}", v, prefixes[i], unit);
}

struct KernelReport {
  nlohmann::json info;          // the run reply's entry, without the compiled texts
  std::optional<StaticFacts> facts;
  LaunchFacts launch;
};

std::vector<KernelReport> kernelReports(const nlohmann::json& kernels) {
  std::vector<KernelReport> out;
  if (!kernels.is_array()) return out;
  for (const auto& k : kernels) {
    KernelReport r;
    r.info = k;
    if (k.contains("asm")) {
      CompiledTexts t = CompiledTexts::fromJson(k["asm"]);
      if (!t.empty()) r.facts = staticFactsFromTexts(t);
      r.info.erase("asm");
    }
    r.launch = LaunchFacts::fromKernelJson(k);
    out.push_back(std::move(r));
  }
  return out;
}

// The ncu row for a kernel name: the longest launch of that name.
const KernelMetrics* metricsFor(const std::vector<KernelMetrics>& rows, const std::string& name) {
  const KernelMetrics* best = nullptr;
  double best_t = -1;
  for (const auto& k : rows) {
    if (k.name != name && ncuBaseName(k.name) != name) continue;
    double t = k.get("gpu__time_duration.sum").value_or(0);
    if (t > best_t) {
      best = &k;
      best_t = t;
    }
  }
  return best;
}

std::string launchLine(const nlohmann::json& k) {
  std::string s;
  if (k.contains("grid") && k["grid"].is_array()) {
    std::string g;
    for (const auto& d : k["grid"]) g += (g.empty() ? "" : "x") + d.dump();
    s += "grid " + g;
  }
  s += fmt::format(", {} warps, {} stages", k.value("num_warps", 0), k.value("num_stages", 0));
  if (k.contains("registers") && k["registers"].is_number()) s += fmt::format(", {} registers", k["registers"].get<int>());
  if (k.contains("spills") && k["spills"].is_number() && k["spills"].get<int>() > 0) {
    s += fmt::format(" ({} spilled)", k["spills"].get<int>());
  }
  s += fmt::format(", {} B shared", k.value("shared_bytes", 0));
  if (k.value("launches", 1) > 1) s += fmt::format(", launched {}x per call", k.value("launches", 1));
  return s;
}

int runProfile(const ProfileFlags& f, const GlobalOptions& global) {
  checkPositiveFlag("--budget-ms", f.budget_ms, 3.6e6);
  checkTimeoutFlag("--run-timeout", f.run_timeout);
  checkTimeoutFlag("--ncu-timeout", f.ncu_timeout);
  Task task = loadTask(f.task);
  std::vector<size_t> cases;
  for (int c : f.cases) {
    if (c < 0 || static_cast<size_t>(c) >= task.cases.size()) {
      throw UserError(fmt::format("{}: --case {} is out of range (the task has {} cases)", task.path.string(), c,
                                  task.cases.size()));
    }
    cases.push_back(static_cast<size_t>(c));
  }
  if (cases.empty()) {
    for (size_t i = 0; i < task.cases.size(); ++i) cases.push_back(i);
  }

  WorkerOptions wo = workerOptionsFor(global, true);
  wo.name = "measurement worker";
  WorkerProcess worker(wo);
  WorkerClient client(worker);
  WorkerReply started = worker.ensureStarted();
  if (!started.ok()) {
    throw EnvironmentError(fmt::format("{}{}", started.message, started.detail.empty() ? "" : " (" + started.detail + ")"));
  }
  const nlohmann::json hello = worker.helloInfo();
  nlohmann::json out = {{"schema", "tritonforge.profile/1"}, {"task", task.path.string()}, {"name", task.name}};
  if (!hello.contains("gpu") || !hello["gpu"].is_object()) {
    std::string why = hello.value("gpu_reason", std::string("no CUDA GPU is visible"));
    out["gpu"] = nullptr;
    out["reason"] = why;
    if (f.json) std::cout << out.dump(2) << std::endl;
    else std::fprintf(stderr, "tritonforge: nothing measured: %s\n", why.c_str());
    return 3;
  }
  const nlohmann::json gpu = hello["gpu"];
  GpuLimits limits = GpuLimits::fromHello(gpu);
  out["gpu"] = gpu;
  out["worker"] = {{"python", hello.value("python", "")}, {"triton", hello.value("triton", "")},
                   {"torch", hello.value("torch", "")}};

  std::optional<Ceilings> ceilings;
  if (!f.no_roofline) {
    std::string why;
    ceilings = loadOrMeasureCeilings(client, gpu, f.remeasure_ceilings, &why);
    if (ceilings) out["ceilings"] = ceilings->toJson();
    else out["ceilings_note"] = why;
  }

  WorkDir work;
  if (!f.out.empty()) {
    work.path = fs::absolute(f.out);
    work.keep = true;
  } else if (f.ncu) {
    work.temp.emplace("tritonforge-profile-");
    work.path = work.temp->path();
  }
  NcuOptions ncu_options;
  ncu_options.ncu = f.ncu_path;
  ncu_options.set = f.ncu_set;
  ncu_options.timeout = std::chrono::milliseconds(static_cast<int64_t>(f.ncu_timeout * 1000));
  std::string ncu_unavailable;
  nlohmann::json ncu_info = {{"requested", f.ncu}};
  if (f.ncu && findNcu(f.ncu_path).empty()) {
    ncu_unavailable = f.ncu_path.empty() ? "ncu (Nsight Compute) was not found: put it on PATH or set TRITONFORGE_NCU"
                                         : fmt::format("ncu '{}' was not found or is not executable", f.ncu_path);
  }

  std::string text;
  if (!f.json) {
    text += fmt::format("{} ({}) on {}, {} SMs\n", task.name, task.path.string(), gpu.value("name", "?"),
                        gpu.value("sms", 0));
    if (ceilings) {
      text += fmt::format("ceilings{}: DRAM {}, fp16 {}, tf32 {}, fp32 {}\n", ceilings->from_cache ? " (cached)" : "",
                          human(ceilings->dram_bytes_per_s, "B/s"), human(ceilings->flopsFor("fp16"), "FLOP/s"),
                          human(ceilings->flopsFor("tf32"), "FLOP/s"), human(ceilings->flopsFor("fp32"), "FLOP/s"));
    } else if (out.contains("ceilings_note")) {
      text += "ceilings: " + out["ceilings_note"].get<std::string>() + "\n";
    }
  }

  const std::string module_name = "tfprofile_" + hashHex(task.source.string());
  nlohmann::json case_list = nlohmann::json::array();
  bool all_ok = true;
  for (size_t ci : cases) {
    RunRequest request = caseRunRequest(task, {task.source, module_name}, ci);
    RunRequest timed = request;
    timed.timing = TimingOptions{f.budget_ms, 20, 20000, true, "auto"};
    timed.asm_texts = {"ttgir", "ptx"};
    auto timeout = std::chrono::milliseconds(static_cast<int64_t>(f.run_timeout * 1000));
    CaseMeasurement m = client.run(timed, timeout);
    // The worker found the task file at odds with its harness (an in_place index that names
    // no input): bad input, not a failure of the kernel.
    if (m.task_error) throw UserError(fmt::format("{}: {}", task.path.string(), *m.task_error));
    nlohmann::json cj = {{"index", ci}, {"label", task.caseLabel(ci)}, {"case", task.cases[ci]}};
    nlohmann::json mj = m.toJson();
    mj.erase("kernels");
    cj.update(mj);
    std::vector<KernelReport> kernels = kernelReports(m.kernels);

    text += fmt::format("case {} {}: {}", ci, task.caseLabel(ci), toString(m.status));
    if (m.status != CandidateStatus::kOk) {
      all_ok = false;
      text += ": " + m.message + "\n";
      if (m.verify.failed_seed) text += fmt::format("  (seed {})\n", *m.verify.failed_seed);
    } else {
      text += fmt::format(", verified ({} seeds, max abs err {:.3g}, max rel err {:.3g})\n", task.check.seeds,
                          m.verify.max_abs_err, m.verify.max_rel_err);
    }

    // Roofline: the harness's work, under the ceiling of the kernels' compute class.
    std::optional<RooflinePoint> roof;
    if (m.timing) {
      const auto& t = *m.timing;
      text += fmt::format("  time {:.4f} ms median, IQR {:.4f} ms ({:.1f}% noise), {} reps, {}\n", t.median_ms,
                          t.q3_ms - t.q1_ms, 100 * t.noise(), t.reps, t.method);
      std::string cls = "fp32";
      for (const auto& k : kernels) {
        if (k.facts && computeClassOf(*k.facts) != "fp32") cls = computeClassOf(*k.facts);
      }
      std::optional<double> flops, bytes;
      if (m.work.contains("flops") && m.work["flops"].is_number()) flops = m.work["flops"].get<double>();
      if (m.work.contains("bytes") && m.work["bytes"].is_number()) bytes = m.work["bytes"].get<double>();
      if (ceilings) roof = rooflinePoint(flops, bytes, t.median_ms * 1e-3, *ceilings, cls);
      if (roof) {
        cj["roofline"] = roof->toJson();
        std::string achieved;
        if (roof->bytes > 0) achieved += human(roof->bytes / roof->seconds, "B/s");
        if (roof->flops > 0) achieved += (achieved.empty() ? "" : ", ") + human(roof->flops / roof->seconds, "FLOP/s");
        text += fmt::format("  roofline {:.1f}% ({} roof, {} ceiling; achieved {})\n", 100 * roof->fraction, roof->bound,
                            roof->bound == "memory" ? "DRAM" : roof->compute_class, achieved);
      } else if (ceilings) {
        text += "  roofline: the harness defines neither flops(case) nor bytes(case)\n";
      }
    }

    // Nsight Compute.
    NcuRunResult ncu;
    bool have_ncu = false;
    if (f.ncu && m.status == CandidateStatus::kOk) {
      nlohmann::json nj;
      if (!ncu_unavailable.empty()) {
        nj = {{"used", false}, {"reason", ncu_unavailable}};
      } else {
        std::vector<std::string> names;
        for (const auto& k : kernels) {
          std::string n = k.info.value("name", "");
          if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        }
        ncu = profileCaseWithNcu(ncu_options, worker.options(), request, names, work.path / fmt::format("case{}", ci));
        if (!ncu.unavailable.empty()) ncu_unavailable = ncu.unavailable;
        have_ncu = ncu.ok;
        nj = {{"used", ncu.ok}, {"seconds", ncu.seconds}, {"command", ncu.command}};
        if (!ncu.ok) nj["reason"] = !ncu.unavailable.empty() ? ncu.unavailable : ncu.error;
        if (work.keep) {
          nj["report"] = ncu.report.string();
          nj["csv"] = ncu.csv.string();
        }
        if (ncu.ok) nj["kernels_profiled"] = ncu.kernels.size();
      }
      cj["ncu"] = nj;
      if (nj.value("used", false)) {
        text += fmt::format("  ncu: {} launch(es) profiled in {:.1f} s{}\n", ncu.kernels.size(), ncu.seconds,
                            work.keep ? " (" + ncu.csv.string() + ")" : "");
      } else {
        text += "  ncu: not used: " + nj.value("reason", std::string("?")) + "\n";
      }
    }

    // Diagnosis per kernel.
    nlohmann::json kj = nlohmann::json::array();
    for (const auto& k : kernels) {
      DiagnosisInput in;
      in.kernel = k.info.value("name", "");
      in.static_facts = k.facts;
      in.launch = k.launch;
      in.gpu = limits;
      if (have_ncu) in.ncu = metricsFor(ncu.kernels, in.kernel);
      if (kernels.size() == 1) {
        in.roofline = roof;
        if (m.work.contains("bytes") && m.work["bytes"].is_number()) in.expected_bytes = m.work["bytes"].get<double>();
      }
      Diagnosis d = diagnose(in);
      if (kernels.size() > 1) d.notes.push_back("several kernels per call: the case's roofline is not split among them");
      if (have_ncu && !in.ncu) d.notes.push_back("ncu profiled no launch of this kernel");
      nlohmann::json one = k.info;
      if (k.facts) one["static"] = k.facts->toJson();
      one["diagnosis"] = d.toJson();
      kj.push_back(one);
      text += fmt::format("  kernel {}: {}\n", in.kernel, launchLine(k.info));
      text += formatDiagnosis(d, "    ");
    }
    cj["kernels"] = kj;
    case_list.push_back(cj);
  }
  out["cases"] = case_list;
  if (f.ncu) {
    ncu_info["available"] = ncu_unavailable.empty();
    if (!ncu_unavailable.empty()) ncu_info["reason"] = ncu_unavailable;
    out["ncu"] = ncu_info;
  }
  if (f.json) std::cout << out.dump(2) << std::endl;
  else std::fputs(text.c_str(), stdout);
  return all_ok ? 0 : 4;
}

}  // namespace

CommandRunner registerProfile(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kProfileRegistration("profile", 20, &registerProfile);

CommandRunner registerProfile(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<ProfileFlags>();
  CLI::App* sub = app.add_subcommand(
      "profile", "Measure a task's kernel as written: time, % of roofline, verification and diagnosis");
  sub->add_option("task", flags->task, "The task file (TOML)")->required();
  sub->add_flag("--ncu", flags->ncu, "Also profile each case under Nsight Compute (ncu) and diagnose from its counters");
  sub->add_flag("--json", flags->json, "JSON output (schema tritonforge.profile/1)");
  sub->add_option("--case", flags->cases, "Only this case (0-based; repeatable)");
  sub->add_option("--budget-ms", flags->budget_ms, "Time spent on timed repetitions per case (default 400)");
  sub->add_flag("--remeasure-ceilings", flags->remeasure_ceilings, "Measure the GPU's ceilings again (else cached)");
  sub->add_flag("--no-roofline", flags->no_roofline, "Skip the ceilings and the roofline");
  sub->add_option("--ncu-set", flags->ncu_set, "ncu section set (default full)");
  sub->add_option("--ncu-path", flags->ncu_path, "The ncu to run (default: $TRITONFORGE_NCU, else ncu on PATH)");
  sub->add_option("--ncu-timeout", flags->ncu_timeout, "Seconds one ncu run may take (default 300)");
  sub->add_option("--run-timeout", flags->run_timeout, "Seconds one case's verification and timing may take (default 180)");
  sub->add_option("--out", flags->out, "Keep ncu's reports and CSVs in this folder");
  return [flags, &global] { return runProfile(*flags, global); };
}

}  // namespace tf
