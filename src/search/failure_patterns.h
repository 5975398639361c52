// Learning from structural failures. Some parameters cannot change without changing what the
// kernel computes: a BLOCK_SIZE that also sets how many partial outputs a launcher allocates
// makes every other value fail with the same wrong-shape error (a real cross-entropy lost 40
// of 43 candidates that way). The loop learns it: when two candidates fail with the same
// structural error (same status and message, numbers aside), the dimensions that every one
// of them changed from the kernel as written, and that no verified candidate changed, are
// frozen at their value as written for the rest of the run. When several dimensions are
// suspect (the failing candidates changed all of them), the next round probes each alone
// (the kernel as written with only that dimension changed) before anything is frozen. A pass
// whose variants fail twice with the same error is dropped. The trace says so (events
// `freeze`, `freeze-probe` and `pass-dropped`).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "diagnose/vocabulary.h"
#include "search/candidate.h"
#include "variant/config.h"

namespace tf {

class FailurePatterns {
 public:
  // A failure that depends on the kernel's structure rather than on a configuration's size
  // or the moment (timeouts, crashes, out-of-resources and the budget are not), as a
  // signature: the status and the message with every number replaced by '#'. Empty: not
  // structural.
  static std::string signature(const CandidateRecord& rec);

  struct Freeze {
    std::vector<std::string> tunables;   // frozen at their value as written
    std::string signature;
    std::vector<int> candidates;          // the failures it rests on
  };
  // A configuration to measure next: the kernel as written with one suspect dimension changed.
  struct Probe {
    std::string tunable;
    std::vector<int64_t> values;          // the values it had in the failures, first seen first
    std::string signature;
  };
  struct Learned {
    std::vector<Freeze> freezes;          // dimensions to freeze now (each dimension once)
    std::vector<Probe> probes;
  };
  // Observes a candidate of the search on a base whose configuration as written is
  // `baseline`.
  Learned observe(const CandidateRecord& rec, const Config& baseline);

  // Observes a pass variant that failed; true (once) when the pass should be dropped now.
  bool observePass(const PassId& pass, const CandidateRecord& rec);
  // Dropped for the run: two of its variants failed with the same error.
  bool passDropped(const PassId& pass) const { return dropped_.count(pass) > 0; }

  // Forgets what it learnt of the configurations (a new base has other tunables).
  void newBase();
  const std::set<std::string>& frozen() const { return frozen_; }

 private:
  struct Pattern {
    std::set<std::string> changed;        // dimensions every failure of it changed
    std::vector<int> candidates;
    std::vector<Config> failed;           // the failing configurations (probe values)
    bool probed = false;
  };
  std::map<std::string, Pattern> patterns_;     // signature -> what its failures share
  std::set<std::string> verified_changed_;      // dimensions a verified candidate changed
  std::set<std::string> frozen_;
  std::map<PassId, std::map<std::string, int>> pass_failures_;  // pass -> signature -> count
  std::set<PassId> dropped_;
};

}  // namespace tf
