// The "bayes" strategy: Bayesian optimization over a Space.
//
// Surrogate: a Gaussian process on y = log(objective) over Space::features (log2 of each
// parameter, scaled), with the rules' prior score as the covariate of a linear mean, so
// that the prior guides the search until measurements say otherwise (the fitted slope
// turns negative when the prior is wrong for this kernel).
// Failures: configurations that failed to compile, ran out of resources or did not verify
// have no time; a second GP on labels (+1 ok, -1 failed) gives the probability that a
// candidate works, and the acquisition is expected improvement times that probability.
// Batches: after each pick, the pick is added to the GP as if it had measured its
// predicted mean ("kriging believer"), which spreads the batch out.
// Spread: a batch holds at most a quarter of picks (two at least) with the same tile
// shape (the values of the tile / block dimensions, which decide a kernel's speed the most).
// First rounds: until a few points are measured, one third the prior's best configurations
// (each of a tile shape not tried yet) and two thirds space-filling seeded random ones.
// Features include each tile's area and elements per thread (Space::features).
// Replays of synthetic sweeps chose these settings (docs/search.md has the figures).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "search/gaussian_process.h"
#include "search/strategy.h"

namespace tf {
namespace {

constexpr size_t kInitialPoints = 6;     // measured points before the model takes over
constexpr size_t kPoolLimit = 50000;     // enumerate spaces up to this size; sample larger ones
constexpr size_t kSampledPool = 6000;
constexpr int kSpaceFillingDraws = 16;   // random draws per space-filling pick

class Bayes final : public SearchStrategy {
 public:
  explicit Bayes(uint64_t seed) : rng_(seed) {}
  std::string name() const override { return "bayes"; }

  std::vector<Config> propose(const Space& space, const std::vector<Observation>& history, int n) override {
    std::set<std::string> seen = seenKeys(space, history);
    std::vector<const Config*> pool;
    const Pool& all = poolOf(space, history);
    for (const auto& c : all.configs) {
      if (!seen.count(space.key(c))) pool.push_back(&c);
    }
    if (pool.empty() || n <= 0) return {};
    std::vector<Config> out;
    if (history.size() < kInitialPoints || countOk(history) < 3) {
      initialDesign(space, history, pool, n, &out);
      return out;
    }
    modelDesign(space, history, pool, n, &out);
    return out;
  }

 private:
  struct Pool {
    std::vector<Config> configs;
    std::map<std::string, double> prior;    // key -> prior score
  };

  static size_t countOk(const std::vector<Observation>& h) {
    size_t n = 0;
    for (const auto& o : h) n += o.objective ? 1 : 0;
    return n;
  }

  // The candidates of a space: all valid configurations when they can be enumerated, else
  // a large sample plus the neighbours of the best measured ones (rebuilt each call then).
  const Pool& poolOf(const Space& space, const std::vector<Observation>& history) {
    auto it = pools_.find(space.fingerprint());
    if (it != pools_.end() && space.size() <= static_cast<double>(kPoolLimit)) return it->second;
    Pool p;
    if (space.size() <= static_cast<double>(kPoolLimit)) {
      p.configs = space.enumerateValid(kPoolLimit);
    } else {
      std::set<std::string> keys;
      for (size_t tries = 0; tries < kSampledPool * 8 && p.configs.size() < kSampledPool; ++tries) {
        Config c = space.sample(rng_);
        if (space.valid(c) && keys.insert(space.key(c)).second) p.configs.push_back(std::move(c));
      }
      std::vector<const Observation*> good;
      for (const auto& o : history) if (o.objective) good.push_back(&o);
      std::stable_sort(good.begin(), good.end(),
                       [](const Observation* a, const Observation* b) { return *a->objective < *b->objective; });
      for (size_t i = 0; i < good.size() && i < 5; ++i) {
        for (auto& c : space.neighbors(good[i]->config)) {
          if (space.valid(c) && keys.insert(space.key(c)).second) p.configs.push_back(std::move(c));
        }
      }
    }
    for (const auto& c : p.configs) p.prior[space.key(c)] = space.prior(c);
    pools_[space.fingerprint()] = std::move(p);
    return pools_[space.fingerprint()];
  }

