#include "search/space.h"

#include "util/hash.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace tf {
namespace {

std::vector<int64_t> powersOfTwo(int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t v = 1; v <= hi; v *= 2) if (v >= lo) out.push_back(v);
  return out;
}


double log2d(double v) { return std::log2(std::max(v, 1e-9)); }

}  // namespace

Space::Space(const TunableSet& tunables, SpaceHints hints) : tunables_(tunables), hints_(std::move(hints)) {
  std::set<std::string> dot_kernels;
  for (const auto& [k, f] : tunables_.facts) if (!f.dots.empty()) dot_kernels.insert(k);
  for (const Tunable* t : tunables_.active()) {
    Dimension d;
    d.tunable = t;
    bool derived = t->origin == TunableOrigin::kLocalDerived || t->origin == TunableOrigin::kHeuristic ||
                   t->origin == TunableOrigin::kLaunchOverride || t->configs_unread;
    d.baseline = derived || !t->value ? kKeep : *t->value;
    std::vector<int64_t> vals;
    bool dots = dot_kernels.count(t->kernel) > 0;
    int64_t v = t->value.value_or(0);
    switch (t->role) {
      // A tile that spans a whole dimension (a head dimension, a row) keeps its value:
      // larger would read past the data, smaller would leave part of it out.
      case TunableRole::kTileM:
      case TunableRole::kTileN:
        vals = t->covers_dimension && t->value ? std::vector<int64_t>{v} : powersOfTwo(16, hints_.wide ? 512 : 256);
        break;
      case TunableRole::kTileK:
        vals = t->covers_dimension && t->value ? std::vector<int64_t>{v} : powersOfTwo(16, hints_.wide ? 256 : 128);
        break;
      case TunableRole::kBlock: {
        int64_t ref = v;
        if (!ref) {
          auto it = hints_.observed.find(t->id);
          if (it != hints_.observed.end() && !it->second.empty()) ref = *std::max_element(it->second.begin(), it->second.end());
        }
        if (t->covers_dimension) {
          if (ref) vals = {ref};
        } else {
          vals = powersOfTwo(16, 16384);
        }
        break;
      }
      case TunableRole::kGroup: vals = hints_.wide ? powersOfTwo(1, 32) : std::vector<int64_t>{1, 2, 4, 8, 16}; break;
      case TunableRole::kNumWarps:
        if (hints_.wide) vals = dots ? std::vector<int64_t>{1, 2, 4, 8, 16} : std::vector<int64_t>{1, 2, 4, 8, 16, 32};
        else vals = dots ? std::vector<int64_t>{2, 4, 8} : std::vector<int64_t>{1, 2, 4, 8, 16, 32};
        break;
      case TunableRole::kNumStages:
        if (hints_.wide) vals = dots ? std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7} : std::vector<int64_t>{1, 2, 3, 4, 5, 6};
        else vals = dots ? std::vector<int64_t>{2, 3, 4, 5} : std::vector<int64_t>{1, 2, 3, 4};
        break;
      case TunableRole::kOther: vals = t->choices; break;
    }
    if (auto dom = hints_.domains.find(t->id); dom != hints_.domains.end()) vals = dom->second;
    if (t->value && std::find(vals.begin(), vals.end(), *t->value) == vals.end()) vals.push_back(*t->value);
    std::sort(vals.begin(), vals.end());
    if (derived) vals.insert(vals.begin(), kKeep);
    d.values = vals;
    if (d.values.size() > 1) dims_.push_back(std::move(d));
  }
  for (auto& d : dims_) {
    double lo = 1e300, hi = -1e300;
    for (int64_t v : d.values) {
      Config probe{{d.tunable->id, v}};
      int64_t r = resolved(probe, *d.tunable);
      double l = log2d(static_cast<double>(r > 0 ? r : 1));
      lo = std::min(lo, l);
      hi = std::max(hi, l);
    }
    d.log_lo = lo;
    d.log_hi = hi;
  }
  // Tile pairs per kernel: (M, N) tiles of a dot, or two block sizes of a 2-D tile.
  std::map<std::string, Derived> pairs;
  for (size_t i = 0; i < dims_.size(); ++i) {
    const Tunable* t = dims_[i].tunable;
    Derived& dv = pairs[t->kernel];
    if (t->role == TunableRole::kTileM) dv.m = static_cast<int>(i);
    else if (t->role == TunableRole::kTileN) dv.n = static_cast<int>(i);
    else if (t->role == TunableRole::kTileK) dv.k = static_cast<int>(i);
    else if (t->role == TunableRole::kNumWarps) dv.warps = static_cast<int>(i);
    else if (t->role == TunableRole::kNumStages) dv.stages = static_cast<int>(i);
  }
  for (auto& [kernel, dv] : pairs) {
    if (dv.m < 0 || dv.n < 0) continue;
    const auto& dm = dims_[static_cast<size_t>(dv.m)];
    const auto& dn = dims_[static_cast<size_t>(dv.n)];
    dv.area_lo = dm.log_lo + dn.log_lo;
    dv.area_hi = dm.log_hi + dn.log_hi;
    if (dv.warps >= 0) {
      const auto& dw = dims_[static_cast<size_t>(dv.warps)];
      dv.per_lo = dv.area_lo - dw.log_hi;
      dv.per_hi = dv.area_hi - dw.log_lo;
    }
    if (dv.k >= 0) {
      const auto& dk = dims_[static_cast<size_t>(dv.k)];
      double s_lo = dv.stages >= 0 ? dims_[static_cast<size_t>(dv.stages)].log_lo : 0;
      double s_hi = dv.stages >= 0 ? dims_[static_cast<size_t>(dv.stages)].log_hi : 0;
      dv.smem_lo = s_lo + std::log2(std::exp2(dm.log_lo) + std::exp2(dn.log_lo)) + dk.log_lo;
      dv.smem_hi = s_hi + std::log2(std::exp2(dm.log_hi) + std::exp2(dn.log_hi)) + dk.log_hi;
    }
    derived_.push_back(dv);
  }
  refreshFingerprint();
}

