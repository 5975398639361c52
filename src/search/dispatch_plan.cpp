#include "search/dispatch_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace tf {
namespace {

// Options considered at most: the fastest two of each case and the fastest overall, so that
// the subsets tried stay a few hundred.
constexpr size_t kPoolSize = 12;

double logRatio(double t, double as_written) { return std::log(t / as_written); }

// The cases in groups of equal feature value, in increasing order of it.
struct Groups {
  std::vector<int64_t> values;
  std::vector<std::vector<size_t>> cases;
};

Groups groupBy(const DispatchInput& in, size_t f) {
  std::map<int64_t, std::vector<size_t>> by;
  for (size_t c = 0; c < in.cases.size(); ++c) by[in.cases[c].values[f]].push_back(c);
  Groups g;
  for (auto& [v, cs] : by) {
    g.values.push_back(v);
    g.cases.push_back(std::move(cs));
  }
  return g;
}

// The features every case has, each with a positive value, not the same in all.
std::vector<size_t> usableFeatures(const DispatchInput& in) {
  std::vector<size_t> out;
  if (in.cases.empty()) return out;
  const CaseFeatures& first = in.cases[0];
  for (size_t f = 0; f < first.features.size(); ++f) {
    bool ok = true, varies = false;
    for (const CaseFeatures& c : in.cases) {
      if (c.features.size() != first.features.size() || !(c.features[f] == first.features[f]) || c.values[f] <= 0) {
        ok = false;
        break;
      }
      varies = varies || c.values[f] != first.values[f];
    }
    if (ok && varies) out.push_back(f);
  }
  return out;
}

bool safeOn(const DispatchInput& in, int option, const std::vector<size_t>& cases) {
  if (option < 0) return true;
  for (size_t c : cases) {
    double t = in.option_ms[static_cast<size_t>(option)][c];
    if (!(t > 0) || t > in.as_written_ms[c] * (1.0 + in.tolerance[c])) return false;
  }
  return true;
}

double costOn(const DispatchInput& in, int option, const std::vector<size_t>& cases) {
  if (option < 0) return 0;
  double s = 0;
  for (size_t c : cases) s += logRatio(in.option_ms[static_cast<size_t>(option)][c], in.as_written_ms[c]);
  return s;
}

std::vector<int> optionPool(const DispatchInput& in) {
  std::set<int> pool;
  const size_t n = in.as_written_ms.size();
  for (size_t c = 0; c < n; ++c) {
    std::vector<int> order;
    for (size_t o = 0; o < in.option_ms.size(); ++o) {
      if (safeOn(in, static_cast<int>(o), {c})) order.push_back(static_cast<int>(o));
    }
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return in.option_ms[static_cast<size_t>(a)][c] < in.option_ms[static_cast<size_t>(b)][c];
    });
    for (size_t k = 0; k < order.size() && k < 2; ++k) pool.insert(order[k]);
  }
  std::vector<int> all(pool.begin(), pool.end());
  // Too many: keep those with the best geometric mean over the cases they are safe on.
  if (all.size() > kPoolSize) {
    std::vector<std::pair<double, int>> scored;
    for (int o : all) {
      double s = 0;
      for (size_t c = 0; c < n; ++c) s += std::min(0.0, logRatio(in.option_ms[static_cast<size_t>(o)][c], in.as_written_ms[c]));
      scored.push_back({s, o});
    }
    std::sort(scored.begin(), scored.end());
    all.clear();
    for (size_t k = 0; k < kPoolSize; ++k) all.push_back(scored[k].second);
  }
  return all;
}

// The plan for options `set` (as written implicit) on feature `f`; nullopt when it does not
// use every option of the set.
std::optional<DispatchPlan> planFor(const DispatchInput& in, size_t f, const Groups& g, const std::vector<int>& set) {
  DispatchPlan plan;
  plan.feature = in.cases[0].features[f];
  plan.per_case.assign(in.as_written_ms.size(), -1);
  double cost = 0;
  std::vector<int> chosen;
  for (const auto& cases : g.cases) {
    int pick = -1;
    double best = 0;
    for (int o : set) {
      if (!safeOn(in, o, cases)) continue;
      double c = costOn(in, o, cases);
      if (c < best) {
        best = c;
        pick = o;
      }
    }
    cost += best;
    chosen.push_back(pick);
  }
  std::set<int> used(chosen.begin(), chosen.end());
  for (int o : set) {
    if (!used.count(o)) return std::nullopt;
  }
  const size_t last = g.values.size() - 1;
  for (size_t a = 0; a <= last;) {
    size_t b = a;
    while (b < last && chosen[b + 1] == chosen[a]) ++b;
    DispatchBucket bucket;
    bucket.option = chosen[a];
    bucket.lo = a == 0 ? std::max<int64_t>(1, (g.values[0] + 1) / 2)
                       : static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(g.values[a - 1]) *
                                                                   static_cast<double>(g.values[a])))) + 1;
    bucket.hi = b == last ? g.values[last] * 2
                          : static_cast<int64_t>(std::floor(std::sqrt(static_cast<double>(g.values[b]) *
                                                                      static_cast<double>(g.values[b + 1]))));
    for (size_t k = a; k <= b; ++k) {
      for (size_t c : g.cases[k]) {
        bucket.cases.push_back(c);
        plan.per_case[c] = chosen[a];
      }
    }
    std::sort(bucket.cases.begin(), bucket.cases.end());
    if (bucket.option >= 0 && std::find(plan.options.begin(), plan.options.end(), bucket.option) == plan.options.end()) {
      plan.options.push_back(bucket.option);
    }
    plan.buckets.push_back(std::move(bucket));
    a = b + 1;
  }
  plan.objective = std::exp(cost / static_cast<double>(in.as_written_ms.size()));
  return plan;
}

}  // namespace

