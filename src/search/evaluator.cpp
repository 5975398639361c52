#include "search/evaluator.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/fs.h"
#include "util/hash.h"

namespace tf {
namespace fs = std::filesystem;

nlohmann::json CompileOutcome::toJson() const {
  nlohmann::json j = {{"status", toString(status)}, {"seconds", seconds}};
  if (!message.empty()) j["message"] = message;
  if (!detail.empty()) j["detail"] = detail;
  if (!kernels.empty()) j["kernels"] = kernels;
  return j;
}

Evaluator::Evaluator(const Task& task, EvaluatorOptions options, fs::path work_dir)
    : task_(task), options_(std::move(options)), work_dir_(std::move(work_dir)) {
  WorkerOptions w = options_.worker;
  w.name = "measurement worker";
  main_ = std::make_unique<WorkerProcess>(w);
}

Evaluator::~Evaluator() {
  pool_.reset();
  if (main_) main_->shutdown();
}

const nlohmann::json& Evaluator::start() {
  WorkerReply r = main_->ensureStarted();
  if (!r.ok()) {
    throw EnvironmentError(fmt::format("{}{}", r.message, r.detail.empty() ? "" : " (" + r.detail + ")"));
  }
  hello_ = main_->helloInfo();
  return hello_;
}

bool Evaluator::hasGpu() const { return hello_.contains("gpu") && hello_["gpu"].is_object(); }

std::string Evaluator::noGpuReason() const {
  if (hasGpu()) return "";
  std::string why = hello_.value("gpu_reason", std::string());
  return why.empty() ? "no CUDA GPU is visible" : why;
}

int Evaluator::startCompilePool(int n) {
  if (n <= 0) return 0;
  WorkerOptions w = options_.worker;
  w.name = "compile worker";
  pool_ = std::make_unique<WorkerPool>(w, n);
  int ok = 0;
  for (const auto& r : pool_->startAll()) ok += r.ok() ? 1 : 0;
  if (ok == 0) pool_.reset();
  return ok;
}

Variant Evaluator::materialize(const std::string& source) {
  std::string h = hashHex(source);
  auto it = variants_.find(h);
  if (it != variants_.end()) return it->second;
  Variant v;
  v.hash = h;
  v.path = work_dir_ / ("v" + h) / task_.source.filename();
  v.module_name = "tfv_" + h;
  writeFileAtomic(v.path, source);
  variants_[h] = v;
  return v;
}

nlohmann::json Evaluator::baseArgs(const Variant& v) const {
  return {{"variant", {{"path", v.path.string()}, {"module_name", v.module_name}}},
          {"launcher", task_.launcher},
          {"harness", task_.harness.string()},
          {"search_path", {task_.source.parent_path().string(), task_.harness.parent_path().string()}}};
}

nlohmann::json Evaluator::checkArgs() const {
  nlohmann::json c = {{"reference_precision", task_.check.reference_precision}, {"in_place", task_.check.in_place}};
  if (task_.check.rtol) c["rtol"] = *task_.check.rtol;
  if (task_.check.atol) c["atol"] = *task_.check.atol;
  return c;
}

CompileOutcome Evaluator::compileOn(WorkerProcess& w, const Variant& v) {
  nlohmann::json args = baseArgs(v);
  args["cases"] = task_.cases;
  WorkerReply r = w.call("warm", args, options_.compile_timeout);
  CompileOutcome out;
  out.seconds = r.seconds;
  CaseMeasurement m = measurementFromReply(r);
  out.status = m.status;
  out.message = m.message;
  out.detail = m.detail;
  if (r.ok()) {
    out.status = candidateStatusFromString(r.result.value("status", "runtime-error"));
    out.message = r.result.value("message", std::string());
    if (r.result.contains("kernels")) out.kernels = r.result["kernels"];
  }
  if (out.status == CandidateStatus::kTimeout) {
    out.message = fmt::format("compiling took longer than {} s", options_.compile_timeout.count() / 1000);
  }
  return out;
}

std::shared_future<CompileOutcome> Evaluator::compileAsync(const Variant& v) {
  auto it = compiles_.find(v.hash);
  if (it != compiles_.end()) return it->second;
  std::shared_future<CompileOutcome> f;
  if (pool_) {
    f = pool_->submit([this, v](WorkerProcess& w) { return compileOn(w, v); }).share();
  } else {
    std::promise<CompileOutcome> p;
    p.set_value(compileOn(*main_, v));
    f = p.get_future().share();
  }
  compiles_[v.hash] = f;
  return f;
}

CaseMeasurement Evaluator::measure(const Variant& v, size_t case_index, const TimingOptions& timing) {
  nlohmann::json args = baseArgs(v);
  args["case"] = task_.cases.at(case_index);
  nlohmann::json seeds = nlohmann::json::array();
  for (int s = 0; s < task_.check.seeds; ++s) seeds.push_back(s);
  args["seeds"] = seeds;
  args["check"] = checkArgs();
  args["timing"] = {{"budget_ms", timing.budget_ms}, {"min_reps", timing.min_reps}, {"max_reps", timing.max_reps},
                    {"flush", timing.flush_l2},      {"method", timing.method}};
  WorkerReply r = main_->call("run", args, options_.run_timeout);
  CaseMeasurement m = measurementFromReply(r);
  // Only a timeout of the request itself: the worker's own hang watchdog says what it saw.
  if (r.status == WorkerReply::Status::kTimeout) {
    m.message = fmt::format("no result within {} s (a hang?); the worker was replaced",
                            options_.run_timeout.count() / 1000);
  }
  return m;
}

CaseMeasurement Evaluator::inspect(const Variant& v, size_t case_index) {
  nlohmann::json args = baseArgs(v);
  args["case"] = task_.cases.at(case_index);
  args["seeds"] = {0};
  args["check"] = checkArgs();
  args["timing"] = {{"enabled", false}};
  args["asm"] = {"ttgir", "ptx"};
  return measurementFromReply(main_->call("run", args, options_.run_timeout));
}

}  // namespace tf