void Space::refreshFingerprint() {
  std::string f;
  for (const auto& d : dims_) {
    f += d.tunable->id + "=";
    for (int64_t v : d.values) f += (v == kKeep ? std::string("keep") : std::to_string(v)) + ",";
    f += ";";
  }
  if (only_keys_) {
    uint64_t h = fnv1a64("");
    for (const auto& k : *only_keys_) h = fnv1a64(k, h);
    f += fmt::format("only{}:{:016x}", only_keys_->size(), h);
  }
  fingerprint_ = f;
}

int64_t Space::value(const Config& c, const Dimension& d) const {
  auto it = c.find(d.tunable->id);
  return it == c.end() ? d.baseline : it->second;
}

Space Space::restricted(const Region& region) const {
  Space s = *this;
  for (auto& d : s.dims_) {
    auto it = region.find(d.tunable->id);
    if (it == region.end()) continue;
    std::vector<int64_t> keep;
    for (int64_t v : d.values) {
      if (std::find(it->second.begin(), it->second.end(), v) != it->second.end()) keep.push_back(v);
    }
    d.values = keep;
    s.narrowed_.insert(d.tunable->id);
  }
  s.refreshFingerprint();
  return s;
}

Space Space::onlyKeys(std::set<std::string> keys) const {
  Space s = *this;
  s.only_keys_ = std::make_shared<const std::set<std::string>>(std::move(keys));
  s.refreshFingerprint();
  return s;
}

bool Space::inRegion(const Config& c, const Region& region) const {
  for (const auto& [id, allowed] : region) {
    auto it = c.find(id);
    if (it == c.end()) continue;
    if (std::find(allowed.begin(), allowed.end(), it->second) == allowed.end()) return false;
  }
  return true;
}

