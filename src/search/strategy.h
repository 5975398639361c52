// Search strategies over a Space. Lifecycle (as in TVM MetaSchedule): the loop asks for a
// batch of proposals, measures them, and passes the history back; a strategy keeps no
// hidden state that the history does not give it, so a run can be replayed.
//
// Strategies: "prior-local" (rank by the built-in rules' prior, then local search around
// the best measured configurations), "random", "exhaustive"; "auto" picks by space size.
#pragma once

#include <memory>
#include <optional>
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
  // Up to `n` valid configurations that are not in `history`. Empty: nothing left to try.
  virtual std::vector<Config> propose(const Space& space, const std::vector<Observation>& history, int n) = 0;
};

// Throws UserError for an unknown name. `seed` fixes every random choice.
std::unique_ptr<SearchStrategy> makeStrategy(const std::string& name, uint64_t seed);

// The names makeStrategy accepts.
std::vector<std::string> strategyNames();

}  // namespace tf