  // The values of the tile / block dimensions, which decide a kernel's speed the most.
  static std::string tileKey(const Space& space, const Config& c) {
    std::string k;
    for (const auto& d : space.dims()) {
      TunableRole r = d.tunable->role;
      if (r == TunableRole::kTileM || r == TunableRole::kTileN || r == TunableRole::kBlock) {
        k += std::to_string(space.value(c, d)) + ",";
      }
    }
    return k;
  }

  // The prior's best configurations, each with a tile shape not measured or chosen yet,
  // alternating with space-filling random ones (the farthest of a few random draws from
  // everything chosen so far).
  void initialDesign(const Space& space, const std::vector<Observation>& history, std::vector<const Config*>& pool,
                     int n, std::vector<Config>* out) {
    const Pool& p = pools_[space.fingerprint()];
    std::vector<const Config*> by_prior = pool;
    std::stable_sort(by_prior.begin(), by_prior.end(), [&](const Config* a, const Config* b) {
      return p.prior.at(space.key(*a)) > p.prior.at(space.key(*b));
    });
    std::vector<std::vector<double>> chosen;
    std::set<std::string> tiles;
    for (const auto& o : history) {
      chosen.push_back(space.features(o.config));
      tiles.insert(tileKey(space, o.config));
    }
    std::set<std::string> taken;
    auto pickPrior = [&]() -> const Config* {
      for (const Config* c : by_prior) {
        if (!taken.count(space.key(*c)) && !tiles.count(tileKey(space, *c))) return c;
      }
      for (const Config* c : by_prior) {
        if (!taken.count(space.key(*c))) return c;
      }
      return nullptr;
    };
    auto pickRandom = [&]() -> const Config* {
      std::vector<const Config*> left;
      for (const Config* c : pool) if (!taken.count(space.key(*c))) left.push_back(c);
      if (left.empty()) return nullptr;
      std::uniform_int_distribution<size_t> d(0, left.size() - 1);
      const Config* best = nullptr;
      double best_dist = -1;
      for (int draw = 0; draw < kSpaceFillingDraws; ++draw) {
        const Config* c = left[d(rng_)];
        std::vector<double> f = space.features(*c);
        double nearest = 1e300;
        for (const auto& g : chosen) {
          double s = 0;
          for (size_t i = 0; i < f.size(); ++i) s += (f[i] - g[i]) * (f[i] - g[i]);
          nearest = std::min(nearest, s);
        }
        if (nearest > best_dist) {
          best_dist = nearest;
          best = c;
        }
      }
      return best;
    };
    for (int i = 0; i < n; ++i) {
      const Config* c = i % 3 == 0 ? pickPrior() : pickRandom();
      if (!c) c = pickRandom();
      if (!c) break;
      taken.insert(space.key(*c));
      chosen.push_back(space.features(*c));
      tiles.insert(tileKey(space, *c));
      out->push_back(*c);
    }
  }