std::vector<double> Space::features(const Config& c) const {
  std::vector<double> f;
  f.reserve(dims_.size() + 2 * derived_.size());
  std::vector<double> logs(dims_.size(), 0);
  for (size_t i = 0; i < dims_.size(); ++i) {
    const auto& d = dims_[i];
    int64_t v = value(c, d);
    Config probe{{d.tunable->id, v}};
    int64_t r = v == kKeep ? resolved(probe, *d.tunable) : v;
    double span = d.log_hi - d.log_lo;
    logs[i] = r > 0 ? log2d(static_cast<double>(r)) : 0.5 * (d.log_lo + d.log_hi);
    f.push_back(span > 0 ? (logs[i] - d.log_lo) / span : 0.0);
  }
  // Derived: a tile's area (how many programs cover the output, and how much each reuses)
  // and its elements per thread (register pressure): what a GPU's speed follows more
  // directly than either side alone.
  for (const auto& dv : derived_) {
    double area = logs[static_cast<size_t>(dv.m)] + logs[static_cast<size_t>(dv.n)];
    f.push_back(dv.area_hi > dv.area_lo ? (area - dv.area_lo) / (dv.area_hi - dv.area_lo) : 0.0);
    if (dv.warps >= 0) {
      double per = area - logs[static_cast<size_t>(dv.warps)];
      f.push_back(dv.per_hi > dv.per_lo ? (per - dv.per_lo) / (dv.per_hi - dv.per_lo) : 0.0);
    }
    if (dv.k >= 0) {
      double smem = (dv.stages >= 0 ? logs[static_cast<size_t>(dv.stages)] : 0) +
                    std::log2(std::exp2(logs[static_cast<size_t>(dv.m)]) + std::exp2(logs[static_cast<size_t>(dv.n)])) +
                    logs[static_cast<size_t>(dv.k)];
      f.push_back(dv.smem_hi > dv.smem_lo ? (smem - dv.smem_lo) / (dv.smem_hi - dv.smem_lo) : 0.0);
    }
  }
  return f;
}

std::vector<Config> Space::enumerateValid(size_t limit) const {
  std::vector<Config> all = enumerate(limit);
  std::vector<Config> out;
  for (auto& c : all) {
    if (valid(c)) out.push_back(std::move(c));
  }
  return out;
}

Config Space::baseline() const {
  Config c;
  for (const auto& d : dims_) c[d.tunable->id] = d.baseline;
  return c;
}

int64_t Space::valueOf(const Config& c, const Tunable& t) const {
  auto it = c.find(t.id);
  if (it != c.end()) return it->second;
  return t.value.value_or(kKeep);
}

int64_t Space::resolved(const Config& c, const Tunable& t) const {
  int64_t v = valueOf(c, t);
  if (v != kKeep) return v;
  if (t.value) return *t.value;
  auto it = hints_.observed.find(t.id);
  if (it != hints_.observed.end() && !it->second.empty()) return *std::max_element(it->second.begin(), it->second.end());
  return 0;  // unknown
}

std::string Space::key(const Config& c) const {
  std::string k;
  for (const auto& d : dims_) {
    auto it = c.find(d.tunable->id);
    int64_t v = it == c.end() ? d.baseline : it->second;
    k += v == kKeep ? "keep" : std::to_string(v);
    k += ";";
  }
  return k;
}

double Space::size() const {
  double n = 1;
  for (const auto& d : dims_) n *= static_cast<double>(d.values.size());
  return n;
}

