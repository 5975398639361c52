// Search strategies over a Space. Lifecycle (as in TVM MetaSchedule): the loop asks for a
// batch of proposals, measures them, and passes the whole history back. A strategy's only
// state besides caches is its seeded random generator, so the same seed, space and
// measurements give the same proposals (a run can be replayed).
//
// Strategies (docs/search.md):
//   exhaustive  every valid configuration, best prior first
//   random      uniform over the valid configurations
//   local       profile-guided local search: the rules' prior ranking, then the neighbours
//               of the best measured configurations (alias: prior-local)
//   bayes       Bayesian optimization: a Gaussian-process surrogate of log(time) with the
//               prior as its mean's covariate, expected improvement weighted by a learnt
//               probability that a configuration compiles and verifies, batches by
//               "kriging believer" fantasies
//   auto        exhaustive for small spaces, else bayes (chooseStrategy)
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "search/space.h"

namespace tf {

struct Observation {
  Config config;
  std::optional<double> objective;  // lower is better; nullopt: the configuration failed
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string name() const = 0;
  // Up to `n` valid configurations of `space` that are not in `history`. Empty: nothing
  // left to try. `history` may hold configurations from outside `space` (a wider space,
  // another region): they inform the choice and are never proposed again.
  virtual std::vector<Config> propose(const Space& space, const std::vector<Observation>& history, int n) = 0;
};

// Valid configurations at most this many: `auto` measures them all.
inline constexpr size_t kAutoExhaustiveMax = 64;

struct StrategyChoice {
  std::string name;   // a concrete strategy
  std::string why;
};

// Resolves "auto" by the number of valid configurations; any other name is returned as is.
StrategyChoice chooseStrategy(const std::string& requested, const Space& space);

// A concrete strategy ("auto" is resolved first with chooseStrategy). Throws UserError for
// an unknown name. `seed` fixes every random choice.
std::unique_ptr<SearchStrategy> makeStrategy(const std::string& name, uint64_t seed);

// The names makeStrategy and chooseStrategy accept, "auto" first.
std::vector<std::string> strategyNames();
// Throws UserError naming the known strategies when `name` is not one.
void checkStrategyName(const std::string& name);

// --- helpers shared by the strategies
std::set<std::string> seenKeys(const Space& space, const std::vector<Observation>& history);
// Valid configurations ranked by prior, best first: all of them when the space has at most
// `enumerate_limit` configurations, else a large random sample.
std::vector<Config> rankedCandidates(const Space& space, std::mt19937_64& rng, size_t enumerate_limit = 300000);

std::unique_ptr<SearchStrategy> makeBayesStrategy(uint64_t seed);

}  // namespace tf
