#include "capture/capture_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/error.h"
#include "util/fs.h"

namespace fs = std::filesystem;

namespace tf {
namespace {

std::string stringOr(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double numberOr(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::vector<std::string> stringsOf(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

void mergeKernel(CapturedKernel& k, const nlohmann::json& j) {
  k.launches += static_cast<int64_t>(numberOr(j, "launches"));
  k.bench_launches += static_cast<int64_t>(numberOr(j, "bench_launches"));
  k.time_ms += numberOr(j, "time_ms");
  k.processes += 1;
  if (auto via = j.find("via"); via != j.end() && via->is_array()) {
    for (const auto& v : *via) {
      if (v.is_string() && std::find(k.via.begin(), k.via.end(), v.get<std::string>()) == k.via.end()) {
        k.via.push_back(v.get<std::string>());
      }
    }
  }
  if (auto sigs = j.find("signatures"); sigs != j.end() && sigs->is_array()) {
    for (const auto& s : *sigs) {
      k.graph_capture_launches += static_cast<int64_t>(numberOr(s, "in_graph_capture"));
      k.signatures.push_back(s);
    }
  }
  if (auto other = j.find("other_signatures"); other != j.end() && other->is_object()) {
    k.other_signature_launches += static_cast<int64_t>(numberOr(*other, "launches"));
  }
}

void readProcess(const fs::path& file, std::map<std::string, CapturedKernel>& kernels, CaptureSummary& out) {
  nlohmann::json j = nlohmann::json::parse(readTextFile(file, "capture record"), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("kernels") || !j["kernels"].is_array()) {
    throw UserError(fmt::format("{}: not a capture record (a JSON object with 'kernels')", file.string()));
  }
  out.processes += 1;
  out.saved_bytes += static_cast<int64_t>(numberOr(j, "saved_bytes"));
  std::string timing = stringOr(j, "timing");
  // The least exact timing of the processes names the record's.
  auto rank = [](const std::string& t) { return t == "wall" ? 0 : t == "cuda-events" ? 1 : t == "torch.profiler" ? 2 : 3; };
  if (!timing.empty() && (out.timing.empty() || rank(timing) < rank(out.timing))) out.timing = timing;
  out.gpu_total_ms += numberOr(j, "gpu_total_ms");
  if (j.contains("versions") && j["versions"].is_object()) out.versions.update(j["versions"]);
  if (auto errors = j.find("errors"); errors != j.end() && errors->is_array()) {
    for (const auto& e : *errors) {
      if (e.is_string()) out.errors.push_back(fmt::format("process {}: {}", file.stem().string(), e.get<std::string>()));
    }
  }
  for (const auto& kj : j["kernels"]) {
    if (!kj.is_object()) continue;
    int line = static_cast<int>(numberOr(kj, "line"));
    std::string key = fmt::format("{}:{}:{}", stringOr(kj, "file"), line, stringOr(kj, "name"));
    CapturedKernel& k = kernels[key];
    if (k.processes == 0) {
      k.name = stringOr(kj, "name");
      k.module = stringOr(kj, "module");
      k.file = stringOr(kj, "file");
      k.file_sha256 = stringOr(kj, "file_sha256");
      k.line = line;
      k.tunable = kj.value("tunable", false);
      k.why_not = stringOr(kj, "why_not");
      k.arg_names = stringsOf(kj, "arg_names");
      k.constexprs = stringsOf(kj, "constexprs");
    }
    mergeKernel(k, kj);
  }
  if (auto outside = j.find("outside"); outside != j.end() && outside->is_array()) {
    for (const auto& oj : *outside) {
      if (!oj.is_object()) continue;
      CapturedKernel& k = kernels["<outside>:" + stringOr(oj, "name")];
      if (k.processes == 0) {
        k.name = stringOr(oj, "name");
        k.why_not = stringOr(oj, "why_not");
        k.outside_jit = true;
      }
      k.launches += static_cast<int64_t>(numberOr(oj, "launches"));
      k.time_ms += numberOr(oj, "time_ms");
      k.processes += 1;
    }
  }
}

std::string shortPath(const std::string& path) {
  // site-packages/liger_kernel/ops/rms_norm.py reads better than the whole prefix.
  for (const char* marker : {"site-packages/", "dist-packages/"}) {
    auto at = path.rfind(marker);
    if (at != std::string::npos) return path.substr(at + std::string(marker).size());
  }
  return path;
}

std::string tunableText(const CapturedKernel& k) {
  if (k.graph_capture_launches > 0 && k.graph_capture_launches == k.launches) {
    return "no: launched inside CUDA-graph capture (its replays are not seen)";
  }
  if (!k.tunable || k.outside_jit) return "no: " + (k.why_not.empty() ? std::string("unknown") : k.why_not);
  return "yes";
}

}  // namespace

double CaptureSummary::total_ms() const {
  double total = 0;
  for (const auto& k : kernels) total += k.time_ms;
  return total;
}

CaptureSummary readCapture(const fs::path& dir) {
  fs::path folder = dir / "launches";
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw UserError(fmt::format("{}: no capture record here (no launches/ folder): the program launched no Triton "
                                "kernel, or never imported triton",
                                dir.string()));
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  CaptureSummary out;
  std::map<std::string, CapturedKernel> kernels;
  for (const auto& file : files) readProcess(file, kernels, out);
  for (auto& [key, k] : kernels) out.kernels.push_back(std::move(k));
  std::stable_sort(out.kernels.begin(), out.kernels.end(), [](const CapturedKernel& a, const CapturedKernel& b) {
    return a.time_ms != b.time_ms ? a.time_ms > b.time_ms : a.launches > b.launches;
  });
  return out;
}

std::string captureTable(const CaptureSummary& s, size_t top) {
  // The share is of every GPU kernel's time when torch.profiler measured it, else of the
  // recorded Triton kernels' time.
  const double total = s.gpu_total_ms > 0 ? s.gpu_total_ms : s.total_ms();
  const char* unit = s.timing == "wall" ? "wall ms" : "GPU ms";
  std::string out = fmt::format("{:>3}  {:<36} {:>9} {:>6} {:>10} {:>6} {:>9}  {}\n", "#", "kernel", "launches", "shapes",
                                unit, "share", "us/launch", "tunable");
  size_t shown = 0;
  for (const auto& k : s.kernels) {
    if (top && shown == top) break;
    ++shown;
    double share = total > 0 ? 100.0 * k.time_ms / total : 0.0;
    double per = k.launches ? 1e3 * k.time_ms / static_cast<double>(k.launches) : 0.0;
    out += fmt::format("{:>3}  {:<36} {:>9} {:>6} {:>10.3f} {:>5.1f}% {:>9.1f}  {}\n", shown, k.name, k.launches,
                       k.outside_jit ? std::string("-") : std::to_string(k.signatures.size()), k.time_ms, share, per,
                       tunableText(k));
    if (!k.file.empty()) out += fmt::format("     {}:{}\n", shortPath(k.file), k.line);
  }
  if (shown < s.kernels.size()) {
    double rest = 0;
    for (size_t i = shown; i < s.kernels.size(); ++i) rest += s.kernels[i].time_ms;
    out += fmt::format("     ({} more kernels, {:.3f} ms)\n", s.kernels.size() - shown, rest);
  }
  out += fmt::format("total: {} kernels, {:.3f} {} over {} process(es){}\n", s.kernels.size(), s.total_ms(), unit,
                     s.processes, s.timing == "wall" ? " (interpreted: wall time, not GPU time)" : "");
  if (s.gpu_total_ms > 0) {
    out += fmt::format("the program's GPU kernel time (torch.profiler, copies left out): {:.3f} ms, {:.1f}% of it in "
                       "these Triton kernels; share is of it\n", s.gpu_total_ms, 100.0 * s.total_ms() / s.gpu_total_ms);
  }
  return out;
}

nlohmann::json captureSummaryJson(const CaptureSummary& s) {
  nlohmann::json kernels = nlohmann::json::array();
  const double total = s.gpu_total_ms > 0 ? s.gpu_total_ms : s.total_ms();
  for (const auto& k : s.kernels) {
    const std::string tunable = tunableText(k);
    kernels.push_back({{"name", k.name}, {"module", k.module}, {"file", k.file}, {"line", k.line},
                       {"tunable", tunable == "yes"}, {"why_not", tunable == "yes" ? "" : tunable.substr(4)},
                       {"via", k.via}, {"launches", k.launches}, {"bench_launches", k.bench_launches},
                       {"time_ms", k.time_ms}, {"share", total > 0 ? k.time_ms / total : 0.0},
                       {"signatures", k.signatures.size()}, {"other_signature_launches", k.other_signature_launches},
                       {"graph_capture_launches", k.graph_capture_launches}, {"processes", k.processes}});
  }
  return {{"timing", s.timing}, {"processes", s.processes}, {"total_ms", s.total_ms()},
          {"gpu_total_ms", s.gpu_total_ms > 0 ? nlohmann::json(s.gpu_total_ms) : nlohmann::json()},
          {"saved_bytes", s.saved_bytes},
          {"versions", s.versions}, {"errors", s.errors}, {"kernels", kernels}};
}

}  // namespace tf