bool Space::valid(const Config& c, std::string* why) const {
  auto reject = [&](std::string msg) {
    if (why) *why = std::move(msg);
    return false;
  };
  if (only_keys_ && !only_keys_->count(key(c))) return reject("not among the recorded configurations");
  for (const auto& d : dims_) {
    if (!narrowed_.count(d.tunable->id)) continue;
    int64_t v = value(c, d);
    if (std::find(d.values.begin(), d.values.end(), v) == d.values.end()) {
      return reject(fmt::format("{} is outside the region", d.tunable->param));
    }
  }
  // Computed autotune configs are replaced by one literal config giving all they set, or
  // left as written: a candidate sets every such parameter of a kernel, or none.
  std::map<std::string, std::pair<int, int>> unread;  // kernel -> (kept, set)
  for (const auto& d : dims_) {
    if (!d.tunable->configs_unread) continue;
    auto& u = unread[d.tunable->kernel];
    (value(c, d) == kKeep ? u.first : u.second) += 1;
  }
  for (const auto& [kernel, u] : unread) {
    if (u.first && u.second) {
      return reject(fmt::format("{}'s @triton.autotune configs are computed: a candidate sets every parameter "
                                "they set, or none",
                                kernel));
    }
  }
  // Per kernel and launch site: gather the resolved values by role.
  std::map<std::string, std::map<TunableRole, int64_t>> by_kernel;
  std::map<std::string, std::vector<int64_t>> blocks;
  for (const auto& t : tunables_.items) {
    int64_t v = resolved(c, t);
    if (!v) continue;
    if (t.covers_dimension && t.value && v != kKeep && v < *t.value) {
      return reject(fmt::format("{}={} is smaller than the {} it must cover", t.param, v, *t.value));
    }
    if (t.role == TunableRole::kBlock) blocks[t.kernel].push_back(v);
    else by_kernel[t.kernel][t.role] = v;
  }
  for (const auto& [kernel, roles] : by_kernel) {
    auto get = [&](TunableRole r, int64_t dflt) {
      auto it = roles.find(r);
      return it == roles.end() ? dflt : it->second;
    };
    int64_t warps = get(TunableRole::kNumWarps, 4);
    int64_t stages = get(TunableRole::kNumStages, 3);
    auto facts = tunables_.facts.find(kernel);
    bool dots = facts != tunables_.facts.end() && !facts->second.dots.empty();
    if (dots && roles.count(TunableRole::kTileM) && roles.count(TunableRole::kTileN)) {
      int64_t bm = get(TunableRole::kTileM, 0), bn = get(TunableRole::kTileN, 0), bk = get(TunableRole::kTileK, 32);
      int64_t eb = hints_.elem_bytes.count(kernel) ? hints_.elem_bytes.at(kernel) : 2;
      int64_t smem = std::max<int64_t>(stages, 1) * (bm * bk + bk * bn) * eb;
      if (auto chained = chainedDotsSharedBytes(kernel, c, stages, eb)) {
        if (*chained > hints_.smem_limit) {
          return reject(fmt::format("needs about {} KiB of shared memory ({} stages of the operands its {} dots load "
                                    "in the loop), more than the {} KiB a block may have",
                                    *chained / 1024, stages, facts->second.dots.size(), hints_.smem_limit / 1024));
        }
      } else if (smem > hints_.smem_limit) {
        return reject(fmt::format("needs about {} KiB of shared memory ({} stages of {}x{} and {}x{} tiles), "
                                  "more than the {} KiB a block may have",
                                  smem / 1024, stages, bm, bk, bk, bn, hints_.smem_limit / 1024));
      }
      int64_t acc = bm * bn / (32 * warps);
      if (acc > 256) {
        return reject(fmt::format("a {}x{} fp32 accumulator over {} warps is {} registers per thread", bm, bn, warps, acc));
      }
      if (bm * bn < 32 * warps * 4) {
        return reject(fmt::format("a {}x{} tile is too small for {} warps", bm, bn, warps));
      }
    }
  }
  for (const auto& [kernel, bs] : blocks) {
    int64_t warps = 4;
    for (const auto& t : tunables_.items) {
      if (t.kernel == kernel && t.role == TunableRole::kNumWarps) warps = resolved(c, t) ? resolved(c, t) : 4;
    }
    int64_t elems = 1;
    for (int64_t b : bs) elems *= b;
    // Elements each thread holds of one tile: beyond 256 the registers spill.
    if (elems / (32 * warps) > 256) {
      return reject(fmt::format("a tile of {} elements over {} warps is {} elements per thread", elems, warps,
                                elems / (32 * warps)));
    }
    if (elems < 32 * warps && warps > 1) {
      return reject(fmt::format("a tile of {} elements leaves most of {} warps idle", elems, warps));
    }
  }
  return true;
}

int64_t Space::dotDimension(const std::string& kernel, const Config& c, const std::string& text) const {
  for (const auto& t : tunables_.items) {
    if (t.kernel == kernel && t.param == text) {
      if (int64_t v = resolved(c, t); v > 0) return v;
    }
  }
  if (!text.empty() && text.size() < 10 &&
      std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    return std::stoll(text);
  }
  return 64;
}

std::vector<const DotFact*> Space::chainedDots(const std::string& kernel) const {
  std::vector<const DotFact*> in_loop;
  auto facts = tunables_.facts.find(kernel);
  if (facts == tunables_.facts.end()) return in_loop;
  for (const auto& d : facts->second.dots) {
    if (d.in_loop) in_loop.push_back(&d);
  }
  // Two: attention's forward form. More (backward kernels) share operands and keep some
  // results only briefly; sums over them would overstate both estimates.
  if (in_loop.size() != 2) in_loop.clear();
  return in_loop;
}

