#include "search/strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/error.h"

namespace tf {

std::set<std::string> seenKeys(const Space& space, const std::vector<Observation>& history) {
  std::set<std::string> keys;
  for (const auto& o : history) keys.insert(space.key(o.config));
  return keys;
}

std::vector<Config> rankedCandidates(const Space& space, std::mt19937_64& rng, size_t enumerate_limit) {
  std::vector<Config> all = space.enumerate(enumerate_limit);
  if (all.empty()) {
    std::set<std::string> keys;
    for (int i = 0; i < 40000; ++i) {
      Config c = space.sample(rng);
      if (keys.insert(space.key(c)).second) all.push_back(std::move(c));
    }
  }
  std::vector<std::pair<double, Config>> scored;
  for (auto& c : all) {
    if (!space.valid(c)) continue;
    scored.emplace_back(space.prior(c), std::move(c));
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<Config> out;
  out.reserve(scored.size());
  for (auto& [s, c] : scored) out.push_back(std::move(c));
  return out;
}

namespace {

// The prior ranking of a space, computed once per narrowed space.
class RankCache {
 public:
  explicit RankCache(size_t enumerate_limit = 300000) : limit_(enumerate_limit) {}
  const std::vector<Config>& get(const Space& space, std::mt19937_64& rng) {
    auto it = cache_.find(space.fingerprint());
    if (it == cache_.end()) it = cache_.emplace(space.fingerprint(), rankedCandidates(space, rng, limit_)).first;
    return it->second;
  }

 private:
  size_t limit_;
  std::map<std::string, std::vector<Config>> cache_;
};

class LocalSearch final : public SearchStrategy {
 public:
  explicit LocalSearch(uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "local"; }

  std::vector<Config> propose(const Space& space, const std::vector<Observation>& history, int n) override {
    std::set<std::string> seen = seenKeys(space, history);
    const std::vector<Config>& ranked = ranks_.get(space, rng_);
    std::vector<Config> out;
    auto take = [&](const Config& c) {
      if (static_cast<int>(out.size()) >= n) return;
      std::string k = space.key(c);
      if (seen.count(k) || !space.valid(c)) return;
      seen.insert(k);
      out.push_back(c);
    };
    // Neighbours of the best measured configurations, best first; those of one
    // configuration in prior order.
    std::vector<const Observation*> good;
    for (const auto& o : history) if (o.objective) good.push_back(&o);
    std::stable_sort(good.begin(), good.end(),
                     [](const Observation* a, const Observation* b) { return *a->objective < *b->objective; });
    if (good.size() > 1) {
      for (size_t i = 0; i < good.size() && i < 3 && static_cast<int>(out.size()) < n; ++i) {
        auto nb = space.neighbors(good[i]->config);
        std::stable_sort(nb.begin(), nb.end(),
                         [&](const Config& a, const Config& b) { return space.prior(a) > space.prior(b); });
        for (const auto& c : nb) take(c);
      }
    }
    for (const auto& c : ranked) {
      if (static_cast<int>(out.size()) >= n) break;
      take(c);
    }
    return out;
  }

 private:
  std::mt19937_64 rng_;
  RankCache ranks_;
};

class RandomSearch final : public SearchStrategy {
 public:
  explicit RandomSearch(uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "random"; }
  std::vector<Config> propose(const Space& space, const std::vector<Observation>& history, int n) override {
    std::set<std::string> seen = seenKeys(space, history);
    std::vector<Config> out;
    for (int tries = 0; tries < 20000 && static_cast<int>(out.size()) < n; ++tries) {
      Config c = space.sample(rng_);
      std::string k = space.key(c);
      if (seen.count(k) || !space.valid(c)) continue;
      seen.insert(k);
      out.push_back(std::move(c));
    }
    if (static_cast<int>(out.size()) < n && space.size() <= 300000) {
      // Rejection sampling found too few: draw from what is left.
      std::vector<Config> left;
      for (auto& c : space.enumerateValid(300000)) {
        if (!seen.count(space.key(c))) left.push_back(std::move(c));
      }
      std::shuffle(left.begin(), left.end(), rng_);
      for (auto& c : left) {
        if (static_cast<int>(out.size()) >= n) break;
        out.push_back(std::move(c));
      }
    }
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

class Exhaustive final : public SearchStrategy {
 public:
  std::string name() const override { return "exhaustive"; }
  std::vector<Config> propose(const Space& space, const std::vector<Observation>& history, int n) override {
    if (space.size() > 2000000) {
      throw UserError(fmt::format("the space has {:.0f} configurations: too many for --strategy exhaustive",
                                  space.size()));
    }
    std::set<std::string> seen = seenKeys(space, history);
    std::mt19937_64 unused(0);
    const std::vector<Config>& all = ranks_.get(space, unused);
    std::vector<Config> out;
    for (const auto& c : all) {
      if (static_cast<int>(out.size()) >= n) break;
      if (seen.count(space.key(c))) continue;
      out.push_back(c);
    }
    return out;
  }

 private:
  RankCache ranks_{2000000};
};

}  // namespace

std::vector<std::string> strategyNames() { return {"auto", "bayes", "local", "prior-local", "random", "exhaustive"}; }

void checkStrategyName(const std::string& name) {
  auto names = strategyNames();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw UserError(fmt::format("unknown search strategy '{}' (known: {})", name, list));
}

StrategyChoice chooseStrategy(const std::string& requested, const Space& space) {
  checkStrategyName(requested);
  if (requested != "auto") return {requested == "prior-local" ? "local" : requested, "chosen with --strategy"};
  if (space.size() <= 200000) {
    size_t valid = space.enumerateValid(200000).size();
    if (valid <= kAutoExhaustiveMax) {
      return {"exhaustive", fmt::format("{} valid configurations: few enough to measure them all", valid)};
    }
    return {"bayes", fmt::format("{} valid configurations: more than {}, so a model picks what to measure", valid,
                                 kAutoExhaustiveMax)};
  }
  return {"bayes", fmt::format("{:.0f} configurations before pruning: a model picks what to measure", space.size())};
}

std::unique_ptr<SearchStrategy> makeStrategy(const std::string& name, uint64_t seed) {
  checkStrategyName(name);
  if (name == "local" || name == "prior-local") return std::make_unique<LocalSearch>(seed);
  if (name == "random") return std::make_unique<RandomSearch>(seed);
  if (name == "exhaustive") return std::make_unique<Exhaustive>();
  if (name == "bayes") return makeBayesStrategy(seed);
  throw UserError("the 'auto' strategy is resolved by chooseStrategy before it is made");
}

}  // namespace tf
