#include "search/strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "util/error.h"

namespace tf {
namespace {

std::set<std::string> seenKeys(const Space& space, const std::vector<Observation>& history) {
  std::set<std::string> keys;
  for (const auto& o : history) keys.insert(space.key(o.config));
  return keys;
}

// Valid configurations ranked by prior: all of them when the space is small enough to
// enumerate, else a large random sample plus the neighbourhood of the baseline.
std::vector<Config> rankedCandidates(const Space& space, std::mt19937_64& rng, size_t enumerate_limit = 300000) {
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

class PriorLocal final : public SearchStrategy {
 public:
  explicit PriorLocal(uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "prior-local"; }

  std::vector<Config> propose(const Space& space, const std::vector<Observation>& history, int n) override {
    std::set<std::string> seen = seenKeys(space, history);
    if (ranked_.empty()) ranked_ = rankedCandidates(space, rng_);
    std::vector<Config> out;
    auto take = [&](const Config& c) {
      if (static_cast<int>(out.size()) >= n) return;
      std::string k = space.key(c);
      if (seen.count(k) || !space.valid(c)) return;
      seen.insert(k);
      out.push_back(c);
    };
    // Local search around the best measured configurations, best first; the neighbours of
    // one configuration in prior order.
    std::vector<const Observation*> good;
    for (const auto& o : history) if (o.objective) good.push_back(&o);
    std::stable_sort(good.begin(), good.end(),
                     [](const Observation* a, const Observation* b) { return *a->objective < *b->objective; });
    bool measured_any = good.size() > 1;  // more than the baseline
    if (measured_any) {
      for (size_t i = 0; i < good.size() && i < 3 && static_cast<int>(out.size()) < n; ++i) {
        auto nb = space.neighbors(good[i]->config);
        std::stable_sort(nb.begin(), nb.end(),
                         [&](const Config& a, const Config& b) { return space.prior(a) > space.prior(b); });
        for (const auto& c : nb) take(c);
      }
    }
    // Then the prior's ranking.
    for (const auto& c : ranked_) {
      if (static_cast<int>(out.size()) >= n) break;
      take(c);
    }
    return out;
  }

 private:
  std::mt19937_64 rng_;
  std::vector<Config> ranked_;
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
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

class Exhaustive final : public SearchStrategy {
 public:
  std::string name() const override { return "exhaustive"; }
  std::vector<Config> propose(const Space& space, const std::vector<Observation>& history, int n) override {
    std::set<std::string> seen = seenKeys(space, history);
    if (!enumerated_) {
      all_ = space.enumerate(2000000);
      enumerated_ = true;
      if (all_.empty() && space.size() > 0) {
        throw UserError(fmt::format("the space has {:.0f} configurations: too many for --strategy exhaustive",
                                    space.size()));
      }
    }
    std::vector<Config> out;
    for (const auto& c : all_) {
      if (static_cast<int>(out.size()) >= n) break;
      std::string k = space.key(c);
      if (seen.count(k) || !space.valid(c)) continue;
      seen.insert(k);
      out.push_back(c);
    }
    return out;
  }

 private:
  bool enumerated_ = false;
  std::vector<Config> all_;
};

}  // namespace

std::vector<std::string> strategyNames() { return {"auto", "prior-local", "random", "exhaustive"}; }

std::unique_ptr<SearchStrategy> makeStrategy(const std::string& name, uint64_t seed) {
  if (name == "auto" || name == "prior-local") return std::make_unique<PriorLocal>(seed);
  if (name == "random") return std::make_unique<RandomSearch>(seed);
  if (name == "exhaustive") return std::make_unique<Exhaustive>();
  std::string names;
  for (const auto& n : strategyNames()) names += (names.empty() ? "" : ", ") + n;
  throw UserError(fmt::format("unknown search strategy '{}' (known: {})", name, names));
}

}  // namespace tf
