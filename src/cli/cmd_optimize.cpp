// tritonforge optimize TASK.toml [--budget S] [--out DIR] [--json] ...
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/progress.h"
#include "kernel/tunables.h"
#include "report/optimize_report.h"
#include "search/optimizer.h"
#include "search/strategy.h"
#include "task/task.h"
#include "task/task_sources.h"
#include "util/error.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

struct OptimizeFlags {
  std::string task;
  double budget = 60;
  std::string out = "tritonforge-out";
  bool json = false;
  std::string strategy = "auto";
  uint64_t seed = 0;
  int jobs = 0;
  int max_candidates = 0;
  bool keep_work = false;
  double compile_timeout = 180;
  double run_timeout = 120;
};

void printTunables(const TunableSet& t) {
  std::fprintf(stderr, "Tunables:\n");
  for (const auto& x : t.items) {
    std::string value = x.value ? std::to_string(*x.value) : x.expr_text;
    std::fprintf(stderr, "  %-32s %-18s %-10s %-12s %s\n", x.id.c_str(), toString(x.origin), toString(x.role),
                 value.c_str(), x.tunable ? "tuned" : ("left alone: " + x.note).c_str());
  }
  for (const auto& n : t.notes) std::fprintf(stderr, "  note: %s\n", n.c_str());
}

int runOptimize(const OptimizeFlags& f, const GlobalOptions& global) {
  if (!(f.budget > 0)) throw UserError(fmt::format("--budget must be a positive number of seconds, not {}", f.budget));
  Task task = loadTask(f.task);
  std::unique_ptr<TaskSources> sources;
  {
    WorkerOptions wo = workerOptionsFor(global, false);
    wo.name = "parse worker";
    WorkerProcess parser(wo);
    sources = loadTaskSources(task, parser);
  }
  TunableSet tunables = discoverTunables(sources->ir, task.launcher, task.kernels);
  if (tunables.sites.empty()) {
    throw UserError(fmt::format("{}: the launcher '{}' launches no @triton.jit kernel of this file",
                                task.source.string(), task.launcher));
  }
  if (!f.json) printTunables(tunables);

  OptimizeOptions options;
  options.budget_s = f.budget;
  options.compile_workers = f.jobs;
  options.strategy = f.strategy;
  checkStrategyName(options.strategy);  // rejects an unknown name before anything runs
  options.seed = f.seed;
  options.max_candidates = f.max_candidates;
  options.keep_work = f.keep_work;
  options.evaluator.worker = workerOptionsFor(global, true);
  options.evaluator.compile_timeout = std::chrono::milliseconds(static_cast<int64_t>(f.compile_timeout * 1000));
  options.evaluator.run_timeout = std::chrono::milliseconds(static_cast<int64_t>(f.run_timeout * 1000));

  auto progress = makeProgress(f.json, global.verbose);
  OptimizeResult result = optimize(task, *sources, tunables, options, *progress);
  nlohmann::json result_json;
  auto dir = writeOptimizeOutputs(task, tunables, result, options, f.out, &result_json);
  if (f.json) {
    std::cout << result_json.dump(2) << std::endl;
  } else {
    std::fputs(optimizeSummary(task, tunables, result, dir).c_str(), stdout);
  }
  return result.gpu ? 0 : 3;
}

}  // namespace

CommandRunner registerOptimize(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kOptimizeRegistration("optimize", 50, &registerOptimize);

CommandRunner registerOptimize(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<OptimizeFlags>();
  CLI::App* sub = app.add_subcommand("optimize", "Search for a faster verified version of a task's kernel(s)");
  sub->add_option("task", flags->task, "The task file (TOML)")->required();
  sub->add_option("--budget", flags->budget, "Wall-clock budget in seconds (default 60)");
  sub->add_option("--out", flags->out, "Output folder; results go to OUT/NAME/ (default tritonforge-out)");
  sub->add_flag("--json", flags->json, "Print only the result JSON on stdout");
  sub->add_option("--strategy", flags->strategy, "Search strategy: auto, prior-local, random, exhaustive");
  sub->add_option("--seed", flags->seed, "Seed for every random choice (default 0)");
  sub->add_option("--jobs", flags->jobs, "Compile workers (default: CPU cores - 2, at most 14)");
  sub->add_option("--max-candidates", flags->max_candidates, "Stop after this many candidates");
  sub->add_flag("--keep-work", flags->keep_work, "Keep the folder of candidate sources");
  sub->add_option("--compile-timeout", flags->compile_timeout, "Seconds one candidate may take to compile");
  sub->add_option("--run-timeout", flags->run_timeout, "Seconds one measurement may take");
  return [flags, &global] { return runOptimize(*flags, global); };
}

}  // namespace tf
