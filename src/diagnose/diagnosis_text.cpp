#include "diagnose/diagnosis_text.h"

#include <fmt/format.h>

namespace tf {
namespace {

std::string bottleneckFigures(const Diagnosis& d) {
  const auto& e = d.bottleneck_evidence;
  auto get = [&](const char* k) -> double { return e.contains(k) && e[k].is_number() ? e[k].get<double>() : -1; };
  if (d.basis == "ncu") {
    std::string s = fmt::format("ncu: SM {:.0f}%, memory {:.0f}%", get("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                                get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"));
    if (double dram = get("dram__throughput.avg.pct_of_peak_sustained_elapsed"); dram >= 0) {
      s += fmt::format(", DRAM {:.0f}%", dram);
    }
    return s + " of peak";
  }
  if (d.basis == "roofline") {
    return fmt::format("roofline: memory {:.0f}%, compute {:.0f}% of the ceilings",
                       100 * get("roofline.memory_fraction"), 100 * get("roofline.compute_fraction"));
  }
  return "no throughput figures";
}

}  // namespace

std::string formatDiagnosis(const Diagnosis& d, const std::string& indent) {
  std::string out = fmt::format("{}bottleneck: {} ({})\n", indent, toString(d.bottleneck), bottleneckFigures(d));
  if (d.findings.empty()) out += indent + "no findings\n";
  for (const auto& f : d.findings) {
    std::string sugg;
    for (PassName s : f.suggestions) sugg += (sugg.empty() ? "" : ", ") + std::string(toString(s));
    out += fmt::format("{}[{:.2f}] {}: {}\n", indent, f.severity, toString(f.kind), f.summary);
    if (!sugg.empty()) out += fmt::format("{}       try: {}\n", indent, sugg);
  }
  for (const auto& n : d.notes) out += fmt::format("{}note: {}\n", indent, n);
  return out;
}

}  // namespace tf
