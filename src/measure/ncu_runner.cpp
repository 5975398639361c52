#include "measure/ncu_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "measure/ncu_csv.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

std::string lastLines(const std::string& text, size_t n) {
  size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n' || text[pos - 1] == ' ')) --pos;
  size_t end = pos;
  for (size_t i = 0; i < n && pos > 0; ++i) {
    size_t nl = text.rfind('\n', pos - 1);
    pos = nl == std::string::npos ? 0 : nl;
  }
  std::string out = text.substr(pos, end - pos);
  for (char& c : out) {
    if (c == '\n') c = ' ';
  }
  while (!out.empty() && out.front() == ' ') out.erase(0, 1);
  return out.size() > 600 ? out.substr(out.size() - 600) : out;
}

bool notPermitted(const std::string& text) {
  return text.find("ERR_NVGPUCTRPERM") != std::string::npos ||
         text.find("does not have permission to access NVIDIA GPU Performance Counters") != std::string::npos;
}

}  // namespace

std::string findNcu(const std::string& preferred) {
  if (!preferred.empty()) return programOnPath(preferred) ? preferred : "";
  if (const char* env = std::getenv("TRITONFORGE_NCU"); env && *env) return programOnPath(env) ? env : "";
  if (programOnPath("ncu")) return "ncu";
  for (const char* p : {"/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"}) {
    if (programOnPath(p)) return p;
  }
  return "";
}

std::string kernelNameFilter(const std::vector<std::string>& names) {
  std::string alt;
  for (const auto& n : names) {
    if (!alt.empty()) alt += "|";
    for (char c : n) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) alt.push_back('\\');
      alt.push_back(c);
    }
  }
  return "regex:^(" + alt + ")$";
}

NcuRunResult profileCaseWithNcu(const NcuOptions& options, const WorkerOptions& worker, const RunRequest& run_request,
                                const std::vector<std::string>& kernel_names, const fs::path& work_dir) {
  NcuRunResult r;
  std::string ncu = findNcu(options.ncu);
  if (ncu.empty()) {
    r.unavailable = options.ncu.empty()
                        ? "ncu (Nsight Compute) was not found: put it on PATH or set TRITONFORGE_NCU"
                        : fmt::format("ncu '{}' was not found or is not executable", options.ncu);
    return r;
  }
  fs::create_directories(work_dir);
  fs::path request = work_dir / "request.json";
  fs::path reply = work_dir / "reply.json";
  r.report = work_dir / "report.ncu-rep";
  r.csv = work_dir / "report.csv";
  writeFileAtomic(request, profileLaunchRequest(run_request, options.warmup).dump(2) + "\n");
  std::error_code ec;
  fs::remove(reply, ec);
  fs::remove(r.report, ec);

  SpawnOptions run;
  run.argv = {ncu, "--clock-control", "none", "--profile-from-start", "off", "--target-processes", "all"};
  if (!options.set.empty()) {
    run.argv.insert(run.argv.end(), {"--set", options.set});
  }
  for (const auto& s : options.sections) run.argv.insert(run.argv.end(), {"--section", s});
  if (!kernel_names.empty()) run.argv.insert(run.argv.end(), {"--kernel-name", kernelNameFilter(kernel_names)});
  run.argv.insert(run.argv.end(), {"--export", (work_dir / "report").string(), "--force-overwrite"});
  run.argv.push_back(worker.python);
  const std::vector<std::string> module = worker.module_args.empty()
                                              ? std::vector<std::string>{"-m", "tritonforge_worker"}
                                              : worker.module_args;
  run.argv.insert(run.argv.end(), module.begin(), module.end());
  run.argv.insert(run.argv.end(), {"--oneshot", request.string(), "--out", reply.string()});
  std::string pythonpath = worker.package_dir.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
  run.env_set["PYTHONPATH"] = pythonpath;
  run.env_set["PYTHONUNBUFFERED"] = "1";
  run.env_set["PYTHONDONTWRITEBYTECODE"] = "1";
  for (const auto& [k, v] : worker.env) run.env_set[k] = v;
  r.command = run.argv;

  auto t0 = std::chrono::steady_clock::now();
  CommandResult res = runCommand(run, options.timeout);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string output = res.out + "\n" + res.err;
  writeFileAtomic(work_dir / "ncu.log", output);
  if (notPermitted(output)) {
    r.unavailable = "ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): run as root or "
                    "allow profiling (NVreg_RestrictProfilingToAdminUsers=0)";
    return r;
  }
  if (res.timed_out) {
    r.error = fmt::format("ncu did not finish within {} s", options.timeout.count() / 1000);
    return r;
  }
  if (fs::exists(reply, ec)) {
    try {
      r.worker_reply = nlohmann::json::parse(readTextFile(reply, "one-shot reply"));
    } catch (const std::exception& e) {
      r.worker_reply = nullptr;
    }
  }
  if (r.worker_reply.is_object() && !r.worker_reply.value("ok", false)) {
    const auto& err = r.worker_reply.contains("error") ? r.worker_reply["error"] : nlohmann::json::object();
    r.error = fmt::format("the profiled run failed: {}: {}", err.value("type", "Error"), err.value("message", "?"));
    return r;
  }
  if (!fs::exists(r.report, ec)) {
    r.error = output.find("No kernels were profiled") != std::string::npos
                  ? fmt::format("ncu profiled no kernel (filter {})", kernel_names.empty() ? "none" : kernelNameFilter(kernel_names))
                  : fmt::format("ncu wrote no report ({}): {}", describeWaitStatus(res.status), lastLines(output, 3));
    return r;
  }

  SpawnOptions import;
  import.argv = {ncu, "--import", r.report.string(), "--csv", "--page", "raw"};
  CommandResult csv = runCommand(import, std::chrono::milliseconds(120000));
  if (!csv.ok()) {
    r.error = fmt::format("ncu --import failed ({}): {}", describeWaitStatus(csv.status), lastLines(csv.err + csv.out, 3));
    return r;
  }
  writeFileAtomic(r.csv, csv.out);
  try {
    r.kernels = kernelMetricsFromTable(parseNcuRawCsv(csv.out, r.csv.string()));
  } catch (const UserError& e) {
    r.error = e.what();
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace tf
