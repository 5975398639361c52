// The replay benchmark: on every recorded sweep in tests/data/sweeps/ (of 50 or more
// configurations), the default strategy must come within 3% of the sweep's optimum using
// at most 10% of its configurations in at least 9 of 10 seeds. Random search runs alongside for comparison
// (the issue expects it to manage about half). Prints a table; docs/search.md keeps the
// figures.
//
// Sweeps named synthetic_* come from scripts/make_synthetic_sweeps.py (a model, not a
// measurement); scripts/gpu/record_sweeps.sh records real ones on the H200.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "search/replay.h"
#include "support/test_support.h"

namespace tf {
namespace {

struct BenchRow {
  std::string strategy;
  int within = 0;
  int seeds = 0;
  double mean_gap = 0;
  double mean_evals_to_3pct = 0;
};

BenchRow bench(const Sweep& s, const std::string& strategy, int budget, int batch) {
  BenchRow row;
  row.strategy = strategy;
  int reached = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    ReplayOptions o;
    o.strategy = strategy;
    o.max_evals = budget;
    o.seed = seed;
    o.batch = batch;
    ReplayResult r = replaySweep(s, o);
    EXPECT_LE(r.evaluations, budget);
    double gap = r.best_time ? *r.best_time / *r.optimum - 1.0 : 1.0;
    row.within += gap <= 0.03 ? 1 : 0;
    row.mean_gap += gap / 10;
    if (r.evals_to_within_3pct) {
      row.mean_evals_to_3pct += *r.evals_to_within_3pct;
      ++reached;
    }
    ++row.seeds;
  }
  if (reached) row.mean_evals_to_3pct /= reached;
  return row;
}

TEST(ReplayBench, DefaultStrategyWithin3PercentUsingTenPercentOfEachSweep) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(test::sourceDir() / "tests/data/sweeps")) {
    if (e.path().extension() == ".csv") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no sweeps in tests/data/sweeps/";
  std::printf("%-44s %5s %6s  %-10s %8s %9s %12s\n", "sweep", "rows", "budget", "strategy", "within3%", "mean gap",
              "evals to 3%");
  for (const auto& f : files) {
    Sweep s = loadSweep(f);
    ASSERT_TRUE(s.optimum().has_value()) << f;
    if (s.rows.size() < 50) {
      std::printf("%-44s %5zu  skipped: fewer than 50 configurations\n", f.filename().c_str(), s.rows.size());
      continue;
    }
    int budget = static_cast<int>(s.rows.size() / 10);
    for (const char* strategy : {"auto", "random", "local"}) {
      BenchRow r = bench(s, strategy, budget, 8);
      std::printf("%-44s %5zu %6d  %-10s %5d/10 %8.2f%% %12.1f\n", f.filename().c_str(), s.rows.size(), budget,
                  r.strategy.c_str(), r.within, 100 * r.mean_gap, r.mean_evals_to_3pct);
      if (std::string(strategy) == "auto") {
        EXPECT_GE(r.within, 9) << f.filename() << ": the default strategy came within 3% of the optimum in only "
                               << r.within << " of 10 seeds";
      }
    }
  }
}

}  // namespace
}  // namespace tf