std::string DispatchFeature::label() const {
  std::string arg = name.empty() ? fmt::format("arg {}", index) : name;
  return dim >= 0 ? fmt::format("{}.shape[{}]", arg, dim) : arg;
}

CaseFeatures caseFeatures(const nlohmann::json& arguments) {
  CaseFeatures out;
  if (!arguments.is_array()) return out;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const nlohmann::json& a = arguments[i];
    if (!a.is_object()) continue;
    std::string name = a.contains("name") && a["name"].is_string() ? a["name"].get<std::string>() : "";
    if (auto s = a.find("shape"); s != a.end() && s->is_array()) {
      for (size_t d = 0; d < s->size(); ++d) {
        if (!(*s)[d].is_number_integer()) continue;
        out.features.push_back({static_cast<int>(i), name, static_cast<int>(d)});
        out.values.push_back((*s)[d].get<int64_t>());
      }
    } else if (auto v = a.find("value"); v != a.end() && v->is_number_integer()) {
      out.features.push_back({static_cast<int>(i), name, -1});
      out.values.push_back(v->get<int64_t>());
    }
  }
  return out;
}

std::optional<DispatchPlan> planDispatch(const DispatchInput& in) {
  const size_t n = in.as_written_ms.size();
  if (n < 2 || in.cases.size() != n || in.tolerance.size() != n) return std::nullopt;
  for (const auto& o : in.option_ms) {
    if (o.size() != n) return std::nullopt;
  }
  std::vector<size_t> features = usableFeatures(in);
  std::vector<int> pool = optionPool(in);
  if (features.empty() || pool.empty()) return std::nullopt;
  std::vector<std::vector<int>> sets;
  for (size_t i = 0; i < pool.size(); ++i) {
    sets.push_back({pool[i]});
    for (size_t j = i + 1; j < pool.size() && kMaxDispatchVariants >= 2; ++j) {
      sets.push_back({pool[i], pool[j]});
      for (size_t k = j + 1; k < pool.size() && kMaxDispatchVariants >= 3; ++k) sets.push_back({pool[i], pool[j], pool[k]});
    }
  }
  std::optional<DispatchPlan> best;
  auto better = [](const DispatchPlan& a, const DispatchPlan& b) {
    if (std::abs(a.objective - b.objective) > 1e-9) return a.objective < b.objective;
    if (a.options.size() != b.options.size()) return a.options.size() < b.options.size();
    return a.buckets.size() < b.buckets.size();
  };
  for (size_t f : features) {
    Groups g = groupBy(in, f);
    for (const auto& set : sets) {
      std::optional<DispatchPlan> p = planFor(in, f, g, set);
      if (!p) continue;
      // One option for every shape is the single best candidate's case, not a dispatch.
      if (p->buckets.size() < 2) continue;
      if (!best || better(*p, *best)) best = std::move(p);
    }
  }
  return best;
}

std::string featureParam(const std::vector<nlohmann::json>& case_values, const std::vector<CaseFeatures>& cases,
                         const DispatchFeature& feature) {
  if (case_values.empty() || case_values.size() != cases.size() || !case_values[0].is_object()) return "";
  for (const auto& [key, first] : case_values[0].items()) {
    if (!first.is_number_integer()) continue;
    bool all = true;
    for (size_t c = 0; c < cases.size() && all; ++c) {
      const auto& fs = cases[c].features;
      auto at = std::find(fs.begin(), fs.end(), feature);
      const nlohmann::json* v = case_values[c].contains(key) ? &case_values[c][key] : nullptr;
      all = at != fs.end() && v && v->is_number_integer() &&
            v->get<int64_t>() == cases[c].values[static_cast<size_t>(at - fs.begin())];
    }
    if (all) return key;
  }
  return "";
}

std::vector<nlohmann::json> nearbyShapes(const nlohmann::json& case_values, const std::string& param) {
  std::vector<nlohmann::json> out;
  if (!case_values.is_object()) return out;
  for (int direction : {+1, -1}) {
    nlohmann::json shape = case_values;
    bool moved = false, valid = true;
    for (auto& [key, v] : shape.items()) {
      if (!v.is_number_integer() || (!param.empty() && key != param)) continue;
      int64_t x = v.get<int64_t>();
      if (x < 2) continue;
      int64_t p2 = 1;
      while (p2 < 16 && x % (p2 * 2) == 0) p2 *= 2;
      int64_t step = std::max(p2, (x / 4) / p2 * p2);
      int64_t y = x + direction * step;
      // Down from a value no larger than its step: half of it (16 -> 8), so that the bucket's
      // low end is verified too.
      if (y < 1) y = x / 2;
      if (y < 1) {
        valid = false;
        break;
      }
      v = y;
      moved = true;
    }
    if (moved && valid) out.push_back(std::move(shape));
  }
  return out;
}

}  // namespace tf
