// Regression check of a task against its baseline (regression_check.h has the definitions).
#include "measure/regression_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "measure/case_request.h"
#include "util/error.h"
#include "util/hash.h"
#include "worker/worker_client.h"

namespace tf {

namespace {

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

double studentT975(int dof) {
  static const double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                  2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                  2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) return 0;
  if (dof <= 30) return kTable[dof - 1];
  return 1.96;
}

RepeatedTiming summarizeRepeats(const std::vector<TimingStats>& runs) {
  RepeatedTiming r;
  std::vector<double> within;
  for (const auto& t : runs) {
    r.medians.push_back(t.median_ms);
    within.push_back(t.noise());
  }
  r.time_ms = medianOf(r.medians);
  r.within = medianOf(within);
  const size_t n = r.medians.size();
  if (n >= 2) {
    double mean = std::accumulate(r.medians.begin(), r.medians.end(), 0.0) / static_cast<double>(n);
    double ss = 0;
    for (double m : r.medians) ss += (m - mean) * (m - mean);
    double sd = std::sqrt(ss / static_cast<double>(n - 1));
    if (mean > 0) r.ci = studentT975(static_cast<int>(n) - 1) * sd / (std::sqrt(static_cast<double>(n)) * mean);
  }
  r.noise = std::max(r.ci, r.within);
  return r;
}

const char* toString(CaseVerdict v) {
  switch (v) {
    case CaseVerdict::kOk: return "ok";
    case CaseVerdict::kFaster: return "faster";
    case CaseVerdict::kRegressed: return "regressed";
    case CaseVerdict::kFailed: return "failed";
    case CaseVerdict::kNoBaseline: return "no-baseline";
  }
  return "?";
}

bool TaskCheck::failed() const {
  for (const auto& c : cases) {
    if (c.verdict == CaseVerdict::kRegressed || c.verdict == CaseVerdict::kFailed) return true;
  }
  return false;
}

void judgeCase(CaseCheck& c, double min_noise) {
  if (c.status != CandidateStatus::kOk) {
    c.verdict = CaseVerdict::kFailed;
    return;
  }
  if (!c.now || !c.baseline) {
    c.verdict = CaseVerdict::kNoBaseline;
    return;
  }
  c.ratio = c.now->time_ms / c.baseline->time_ms;
  c.band = std::max(min_noise, c.baseline->noise + c.now->noise);
  if (c.ratio > 1 + c.band) c.verdict = CaseVerdict::kRegressed;
  else if (c.ratio < 1 - c.band) c.verdict = CaseVerdict::kFaster;
  else c.verdict = CaseVerdict::kOk;
}

std::vector<CaseCheck> checkTaskCases(const Task& task, WorkerClient& client, const BaselineEntry* baseline,
                                      const CheckOptions& options) {
  const std::string module_name = "tfcheck_" + hashHex(task.source.string());
  const size_t n = task.cases.size();
  std::vector<CaseCheck> out(n);
  std::vector<std::vector<TimingStats>> runs(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].index = i;
    out[i].label = task.caseLabel(i);
    if (baseline) {
      if (const BaselineCase* b = baseline->find(task.cases[i])) out[i].baseline = *b;
    }
  }
  // Interleaved: every case once per round, so that a drift of clocks or temperature over
  // the check spreads over all cases instead of landing on the last ones.
  for (int rep = 0; rep < std::max(1, options.repeats); ++rep) {
    for (size_t i = 0; i < n; ++i) {
      CaseCheck& c = out[i];
      if (c.status != CandidateStatus::kOk) continue;
      RunRequest request = caseRunRequest(task, VariantRef{task.source, module_name, ""}, i);
      request.timing = TimingOptions{options.timing_budget_ms, 10, 20000, true, "auto"};
      const auto t0 = std::chrono::steady_clock::now();
      CaseMeasurement m = client.run(request, options.run_timeout);
      c.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (m.task_error) throw UserError(fmt::format("{}: {}", task.path.string(), *m.task_error));
      if (m.status == CandidateStatus::kOk && !m.timing) {
        m.status = CandidateStatus::kRuntimeError;
        m.message = "the worker returned no timing";
      }
      if (m.status != CandidateStatus::kOk) {
        c.status = m.status;
        c.message = m.message.empty() ? toString(m.status) : m.message;
        if (m.status == CandidateStatus::kWrongResult && m.verify.failed_seed) {
          c.message += fmt::format(" (seed {})", *m.verify.failed_seed);
        }
        continue;
      }
      runs[i].push_back(*m.timing);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (out[i].status == CandidateStatus::kOk) out[i].now = summarizeRepeats(runs[i]);
    judgeCase(out[i], options.min_noise);
  }
  return out;
}

}  // namespace tf
