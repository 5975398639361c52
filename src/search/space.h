// The search space over a source's tunables: a domain per tunable, static pruning
// (shared memory, registers, dimensions a block must cover) before anything compiles,
// a prior that ranks configurations by built-in rules, neighbourhoods for local search,
// and numeric features for surrogate models.
//
// A space can be narrowed: to a region (a subset of values per tunable, what an engine
// proposes) or to an explicit list of configurations (a recorded sweep in replay).
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernel/tunables.h"
#include "transform/apply_config.h"
#include "worker/target.h"

namespace tf {

struct SpaceHints {
  std::map<std::string, int> elem_bytes;                 // kernel -> widest pointer element (bytes)
  std::map<std::string, std::vector<int64_t>> observed;  // tunable id -> values seen at run time
  int64_t smem_limit = kSm90SharedPerBlock;              // bytes per block (from the GPU when known)
  int sms = 132;
  // tunable id -> its domain, replacing the one its role gives (replay: the recorded values).
  std::map<std::string, std::vector<int64_t>> domains;
  // kernel -> programs its launch had with the tile sizes as written (the measured grid): the
  // prior scales it by the tile area to see when a configuration leaves SMs idle.
  std::map<std::string, double> baseline_programs;
  // Wider domains per role (`--effort full`): tiles to 512, K tiles to 256, 1..16 warps and
  // 1..7 stages for dot kernels, groups to 32; static pruning still applies.
  bool wide = false;
};

struct Dimension {
  const Tunable* tunable = nullptr;
  std::vector<int64_t> values;     // may hold kKeep (the expression as written)
  int64_t baseline = kKeep;
  double log_lo = 0, log_hi = 0;   // log2 range of the resolved values of the whole domain
};

// tunable id -> the values allowed there (an engine's parameter region).
using Region = std::map<std::string, std::vector<int64_t>>;

class Space {
 public:
  Space(const TunableSet& tunables, SpaceHints hints);

  const std::vector<Dimension>& dims() const { return dims_; }
  const TunableSet& tunables() const { return tunables_; }
  // The configuration that reproduces the source as written.
  Config baseline() const;
  // Static pruning. `why` gets the reason for a rejection.
  bool valid(const Config& c, std::string* why = nullptr) const;
  // Built-in rules' estimate of how promising `c` is (higher is better); not a prediction of time.
  double prior(const Config& c) const;
  // Elements of the dot results a kernel keeps in registers through its loop: `tile` (the
  // output tile) for one dot; with two dots in the loop (attention: Q·Kᵀ then P·V) the sum of
  // their M x N shapes, which is what spills when the warps are too few.
  int64_t inLoopAccumulators(const std::string& kernel, const Config& c, int64_t tile) const;
  // Shared memory of a kernel with two dots in its loop (attention's forward), bytes; nullopt
  // otherwise (the GEMM estimate applies).
  // A dot's dimension text as a number: a parameter's value (as configured, as written, or
  // seen at run time), a literal, else 64.
  int64_t dotDimension(const std::string& kernel, const Config& c, const std::string& text) const;
  // The kernel's two dots in one loop (attention's forward), or none: the case the two
  // estimates below change.
  std::vector<const DotFact*> chainedDots(const std::string& kernel) const;
  std::optional<int64_t> chainedDotsSharedBytes(const std::string& kernel, const Config& c, int64_t stages,
                                                int64_t elem_bytes) const;
  // Configurations one step away in one dimension (or in num_warps together with a tile).
  std::vector<Config> neighbors(const Config& c) const;
  // A uniformly random configuration (may be invalid).
  Config sample(std::mt19937_64& rng) const;
  // Canonical text of a configuration, for de-duplication.
  std::string key(const Config& c) const;
  // Number of configurations (before pruning).
  double size() const;
  // Every configuration (valid or not), if there are at most `limit`; else empty.
  std::vector<Config> enumerate(size_t limit) const;
  // Every valid configuration, if the space has at most `limit` configurations; else empty.
  std::vector<Config> enumerateValid(size_t limit) const;

  // The same space with each tunable of `region` limited to the values listed there
  // (intersected with its domain; values outside the domain are added when they are
  // powers of two). Tunables the region does not name keep their domain.
  Space restricted(const Region& region) const;
  // The same space where only the configurations whose key() is in `keys` are valid.
  Space onlyKeys(std::set<std::string> keys) const;
  bool inRegion(const Config& c, const Region& region) const;

  // Numeric features of `c` for surrogate models: per dimension, log2 of the resolved
  // value scaled to [0, 1] over the whole domain (the same scale in every narrowed space);
  // then per 2-D tile, its area, its elements per thread and (with a K tile) the shared
  // memory its pipeline stages take, scaled the same way.
  std::vector<double> features(const Config& c) const;
  // The value of a dimension's tunable in `c` (the baseline's when `c` does not name it).
  int64_t value(const Config& c, const Dimension& d) const;
  // The value as it runs: kKeep resolved to the value as written or observed; 0 when unknown.
  int64_t resolvedValue(const Config& c, const Tunable& t) const { return resolved(c, t); }
  // Identifies the narrowed space (for caches in strategies).
  const std::string& fingerprint() const { return fingerprint_; }
  const SpaceHints& hints() const { return hints_; }

 private:
  int64_t valueOf(const Config& c, const Tunable& t) const;
  int64_t resolved(const Config& c, const Tunable& t) const;  // kKeep -> the value as written / observed
  void refreshFingerprint();

  const TunableSet& tunables_;
  SpaceHints hints_;
  std::vector<Dimension> dims_;
  struct Derived {
    int m = -1, n = -1, k = -1, warps = -1, stages = -1;   // indexes into dims_
    double area_lo = 0, area_hi = 0, per_lo = 0, per_hi = 0, smem_lo = 0, smem_hi = 0;
  };
  std::vector<Derived> derived_;                              // features of tile pairs
  std::set<std::string> narrowed_;                            // tunable ids a region limits
  std::shared_ptr<const std::set<std::string>> only_keys_;   // null: every configuration
  std::string fingerprint_;
};

}  // namespace tf
