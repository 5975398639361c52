// tritonforge diagnose --ncu-csv FILE [--kernel NAME] [--asm FILE]... [--bytes N] [--sms N] [--json]
//
// Offline diagnosis of a file written by `ncu --import R.ncu-rep --csv --page raw` (any
// section set; --set full has everything). --asm adds static facts from compiled texts
// (.ttgir, .ptx, .sass) of the kernel; --bytes gives the fewest DRAM bytes it must move.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "diagnose/diagnose.h"
#include "diagnose/diagnosis_text.h"
#include "measure/ncu_csv.h"
#include "util/error.h"
#include "util/fs.h"

namespace tf {
namespace {

struct DiagnoseFlags {
  std::string csv;
  std::string kernel;
  std::vector<std::string> asm_files;
  double bytes = 0;
  int sms = 0;
  bool json = false;
};

CompiledTexts readTexts(const std::vector<std::string>& files) {
  CompiledTexts t;
  for (const auto& f : files) {
    std::filesystem::path p(f);
    std::string ext = p.extension().string();
    std::string text = readTextFile(p, "compiled text");
    if (ext == ".ttgir") t.ttgir += text;
    else if (ext == ".ptx") t.ptx += text;
    else if (ext == ".sass") t.sass += text;
    else throw UserError(fmt::format("{}: --asm takes .ttgir, .ptx or .sass files", f));
  }
  return t;
}

int runDiagnose(const DiagnoseFlags& f) {
  if (!(std::isfinite(f.bytes) && f.bytes >= 0)) {
    throw UserError(fmt::format("--bytes must be a finite number >= 0, not {}", f.bytes));
  }
  NcuTable table = readNcuRawCsv(f.csv);
  std::vector<KernelMetrics> kernels = kernelMetricsFromTable(table);
  if (!f.kernel.empty()) {
    std::vector<KernelMetrics> kept;
    std::string names;
    for (auto& k : kernels) {
      names += (names.empty() ? "" : ", ") + k.name;
      if (k.name == f.kernel || ncuBaseName(k.name) == f.kernel) kept.push_back(std::move(k));
    }
    if (kept.empty()) throw UserError(fmt::format("{}: no kernel named '{}' (it holds: {})", f.csv, f.kernel, names));
    kernels = std::move(kept);
  }
  std::optional<StaticFacts> facts;
  if (!f.asm_files.empty()) facts = staticFactsFromTexts(readTexts(f.asm_files));

  nlohmann::json out = {{"schema", "tritonforge.diagnose/1"}, {"source", f.csv}};
  nlohmann::json list = nlohmann::json::array();
  std::string text;
  for (const auto& k : kernels) {
    DiagnosisInput in;
    in.kernel = k.name;
    in.ncu = &k;
    in.static_facts = facts;
    if (f.bytes > 0) in.expected_bytes = f.bytes;
    if (f.sms > 0) {
      GpuLimits g;
      g.sms = f.sms;
      in.gpu = g;
    }
    Diagnosis d = diagnose(in);
    nlohmann::json j = d.toJson();
    j["id"] = k.id;
    if (facts) j["static"] = facts->toJson();
    list.push_back(j);
    text += fmt::format("kernel {} (ID {}, line {})\n", k.name, k.id, k.source_line);
    std::string figures;
    auto add = [&](const char* key, const std::string& label) {
      if (d.metrics.contains(key)) figures += fmt::format("{}{}{}", figures.empty() ? "" : ", ", label, d.metrics[key].dump());
    };
    if (d.metrics.contains("duration_us")) figures = fmt::format("{:.2f} us", d.metrics["duration_us"].get<double>());
    add("grid_blocks", "grid ");
    add("block_threads", "block ");
    add("registers", "registers ");
    add("waves", "waves ");
    if (!figures.empty()) text += "  " + figures + "\n";
    text += formatDiagnosis(d, "  ");
  }
  out["kernels"] = list;
  if (f.json) std::cout << out.dump(2) << std::endl;
  else std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

CommandRunner registerDiagnose(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kDiagnoseRegistration("diagnose", 30, &registerDiagnose);

CommandRunner registerDiagnose(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<DiagnoseFlags>();
  CLI::App* sub = app.add_subcommand("diagnose", "Bottleneck and findings from an exported Nsight Compute raw CSV");
  sub->add_option("--ncu-csv", flags->csv, "File written by `ncu --import R.ncu-rep --csv --page raw`")->required();
  sub->add_option("--kernel", flags->kernel, "Only the kernel of this name");
  sub->add_option("--asm", flags->asm_files, "Compiled texts of the kernel (.ttgir, .ptx, .sass) for static facts");
  sub->add_option("--bytes", flags->bytes, "Fewest DRAM bytes the kernel must move (judges L2 reuse)");
  sub->add_option("--sms", flags->sms, "SM count when the CSV lacks device attributes (default 132)");
  sub->add_flag("--json", flags->json, "JSON output (schema tritonforge.diagnose/1)");
  return [flags] { return runDiagnose(*flags); };
}

}  // namespace tf