int64_t Space::inLoopAccumulators(const std::string& kernel, const Config& c, int64_t tile) const {
  int64_t sum = 0;
  for (const DotFact* d : chainedDots(kernel)) sum += dotDimension(kernel, c, d->m) * dotDimension(kernel, c, d->n);
  return std::max(sum, tile);
}

std::optional<int64_t> Space::chainedDotsSharedBytes(const std::string& kernel, const Config& c, int64_t stages,
                                                     int64_t elem_bytes) const {
  std::vector<const DotFact*> in_loop = chainedDots(kernel);
  if (in_loop.empty()) return std::nullopt;
  auto value = [&](const std::string& text) { return dotDimension(kernel, c, text); };
  // Each dot's K x N operand is loaded in the loop, one buffer per stage; the first dot's
  // M x K operand (attention's Q) once; the later dots' M x K operands are the earlier
  // results, in registers. On the H200: 64x128 tiles with a head dimension of 128 over 4
  // stages asked for about 272 KiB (4 x (32 + 32) KiB of K and V, 16 KiB of Q).
  int64_t staged = 0;
  for (const DotFact* d : in_loop) staged += value(d->k) * value(d->n);
  int64_t once = value(in_loop.front()->m) * value(in_loop.front()->k);
  return (std::max<int64_t>(stages, 1) * staged + once) * elem_bytes;
}

double Space::prior(const Config& c) const {
  double score = 0;
  std::map<std::string, std::map<TunableRole, int64_t>> roles;
  std::map<std::string, std::vector<const Tunable*>> block_tunables;
  for (const auto& t : tunables_.items) {
    int64_t v = resolved(c, t);
    if (!v) continue;
    roles[t.kernel][t.role] = v;
    if (t.role == TunableRole::kBlock) block_tunables[t.kernel].push_back(&t);
  }
  for (const auto& [kernel, r] : roles) {
    auto get = [&](TunableRole role, int64_t dflt) {
      auto it = r.find(role);
      return it == r.end() ? dflt : it->second;
    };
    int64_t warps = get(TunableRole::kNumWarps, 4);
    int64_t stages = get(TunableRole::kNumStages, 3);
    auto facts = tunables_.facts.find(kernel);
    bool dots = facts != tunables_.facts.end() && !facts->second.dots.empty();
    int64_t eb = hints_.elem_bytes.count(kernel) ? hints_.elem_bytes.at(kernel) : 2;
    if (dots && r.count(TunableRole::kTileM) && r.count(TunableRole::kTileN)) {
      int64_t bm = get(TunableRole::kTileM, 64), bn = get(TunableRole::kTileN, 64), bk = get(TunableRole::kTileK, 32);
      // Large output tiles reuse each loaded element more (arithmetic intensity per tile);
      // Hopper's tensor cores want 128-row tiles per 4 warps.
      score += std::min(log2d(static_cast<double>(bm * bn)), 15.0);
      double acc = static_cast<double>(inLoopAccumulators(kernel, c, bm * bn)) / (32.0 * warps);
      if (acc > 128) score -= 2.0 * log2d(acc / 128);
      if (acc < 32) score -= log2d(32 / acc);
      int64_t want_k = eb >= 4 ? 32 : 64;
      score -= 0.75 * std::abs(log2d(static_cast<double>(bk)) - log2d(static_cast<double>(want_k)));
      // Two dots in the loop load two operand tiles per stage (attention's K and V): a stage
      // fewer (fp16 attention on the H200: 64x64 tiles over 3 stages 0.74 ms, over 4 or 5 0.95).
      const bool chained = !chainedDots(kernel).empty();
      score -= 0.5 * std::abs(static_cast<double>(stages) - (eb >= 4 ? 3.0 : 4.0) + (chained ? 1.0 : 0.0));
      // Fewer programs than SMs leaves the GPU partly idle: small problems want small tiles.
      if (auto it = hints_.baseline_programs.find(kernel); it != hints_.baseline_programs.end() && it->second > 0) {
        double bm0 = 0, bn0 = 0;
        for (const auto& t : tunables_.items) {
          if (t.kernel != kernel || !t.value) continue;
          if (t.role == TunableRole::kTileM) bm0 = static_cast<double>(*t.value);
          if (t.role == TunableRole::kTileN) bn0 = static_cast<double>(*t.value);
        }
        if (bm0 > 0 && bn0 > 0) {
          double programs = it->second * (bm0 * bn0) / static_cast<double>(bm * bn);
          double sms = static_cast<double>(hints_.sms);
          if (programs < sms) score -= 3.0 * log2d(sms / std::max(programs, 1.0));
        }
      }
      if (r.count(TunableRole::kGroup)) score -= 0.3 * std::abs(log2d(static_cast<double>(get(TunableRole::kGroup, 8))) - 3);
      if (bm < 64) score -= 1.0;
    } else if (block_tunables.count(kernel)) {
      int64_t elems = 1;
      bool elementwise = false;
      for (const Tunable* t : block_tunables[kernel]) {
        elems *= resolved(c, *t);
        if (facts == tunables_.facts.end()) continue;
        auto it = facts->second.params.find(t->param);
        if (it != facts->second.params.end() && it->second.pid_scaled) elementwise = true;
      }
      double ept = static_cast<double>(elems) / (32.0 * warps);
      // 16 bytes per thread per access is the widest load; a few of them in flight hide latency.
      double want = 64.0 / static_cast<double>(eb);
      score -= std::abs(log2d(ept) - log2d(want)) * 0.8;
      if (elementwise) score -= 0.4 * std::abs(log2d(static_cast<double>(elems)) - 11.0);
      if (r.count(TunableRole::kNumStages)) score -= 0.3 * std::abs(static_cast<double>(stages) - 2.0);
    } else {
      score -= 0.2 * std::abs(log2d(static_cast<double>(warps)) - 2.0);
    }
  }
  return score;
}

