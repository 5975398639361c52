#include "search/evaluator.h"

#include <fmt/format.h>

#include <thread>

#include "measure/case_request.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/hash.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

CaseMeasurement stoppedAtDeadline() {
  CaseMeasurement m;
  m.status = CandidateStatus::kNotRun;
  m.message = "the budget ran out before it was measured";
  return m;
}

}  // namespace

Evaluator::Evaluator(const Task& task, EvaluatorOptions options, fs::path work_dir)
    : task_(task), options_(std::move(options)), work_dir_(std::move(work_dir)) {
  std::vector<std::string> devices = options_.gpus;
  if (devices.empty()) devices.push_back("");
  for (const auto& d : devices) {
    auto lane = std::make_unique<Lane>();
    lane->device = d;
    WorkerOptions w = options_.worker;
    w.name = d.empty() ? "measurement worker" : fmt::format("measurement worker of GPU {}", d);
    if (!d.empty()) {
      w.env["TRITONFORGE_LANE"] = d;
      if (options_.pin_lanes) w.env["CUDA_VISIBLE_DEVICES"] = d;
    }
    if (!options_.lane_module_args.empty()) w.module_args = options_.lane_module_args;
    for (const auto& [k, val] : options_.lane_env) w.env[k] = val;
    lane->worker = std::make_unique<WorkerProcess>(w);
    lane->client = std::make_unique<WorkerClient>(*lane->worker, options_.timeouts);
    lanes_.push_back(std::move(lane));
  }
}

Evaluator::~Evaluator() {
  // A shared pool outlives this run, and its queued jobs call compileOn on this evaluator:
  // with every deadline passed they return at once, and they are waited for before it goes.
  if (options_.shared_pool) {
    setDeadlines(Clock::now(), Clock::now());
    for (auto& [hash, f] : compiles_) {
      if (f.valid()) f.wait();
    }
    for (auto& f : ahead_) {
      if (f.valid()) f.wait();
    }
  }
  pool_.reset();
  for (auto& lane : lanes_) lane->worker->shutdown();
}

const nlohmann::json& Evaluator::start() {
  auto started = Clock::now();
  std::vector<WorkerReply> replies(lanes_.size());
  std::vector<std::thread> threads;
  for (size_t i = 1; i < lanes_.size(); ++i) {
    threads.emplace_back([this, &replies, i] { replies[i] = lanes_[i]->worker->ensureStarted(); });
  }
  replies[0] = lanes_[0]->worker->ensureStarted();
  worker_start_s_ = std::chrono::duration<double>(Clock::now() - started).count();
  for (auto& t : threads) t.join();
  const WorkerReply& r = replies[0];
  if (!r.ok()) {
    throw EnvironmentError(fmt::format("{}{}", r.message, r.detail.empty() ? "" : " (" + r.detail + ")"));
  }
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (replies[i].ok()) {
      lanes_[i]->hello = lanes_[i]->worker->helloInfo();
      if (i > 0 && !(lanes_[i]->hello.contains("gpu") && lanes_[i]->hello["gpu"].is_object())) {
        dropLane(static_cast<int>(i), "its worker sees no GPU");
      }
    } else {
      dropLane(static_cast<int>(i), "its worker did not start: " + replies[i].message);
    }
  }
  hello_ = lanes_[0]->hello;
  return hello_;
}

bool Evaluator::freshWorker(int lane) {
  Lane& l = *lanes_[static_cast<size_t>(lane)];
  l.worker->shutdown();
  return l.worker->ensureStarted().ok();
}

bool Evaluator::laneAlive(int lane) const {
  std::lock_guard<std::mutex> lock(lanes_mu_);
  return lane >= 0 && lane < lanes() && lanes_[static_cast<size_t>(lane)]->alive;
}

void Evaluator::dropLane(int lane, const std::string& why) {
  std::lock_guard<std::mutex> lock(lanes_mu_);
  auto& l = *lanes_[static_cast<size_t>(lane)];
  if (!l.alive) return;
  l.alive = false;
  lane_notes_.push_back(fmt::format("{} was dropped: {}", laneLabel(lane), why));
}

