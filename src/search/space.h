// The search space over a source's tunables: a domain per tunable, static pruning
// (shared memory, registers, dimensions a block must cover) before anything compiles,
// a prior that ranks configurations by built-in rules, and neighbourhoods for local search.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernel/tunables.h"
#include "transform/apply_config.h"

namespace tf {

struct SpaceHints {
  std::map<std::string, int> elem_bytes;                 // kernel -> widest pointer element (bytes)
  std::map<std::string, std::vector<int64_t>> observed;  // tunable id -> values seen at run time
  int64_t smem_limit = 232448;                           // bytes per block (sm_90: 227 KiB)
  int sms = 132;
};

struct Dimension {
  const Tunable* tunable = nullptr;
  std::vector<int64_t> values;     // may hold kKeep (the expression as written)
  int64_t baseline = kKeep;
};

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
  // Configurations one step away in one dimension (or in num_warps together with a tile).
  std::vector<Config> neighbors(const Config& c) const;
  // A uniformly random configuration (may be invalid).
  Config sample(std::mt19937_64& rng) const;
  // Canonical text of a configuration, for de-duplication.
  std::string key(const Config& c) const;
  // Number of configurations (before pruning).
  double size() const;
  // Every valid configuration, if there are at most `limit`; else empty.
  std::vector<Config> enumerate(size_t limit) const;

 private:
  int64_t valueOf(const Config& c, const Tunable& t) const;
  int64_t resolved(const Config& c, const Tunable& t) const;  // kKeep -> the value as written / observed

  const TunableSet& tunables_;
  SpaceHints hints_;
  std::vector<Dimension> dims_;
};

}  // namespace tf
