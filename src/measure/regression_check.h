// `tritonforge check`: the kernel as it stands, re-verified and re-timed, against its recorded
// best (store/baseline_file.h). The statistics are defined here, once (docs/ci.md):
//
//   Each case is run R times (--repeats, default 5), the cases interleaved (case 0, case 1,
//   ..., case 0, case 1, ...), so that a drift of the GPU's clocks hits every case alike.
//   Each run verifies (every seed of the task) and times, giving a median m_r and a relative
//   IQR q_r. The current time is T = median(m_1..m_R). The current noise is
//     n_c = max( t(0.975, R-1) * stdev(m) / (sqrt(R) * mean(m)),  median(q_r) )
//   (the half-width of a 95% confidence interval of the run-to-run mean, relative; and the
//   spread within one run), 0 from the first term for R = 1. With the baseline's time B and
//   recorded noise n_b (its IQR over its median), the band is
//     band = max(floor, n_b + n_c)             floor = 1% (--min-noise)
//   and the case REGRESSED when T > B * (1 + band); it is FASTER when T < B * (1 - band).
//
// Entry points: summarizeRepeats, judgeCase (pure), checkTaskCases (runs the worker).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/baseline_file.h"
#include "task/task.h"
#include "worker/measurement.h"

namespace tf {

class WorkerClient;

struct RepeatedTiming {
  double time_ms = 0;            // T: the median of the runs' medians
  double noise = 0;              // n_c
  double ci = 0;                 // the confidence-interval term of n_c
  double within = 0;             // the within-run term of n_c
  std::vector<double> medians;   // m_r, in run order
};

// Two-sided 95% Student t quantile for `dof` degrees of freedom (1.96 beyond 30).
double studentT975(int dof);
RepeatedTiming summarizeRepeats(const std::vector<TimingStats>& runs);

enum class CaseVerdict {
  kOk,            // within the band
  kFaster,        // faster beyond the band (the baseline may be updated)
  kRegressed,     // slower beyond the band
  kFailed,        // did not verify or run (wrong result, crash, ...)
  kNoBaseline,    // a case the baseline does not hold: measured, not judged
};
const char* toString(CaseVerdict v);

struct CaseCheck {
  size_t index = 0;
  std::string label;
  CaseVerdict verdict = CaseVerdict::kNoBaseline;
  CandidateStatus status = CandidateStatus::kOk;   // of the first run that failed, else ok
  std::string message;                               // why it failed
  std::optional<RepeatedTiming> now;
  std::optional<BaselineCase> baseline;
  double ratio = 0;      // T / B
  double band = 0;
  double seconds = 0;    // wall time of this case's runs
};

// The verdict of one case from its measurements; `c.now` and `c.baseline` must be set
// (else kNoBaseline), `c.status` ok.
void judgeCase(CaseCheck& c, double min_noise);

// One task's check, as the reports see it.
struct TaskCheck {
  std::string name;
  std::string path;
  bool has_baseline = false;                 // the baseline holds this task
  std::string baseline_config_text;          // the recorded best's configuration
  std::vector<std::string> toolchain_changes; // "Triton 3.5.0 -> 3.6.0", ...
  std::vector<CaseCheck> cases;
  bool failed() const;                       // a case regressed or failed
};

struct CheckOptions {
  int repeats = 5;
  double timing_budget_ms = 250;   // per run
  double min_noise = 0.01;
  std::optional<std::chrono::milliseconds> run_timeout;
};

// Runs every case of `task` (its source as written now) `repeats` times, interleaved, and
// judges each against `baseline` (null: no baseline, nothing judged). A case that fails a run
// is not run again. Throws UserError when the worker finds the task at odds with its harness.
std::vector<CaseCheck> checkTaskCases(const Task& task, WorkerClient& client, const BaselineEntry* baseline,
                                      const CheckOptions& options);

}  // namespace tf
