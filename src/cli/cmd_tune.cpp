// tritonforge tune --replay FILE.csv [--strategy S] [--max-evals N] [--budget S] [--seed K] [--batch B] [--json]
//
// Runs a search strategy against a recorded sweep instead of the GPU and prints the best
// configuration it found and how many evaluations it used.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "search/replay.h"
#include "search/strategy.h"
#include "util/error.h"

namespace tf {
namespace {

struct TuneFlags {
  std::string replay;
  std::string strategy = "auto";
  int max_evals = 0;
  uint64_t seed = 0;
  int batch = 8;
  int stall_rounds = 0;
  double within_roofline = -1;
  double budget = 0;
  double seconds_per_candidate = 0.5;
  bool json = false;
  bool show_order = false;
};

int runTune(const TuneFlags& f) {
  if (f.max_evals < 0) throw UserError(fmt::format("--max-evals must be 0 (no limit) or more, not {}", f.max_evals));
  if (f.batch < 1) throw UserError(fmt::format("--batch must be at least 1, not {}", f.batch));
  if (!(f.budget >= 0) || !std::isfinite(f.budget)) {
    throw UserError(fmt::format("--budget must be 0 (none) or a positive number of seconds, not {}", f.budget));
  }
  if (!(f.seconds_per_candidate > 0) || !std::isfinite(f.seconds_per_candidate)) {
    throw UserError(fmt::format("--seconds-per-candidate must be positive, not {}", f.seconds_per_candidate));
  }
  if (f.within_roofline != -1 && !(std::isfinite(f.within_roofline) && f.within_roofline >= 0)) {
    throw UserError(fmt::format("--within-roofline must be a percentage >= 0, not {}", f.within_roofline));
  }
  checkStrategyName(f.strategy);
  Sweep sweep = loadSweep(f.replay);
  ReplayOptions o;
  o.strategy = f.strategy;
  o.max_evals = f.max_evals;
  o.seed = f.seed;
  o.batch = f.batch;
  o.stall_rounds = f.stall_rounds;
  if (f.within_roofline >= 0) o.within_roofline_pct = f.within_roofline;
  if (f.budget > 0) o.budget_s = f.budget;
  o.seconds_per_candidate = f.seconds_per_candidate;
  ReplayResult r = replaySweep(sweep, o);
  if (f.json) {
    std::cout << r.toJson(sweep).dump(2) << std::endl;
    return 0;
  }
  std::printf("%s: %zu recorded configurations (%zu pass static pruning)\n", f.replay.c_str(), r.rows, r.reachable);
  std::printf("strategy %s (%s), seed %llu, batch %d\n", r.strategy.c_str(), r.strategy_why.c_str(),
              static_cast<unsigned long long>(f.seed), f.batch);
  if (f.show_order) {
    for (const auto& e : r.order) {
      std::string cfg;
      for (size_t i = 0; i < sweep.params.size(); ++i) {
        cfg += fmt::format("{}{}={}", i ? " " : "", sweep.params[i], sweep.rows[e.row][i]);
      }
      std::printf("  round %d: %s -> %s  [%s]\n", e.round, cfg.c_str(),
                  e.time_ms ? fmt::format("{:.4f} ms", *e.time_ms).c_str() : "failed", e.origin.c_str());
    }
  }
  if (!r.best_row) {
    std::printf("no configuration worked in %d evaluations\n", r.evaluations);
    return 0;
  }
  std::string cfg;
  for (size_t i = 0; i < sweep.params.size(); ++i) {
    cfg += fmt::format("{}{}={}", i ? " " : "", sweep.params[i], sweep.rows[*r.best_row][i]);
  }
  std::printf("best: %s  %.4f ms\n", cfg.c_str(), *r.best_time);
  std::printf("evaluations: %d (%.1f%% of the recorded configurations), %d rounds, stopped: %s\n", r.evaluations,
              100.0 * r.evaluations / static_cast<double>(r.rows), r.rounds, r.stop_reason.c_str());
  if (r.optimum) {
    std::printf("optimum recorded: %.4f ms; the best found is %.2f%% slower%s\n", *r.optimum,
                100.0 * (*r.best_time / *r.optimum - 1.0),
                r.evals_to_within_3pct ? fmt::format(" (within 3% after {} evaluations)", *r.evals_to_within_3pct).c_str()
                                       : "");
  }
  return 0;
}

}  // namespace

CommandRunner registerTune(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kTuneRegistration("tune", 60, &registerTune);

CommandRunner registerTune(CLI::App& app, const GlobalOptions&) {
  auto flags = std::make_shared<TuneFlags>();
  CLI::App* sub = app.add_subcommand("tune", "Run a search strategy against recorded measurements (no GPU)");
  sub->add_option("--replay", flags->replay, "A recorded sweep (CSV: one column per parameter and time_ms)")
      ->required();
  sub->add_option("--strategy", flags->strategy, "auto, bayes, local, random, exhaustive (default auto)");
  sub->add_option("--max-evals", flags->max_evals, "Stop after this many evaluations (default: no limit)");
  sub->add_option("--seed", flags->seed, "Seed for every random choice (default 0)");
  sub->add_option("--batch", flags->batch, "Configurations per round (default 8)");
  sub->add_option("--stall-rounds", flags->stall_rounds, "Stop after this many rounds without a gain (default: never)");
  sub->add_option("--budget", flags->budget,
                  "A budget in seconds, planned as optimize plans it, on a simulated clock (default: none)");
  sub->add_option("--seconds-per-candidate", flags->seconds_per_candidate,
                  "Simulated seconds each evaluation costs under --budget (default 0.5)");
  sub->add_option("--within-roofline", flags->within_roofline,
                  "Stop once within this % of the file's roofline_ms");
  sub->add_flag("--order", flags->show_order, "Print every evaluation in order");
  sub->add_flag("--json", flags->json, "Print the result as JSON");
  return [flags] { return runTune(*flags); };
}

}  // namespace tf
