// One candidate of a run: a configuration of a base source (or a pass's rewrite of it), what
// compiling and measuring it came to on every case, and its score against the kernel as
// written.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "variant/config.h"
#include "worker/measurement.h"

namespace tf {

enum class CandidateKind {
  kBaseline,   // a base source as written (the original, or a pass's winning output)
  kSearch,     // a configuration the strategy (or an autotune seed) proposed
  kPass,       // a pass applied to the base's best configuration
  kStored,     // a configuration measured by an earlier run, taken from the database
};

const char* toString(CandidateKind kind);

struct CandidateRecord {
  int id = 0;
  int round = 0;
  int base = 0;                      // the source the configuration applies to (0: as written)
  CandidateKind kind = CandidateKind::kSearch;
  std::string origin;                // "baseline", "autotune config 2", "bayes", "database (run 3)" ...
  std::string proposal;              // the engine proposal it came from ("P2"), if any
  Config config;
  std::string config_text;
  std::string source_hash;
  CandidateStatus status = CandidateStatus::kNotRun;
  std::string message;
  CompileOutcome compile;
  std::vector<CaseMeasurement> cases;
  std::optional<double> objective;   // geomean(time / baseline time); lower is better
  // Cases on which it is slower than the kernel as written beyond that case's noise: such a
  // candidate is never handed back, however fast it is elsewhere.
  std::vector<std::string> regressed;
  bool reused = false;               // from the results database, not measured in this run
  // The measurement lane (GPU) that measured it: it is scored against that lane's baseline.
  // -1: none (not measured in this run); 0 in a single-GPU run.
  int lane = 0;
  // Seconds into the run when its measurement ended (or, reused, when it was looked up);
  // -1 when it was not measured. The trace's timeline: candidates are recorded at the end of
  // their round, measured earlier.
  double done_s = -1;

  // Verified on every case, scored, and slower on none.
  bool eligible() const { return status == CandidateStatus::kOk && objective && regressed.empty(); }
  nlohmann::json toJson() const;
};

}  // namespace tf
