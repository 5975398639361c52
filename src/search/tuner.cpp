#include "search/tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tf {

Tuner::Tuner(const Space& space, SearchStrategy& strategy, double min_gain, Trace* trace)
    : space_(&space), strategy_(&strategy), min_gain_(min_gain), trace_(trace) {}

void Tuner::preload(const Config& config, std::optional<double> objective, const std::string& origin) {
  history_.push_back({config, objective});
}

std::optional<Observation> Tuner::best() const {
  std::optional<Observation> b;
  for (const auto& o : history_) {
    if (o.objective && (!b || *o.objective < *b->objective)) b = o;
  }
  return b;
}

std::vector<TunerProposal> Tuner::nextRound(int n, const std::vector<RegionRequest>& regions) {
  if (n <= 0) return {};
  auto b = best();
  have_best_ = b.has_value();
  best_at_round_start_ = b ? *b->objective : 0;
  round_outcomes_.clear();
  ++round_;

  std::vector<TunerProposal> out;
  // Proposals of this round count as seen for the next strategy call.
  std::vector<Observation> seen = history_;
  auto add = [&](std::vector<Config> picks, const std::string& origin, const std::string& pid) {
    for (auto& c : picks) {
      if (static_cast<int>(out.size()) >= n) break;
      seen.push_back({c, std::nullopt});
      out.push_back({std::move(c), origin, pid});
    }
  };
  for (const auto& r : regions) {
    int slots = std::max(1, static_cast<int>(std::lround(r.share * n)));
    slots = std::min(slots, n - static_cast<int>(out.size()));
    if (slots <= 0) break;
    Space narrowed = space_->restricted(r.region);
    std::vector<Config> picks = strategy_->propose(narrowed, seen, slots);
    std::string origin = fmt::format("{} in region {}{}", strategy_->name(), r.proposal_id,
                                     r.label.empty() ? "" : " (" + r.label + ")");
    if (trace_) {
      trace_->add("region", {{"round", round_},
                             {"proposal", r.proposal_id},
                             {"slots", slots},
                             {"proposed", picks.size()},
                             {"note", picks.empty() ? "nothing left to try in this region" : ""}});
    }
    add(std::move(picks), origin, r.proposal_id);
  }
  int left = n - static_cast<int>(out.size());
  if (left > 0) add(strategy_->propose(*space_, seen, left), strategy_->name(), "");
  if (out.empty()) {
    --round_;
    exhausted_ = true;
  }
  return out;
}

void Tuner::observe(const TunerProposal& p, std::optional<double> objective) {
  history_.push_back({p.config, objective});
  ++evals_;
  Outcome& o = round_outcomes_[p.proposal_id];
  o.origin = p.origin;
  ++o.count;
  if (!objective) ++o.failed;
  else if (!o.best || *objective < *o.best) o.best = objective;
}

bool Tuner::endRound(double noise) {
  auto b = best();
  double threshold = std::max(min_gain_, noise);
  bool gained = b && (!have_best_ || *b->objective < best_at_round_start_ * (1.0 - threshold));
  if (trace_) {
    nlohmann::json per = nlohmann::json::array();
    for (const auto& [pid, o] : round_outcomes_) {
      nlohmann::json j = {{"proposal", pid.empty() ? "strategy" : pid},
                          {"origin", o.origin},
                          {"measured", o.count},
                          {"failed", o.failed}};
      if (o.best) {
        j["best_objective"] = *o.best;
        if (have_best_) {
          // Positive: this proposal's best beat the best before the round by that fraction.
          j["gain"] = 1.0 - *o.best / best_at_round_start_;
          j["won"] = *o.best < best_at_round_start_ * (1.0 - threshold);
        }
      }
      per.push_back(j);
    }
    nlohmann::json r = {{"round", round_}, {"evaluations", evals_}, {"outcomes", per}, {"gained", gained}};
    if (have_best_) r["best_before"] = best_at_round_start_;
    if (b) r["best_after"] = *b->objective;
    trace_->add("round", r);
  }
  if (gained) stall_ = 0;
  else ++stall_;
  return gained;
}

}  // namespace tf