int Evaluator::aliveLanes() const {
  std::lock_guard<std::mutex> lock(lanes_mu_);
  int n = 0;
  for (const auto& l : lanes_) n += l->alive ? 1 : 0;
  return n;
}

int Evaluator::firstAliveLane() const {
  std::lock_guard<std::mutex> lock(lanes_mu_);
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i]->alive) return static_cast<int>(i);
  }
  return -1;
}

std::string Evaluator::laneLabel(int lane) const {
  const std::string& d = lanes_[static_cast<size_t>(lane)]->device;
  return d.empty() ? std::string("the GPU") : fmt::format("GPU {}", d);
}

bool Evaluator::hasGpu() const { return hello_.contains("gpu") && hello_["gpu"].is_object(); }

std::string Evaluator::noGpuReason() const {
  if (hasGpu()) return "";
  std::string why = hello_.contains("gpu_reason") && hello_["gpu_reason"].is_string()
                        ? hello_["gpu_reason"].get<std::string>()
                        : std::string();
  return why.empty() ? "no CUDA GPU is visible" : why;
}

int Evaluator::startCompilePool(int n, const std::optional<Variant>& preload) {
  if (options_.shared_pool) {
    // Started by the command, for every run; a preload there would race other runs' jobs.
    pool_ = options_.shared_pool;
    return pool_->size();
  }
  if (n <= 0) return 0;
  WorkerOptions w = compileWorkerOptions(options_.worker);
  auto limit = timeLeft(compile_deadline_, w.start_timeout);
  if (!limit) return 0;
  w.start_timeout = *limit;
  auto pool = std::make_unique<WorkerPool>(w, n);
  std::vector<WorkerReply> started = pool->startAll();
  int ok = 0;
  for (const auto& r : started) ok += r.ok() ? 1 : 0;
  if (ok == 0) return 0;
  if (preload) {
    // Before the pool takes jobs: a worker is used by one thread at a time.
    // Imports only: making inputs would put work on the GPU while the baseline is timed.
    WarmRequest req;
    req.launch = launchOf(*preload);
    std::vector<std::thread> threads;
    for (int i = 0; i < pool->size(); ++i) {
      if (!started[static_cast<size_t>(i)].ok()) continue;
      threads.emplace_back([this, &pool, &req, i] {
        if (auto left = timeLeft(compile_deadline_, options_.timeouts.warm)) {
          WorkerClient(pool->worker(i), options_.timeouts).preload(req, *left);
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  pool_ = std::move(pool);
  return ok;
}

void Evaluator::stopCompiles() {
  {
    std::lock_guard<std::mutex> lock(deadline_mu_);
    compile_deadline_ = Clock::now();
  }
  if (!options_.shared_pool) pool_.reset();
}

void Evaluator::warmCasesAhead(const Variant& v, int autotune_shares) {
  if (!pool_) return;
  // Without shares, case 0 is compiled by the measurement worker as it runs the launcher.
  const bool shared = autotune_shares > 1;
  const int n = shared ? autotune_shares : 1;
  for (size_t i = shared ? 0 : 1; i < task_.cases.size(); ++i) {
    for (int s = 0; s < n; ++s) {
      std::optional<std::pair<int, int>> part;
      if (shared) part = std::make_pair(s, n);
      auto job = pool_->submit([this, v, i, part](WorkerProcess& w) { return compileOn(w, v, {task_.cases[i]}, part); })
                     .share();
      ahead_.push_back(job);
      if (i == 0) first_case_ahead_.push_back(job);
    }
  }
}

bool Evaluator::awaitFirstCaseAhead(Clock::time_point until) {
  for (auto& job : first_case_ahead_) {
    if (job.wait_until(until) != std::future_status::ready) return false;
  }
  return true;
}

void Evaluator::setDeadlines(std::optional<Clock::time_point> compile, std::optional<Clock::time_point> run) {
  std::lock_guard<std::mutex> lock(deadline_mu_);
  compile_deadline_ = compile;
  run_deadline_ = run;
}

void Evaluator::setCompileLimit(std::optional<std::chrono::milliseconds> limit) {
  std::lock_guard<std::mutex> lock(deadline_mu_);
  compile_limit_ = limit;
}

std::optional<std::chrono::milliseconds> Evaluator::timeLeft(const std::optional<Clock::time_point>& deadline,
                                                             std::chrono::milliseconds limit) const {
  std::lock_guard<std::mutex> lock(deadline_mu_);
  if (!deadline) return limit;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
  if (left.count() <= 0) return std::nullopt;
  return std::min(limit, left);
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

LaunchSpec Evaluator::launchOf(const Variant& v) const {
  return caseRunRequest(task_, {v.path, v.module_name}, 0).launch;
}

RunRequest Evaluator::runRequest(const Variant& v, size_t case_index) const {
  return caseRunRequest(task_, {v.path, v.module_name}, case_index);
}

CompileOutcome Evaluator::compileOn(WorkerProcess& w, const Variant& v, std::vector<nlohmann::json> cases,
                                    std::optional<std::pair<int, int>> autotune_part) {
  std::optional<std::chrono::milliseconds> adaptive;
  {
    std::lock_guard<std::mutex> lock(deadline_mu_);
    adaptive = compile_limit_;
  }
  const auto own = adaptive ? std::min(*adaptive, options_.timeouts.warm) : options_.timeouts.warm;
  auto limit = timeLeft(compile_deadline_, own);
  if (!limit) {
    CompileOutcome out;
    out.status = CandidateStatus::kNotRun;
    out.message = "the budget ran out before it was compiled";
    return out;
  }
  WarmRequest req;
  req.launch = launchOf(v);
  req.cases = cases.empty() ? task_.cases : std::move(cases);
  req.autotune_part = autotune_part;
  // Most of the limit: a compile that waited for memory still has time to compile.
  req.memory_wait_s = 0.6 * static_cast<double>(limit->count()) / 1000.0;
  CompileOutcome out = WorkerClient(w, options_.timeouts).warm(req, *limit);
  // Stopped by the deadline, not by its own slowness: not the variant's failure.
  if (out.status == CandidateStatus::kTimeout && *limit < own) {
    out.status = CandidateStatus::kNotRun;
    out.message = "the budget ran out while it compiled";
  } else if (out.status == CandidateStatus::kTimeout && adaptive && own < options_.timeouts.warm) {
    out.message = fmt::format("compiling took longer than {:.0f} s, 3x the median compile of this run",
                              own.count() / 1000.0);
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
    p.set_value(compileOn(mainWorker(), v));
    f = p.get_future().share();
  }
  compiles_[v.hash] = f;
  return f;
}

CaseMeasurement Evaluator::measure(const Variant& v, size_t case_index, const TimingOptions& timing, int lane) {
  auto limit = timeLeft(run_deadline_, options_.timeouts.run);
  if (!limit) return stoppedAtDeadline();
  RunRequest req = runRequest(v, case_index);
  req.timing = timing;
  CaseMeasurement m = lanes_[static_cast<size_t>(lane)]->client->run(req, *limit);
  if (m.status == CandidateStatus::kTimeout && *limit < options_.timeouts.run) return stoppedAtDeadline();
  return m;
}

CaseMeasurement Evaluator::verifyShape(const Variant& v, const nlohmann::json& case_values, int lane) {
  auto limit = timeLeft(run_deadline_, options_.timeouts.run);
  if (!limit) return stoppedAtDeadline();
  RunRequest req = runRequest(v, 0);
  req.case_values = case_values;
  req.timing.reset();
  CaseMeasurement m = lanes_[static_cast<size_t>(lane)]->client->run(req, *limit);
  if (m.status == CandidateStatus::kTimeout && *limit < options_.timeouts.run) return stoppedAtDeadline();
  return m;
}

CaseMeasurement Evaluator::inspect(const Variant& v, size_t case_index, bool timeline) {
  auto limit = timeLeft(run_deadline_, options_.timeouts.run);
  if (!limit) return stoppedAtDeadline();
  RunRequest req = runRequest(v, case_index);
  req.seeds = {0};
  req.timing.reset();
  req.asm_texts = {"ttgir", "ptx"};
  req.timeline = timeline;
  return client().run(req, *limit);
}

}  // namespace tf