  void modelDesign(const Space& space, const std::vector<Observation>& history, std::vector<const Config*>& pool,
                   int n, std::vector<Config>* out) {
    const Pool& p = pools_[space.fingerprint()];
    std::vector<std::vector<double>> x, xc;
    std::vector<double> y, cov, labels;
    bool any_failed = false;
    for (const auto& o : history) {
      std::vector<double> f = space.features(o.config);
      double pr = space.prior(o.config);
      xc.push_back(f);
      labels.push_back(o.objective ? 1.0 : -1.0);
      if (!o.objective) {
        any_failed = true;
        continue;
      }
      x.push_back(f);
      y.push_back(std::log(std::max(*o.objective, 1e-12)));
      cov.push_back(pr);
    }
    // The prior's scale varies by kernel kind: standardize it over the pool.
    double pm = 0, ps = 0;
    for (const Config* c : pool) pm += p.prior.at(space.key(*c));
    pm /= static_cast<double>(pool.size());
    for (const Config* c : pool) ps += std::pow(p.prior.at(space.key(*c)) - pm, 2);
    ps = std::sqrt(ps / static_cast<double>(pool.size())) + 1e-9;
    for (double& v : cov) v = (v - pm) / ps;

    GaussianProcess gp;
    gp.fit(x, y, cov);
    // Labels are +-1: a generous noise keeps this a smoother.
    // The feasibility model borrows the time model's length scales (what matters for speed
    // mostly matters for resources too), capped so that one failure does not condemn a
    // whole dimension.
    GaussianProcess::Options fo{0.05, false, 0.3, gp.lengthscales()};
    for (auto& l : fo.lengthscales) l = std::clamp(l, 0.3, 0.5);
    GaussianProcess feasible(fo);
    if (any_failed) feasible.fit(xc, labels);
    double best = *std::min_element(y.begin(), y.end());

    struct Cand {
      const Config* config;
      std::vector<double> f;
      double prior;
      double p_ok;
    };
    std::vector<Cand> cands;
    cands.reserve(pool.size());
    for (const Config* c : pool) {
      Cand k{c, space.features(*c), (p.prior.at(space.key(*c)) - pm) / ps, 1.0};
      if (any_failed) {
        double m, v;
        feasible.predict(k.f, 0, &m, &v);
        k.p_ok = std::clamp(0.5 * (1 + m), 0.02, 1.0);
      }
      cands.push_back(std::move(k));
    }
    auto score = [&](const Cand& k, double* mean) {
      double m, v;
      gp.predict(k.f, k.prior, &m, &v);
      if (mean) *mean = m;
      return expectedImprovement(m, v, best) * k.p_ok;
    };
    // A batch spreads over tile shapes: at most a quarter of it (two at least) shares the
    // values of the tile / block dimensions, which decide a kernel's speed the most.
    std::map<std::string, int> per_tile;
    const int per_tile_max = std::max(2, n / 4);
    auto tileKeyOf = [&](const Config& c) { return tileKey(space, c); };
    std::vector<bool> used(cands.size(), false);
    auto commit = [&](size_t i) {
      used[i] = true;
      per_tile[tileKeyOf(*cands[i].config)]++;
      out->push_back(*cands[i].config);
      // Kriging believer: pretend the pick measured its predicted mean.
      double m = 0;
      score(cands[i], &m);
      gp.addPoint(cands[i].f, m, cands[i].prior);
      best = std::min(best, m);
    };
    // The first pick scores the whole pool; later picks re-score the most promising part.
    std::vector<std::pair<double, size_t>> ranked;
    for (size_t i = 0; i < cands.size(); ++i) ranked.emplace_back(score(cands[i], nullptr), i);
    std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      return cands[a.second].prior > cands[b.second].prior;
    });
    size_t keep = std::min(ranked.size(), std::max<size_t>(300, static_cast<size_t>(n) * 12));
    std::vector<size_t> shortlist;
    for (size_t i = 0; i < keep; ++i) shortlist.push_back(ranked[i].second);

    auto bestOf = [&](const std::vector<size_t>& among, bool spread) {
      double best_score = -1;
      size_t best_i = SIZE_MAX;
      for (size_t i : among) {
        if (used[i]) continue;
        if (spread && per_tile[tileKeyOf(*cands[i].config)] >= per_tile_max) continue;
        double s = score(cands[i], nullptr);
        if (s > best_score) {
          best_score = s;
          best_i = i;
        }
      }
      return best_i;
    };
    std::vector<size_t> everything(cands.size());
    std::iota(everything.begin(), everything.end(), 0);
    while (static_cast<int>(out->size()) < n) {
      size_t i = bestOf(shortlist, true);
      if (i == SIZE_MAX) i = bestOf(everything, true);
      if (i == SIZE_MAX) i = bestOf(everything, false);   // only crowded tile shapes are left
      if (i == SIZE_MAX) break;
      commit(i);
    }
  }

  std::mt19937_64 rng_;
  std::map<std::string, Pool> pools_;
};

}  // namespace

std::unique_ptr<SearchStrategy> makeBayesStrategy(uint64_t seed) { return std::make_unique<Bayes>(seed); }

}  // namespace tf
