#include "search/loop_diagnosis.h"

#include <fmt/format.h>

#include "diagnose/diagnose.h"
#include "diagnose/static_facts.h"
#include "diagnose/occupancy.h"

namespace tf {
namespace {

std::optional<double> numberAt(const nlohmann::json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

std::optional<StaticFacts> factsOf(const nlohmann::json& kernel) {
  if (!kernel.contains("asm")) return std::nullopt;
  CompiledTexts t = CompiledTexts::fromJson(kernel["asm"]);
  if (t.empty()) return std::nullopt;
  return staticFactsFromTexts(t);
}

}  // namespace

EngineDiagnosis toEngineDiagnosis(const Diagnosis& d) {
  EngineDiagnosis e;
  e.kernel = d.kernel;
  e.bottleneck = d.bottleneck;
  for (const auto& f : d.findings) {
    EngineFinding ef;
    ef.kind = f.kind;
    ef.kernel = d.kernel;
    ef.severity = f.severity;
    ef.source = "diagnosis";
    ef.summary = f.summary;
    ef.limiter = f.limiter;
    ef.evidence = f.evidence;
    if (!f.detail.empty()) ef.evidence["detail"] = f.detail;
    ef.suggestions = f.suggestions;
    e.findings.push_back(std::move(ef));
  }
  return e;
}

std::string computeClassOfKernels(const CaseMeasurement& inspected) {
  std::string cls = "fp32";
  for (const auto& k : inspected.kernels) {
    if (auto f = factsOf(k)) {
      std::string c = computeClassOf(*f);
      if (c != "fp32") cls = c;
    }
  }
  return cls;
}

std::optional<double> rooflineTimeMs(const nlohmann::json& work, const Ceilings& ceilings,
                                     const std::string& compute_class) {
  auto flops = numberAt(work, "flops");
  auto bytes = numberAt(work, "bytes");
  double t = 0;
  if (bytes && ceilings.dram_bytes_per_s > 0) t = std::max(t, *bytes / ceilings.dram_bytes_per_s);
  double peak = ceilings.flopsFor(compute_class);
  if (flops && peak > 0) t = std::max(t, *flops / peak);
  if (t <= 0) return std::nullopt;
  return t * 1e3;
}

std::vector<EngineDiagnosis> diagnoseForEngine(const CaseMeasurement& inspected, const CaseMeasurement& timed,
                                               const std::optional<Ceilings>& ceilings, const nlohmann::json& gpu) {
  std::vector<EngineDiagnosis> out;
  std::optional<RooflinePoint> roof;
  if (ceilings && timed.timing) {
    auto flops = numberAt(timed.work, "flops");
    auto bytes = numberAt(timed.work, "bytes");
    roof = rooflinePoint(flops, bytes, timed.timing->median_ms * 1e-3, *ceilings, computeClassOfKernels(inspected));
  }
  GpuLimits limits = GpuLimits::fromHello(gpu);
  for (const auto& k : inspected.kernels) {
    DiagnosisInput in;
    in.kernel = k.value("name", "");
    in.static_facts = factsOf(k);
    in.launch = LaunchFacts::fromKernelJson(k);
    in.gpu = limits;
    // The case's roofline belongs to the call; with one kernel it is that kernel's.
    if (inspected.kernels.size() == 1) {
      in.roofline = roof;
      if (auto b = numberAt(timed.work, "bytes")) in.expected_bytes = *b;
    }
    EngineDiagnosis e = toEngineDiagnosis(diagnose(in));
    out.push_back(std::move(e));
  }
  if (auto glue = launcherGlueFinding(inspected.timeline); glue && !out.empty()) {
    glue->kernel = out.front().kernel;
    out.front().findings.push_back(std::move(*glue));
  }
  return out;
}

std::optional<EngineFinding> launcherGlueFinding(const nlohmann::json& timeline) {
  if (!timeline.is_object()) return std::nullopt;
  double gpu = numberAt(timeline, "gpu_ms").value_or(0);
  double outside = numberAt(timeline, "other_ms").value_or(0) + numberAt(timeline, "copy_ms").value_or(0);
  int syncs = static_cast<int>(numberAt(timeline, "host_syncs").value_or(0));
  double share = gpu > 0 ? outside / gpu : 0;
  if (share < kGlueShare && syncs == 0) return std::nullopt;
  EngineFinding f;
  f.kind = FindingKind::kLauncherGlue;
  f.source = "measurement";
  f.severity = std::min(1.0, std::max(share, syncs > 0 ? 0.5 : 0.0));
  std::string top;
  if (timeline.contains("outside") && timeline["outside"].is_array()) {
    for (const auto& o : timeline["outside"]) {
      if (top.size() > 160) break;
      top += fmt::format("{}{} {:.3f} ms", top.empty() ? "" : ", ", o.value("name", "?"), o.value("ms", 0.0));
    }
  }
  f.summary = fmt::format("{:.0f}% of the launcher's GPU time ({:.3f} of {:.3f} ms) is outside its Triton kernels{}{}",
                          100 * share, outside, gpu, top.empty() ? "" : ": " + top,
                          syncs > 0 ? fmt::format("; the host waits for the GPU {} time(s)", syncs) : "");
  f.evidence = {{"gpu_ms", gpu}, {"outside_ms", outside}, {"share", share}, {"host_syncs", syncs},
                {"outside", timeline.value("outside", nlohmann::json::array())}};
  return f;
}

}  // namespace tf