std::vector<Config> Space::neighbors(const Config& c) const {
  std::vector<Config> out;
  std::set<std::string> seen;
  auto push = [&](Config n) {
    std::string k = key(n);
    if (seen.insert(k).second && k != key(c)) out.push_back(std::move(n));
  };
  for (size_t i = 0; i < dims_.size(); ++i) {
    const auto& d = dims_[i];
    auto it = c.find(d.tunable->id);
    int64_t v = it == c.end() ? d.baseline : it->second;
    auto pos = std::find(d.values.begin(), d.values.end(), v);
    if (pos == d.values.end()) continue;
    size_t p = static_cast<size_t>(pos - d.values.begin());
    for (int step : {-1, 1}) {
      if ((step < 0 && p == 0) || (step > 0 && p + 1 >= d.values.size())) continue;
      Config n = c;
      n[d.tunable->id] = d.values[p + static_cast<size_t>(step)];
      push(n);
      // A tile that doubles usually wants twice the warps (and half when it halves).
      for (const auto& w : dims_) {
        if (w.tunable->role != TunableRole::kNumWarps || w.tunable->kernel != d.tunable->kernel) continue;
        if (d.tunable->role == TunableRole::kNumWarps || d.tunable->role == TunableRole::kNumStages) continue;
        auto wit = n.find(w.tunable->id);
        int64_t wv = wit == n.end() ? w.baseline : wit->second;
        auto wpos = std::find(w.values.begin(), w.values.end(), wv);
        if (wpos == w.values.end()) continue;
        size_t wp = static_cast<size_t>(wpos - w.values.begin());
        if (step > 0 && wp + 1 < w.values.size()) {
          Config m = n;
          m[w.tunable->id] = w.values[wp + 1];
          push(m);
        } else if (step < 0 && wp > 0) {
          Config m = n;
          m[w.tunable->id] = w.values[wp - 1];
          push(m);
        }
      }
    }
  }
  return out;
}

Config Space::sample(std::mt19937_64& rng) const {
  Config c;
  for (const auto& d : dims_) {
    if (d.values.empty()) return baseline();
    std::uniform_int_distribution<size_t> pick(0, d.values.size() - 1);
    c[d.tunable->id] = d.values[pick(rng)];
  }
  return c;
}

std::vector<Config> Space::enumerate(size_t limit) const {
  if (size() > static_cast<double>(limit)) return {};
  std::vector<Config> out;
  Config c;
  std::function<void(size_t)> rec = [&](size_t i) {
    if (i == dims_.size()) {
      out.push_back(c);
      return;
    }
    for (int64_t v : dims_[i].values) {
      c[dims_[i].tunable->id] = v;
      rec(i + 1);
    }
  };
  rec(0);
  return out;
}

}  // namespace tf
