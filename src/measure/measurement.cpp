#include "measure/measurement.h"

namespace tf {

const char* toString(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::kOk: return "ok";
    case CandidateStatus::kCompileError: return "compile-error";
    case CandidateStatus::kOutOfResources: return "out-of-resources";
    case CandidateStatus::kWrongResult: return "wrong-result";
    case CandidateStatus::kTimeout: return "timeout";
    case CandidateStatus::kCrash: return "crash";
    case CandidateStatus::kRuntimeError: return "runtime-error";
    case CandidateStatus::kPruned: return "pruned";
    case CandidateStatus::kNotRun: return "not-run";
  }
  return "?";
}

CandidateStatus candidateStatusFromString(const std::string& s) {
  for (auto st : {CandidateStatus::kOk, CandidateStatus::kCompileError, CandidateStatus::kOutOfResources,
                  CandidateStatus::kWrongResult, CandidateStatus::kTimeout, CandidateStatus::kCrash,
                  CandidateStatus::kRuntimeError, CandidateStatus::kPruned, CandidateStatus::kNotRun}) {
    if (s == toString(st)) return st;
  }
  return CandidateStatus::kRuntimeError;
}

nlohmann::json TimingStats::toJson() const {
  return {{"median_ms", median_ms}, {"q1_ms", q1_ms}, {"q3_ms", q3_ms}, {"iqr_ms", q3_ms - q1_ms},
          {"min_ms", min_ms},       {"max_ms", max_ms}, {"mean_ms", mean_ms}, {"reps", reps},
          {"method", method},       {"noise", noise()}};
}

TimingStats TimingStats::fromJson(const nlohmann::json& j) {
  TimingStats t;
  t.median_ms = j.value("median_ms", 0.0);
  t.q1_ms = j.value("q1_ms", t.median_ms);
  t.q3_ms = j.value("q3_ms", t.median_ms);
  t.min_ms = j.value("min_ms", t.median_ms);
  t.max_ms = j.value("max_ms", t.median_ms);
  t.mean_ms = j.value("mean_ms", t.median_ms);
  t.reps = j.value("reps", 0);
  t.method = j.value("method", "");
  return t;
}

nlohmann::json VerifyResult::toJson() const {
  nlohmann::json j = {{"passed", passed}, {"max_abs_err", max_abs_err}, {"max_rel_err", max_rel_err}};
  if (!reason.empty()) j["reason"] = reason;
  if (!first_bad.is_null()) j["first_bad"] = first_bad;
  if (failed_seed) j["failed_seed"] = *failed_seed;
  if (!reference_note.empty()) j["reference_note"] = reference_note;
  if (!tolerances.is_null()) j["tolerances"] = tolerances;
  return j;
}

nlohmann::json CaseMeasurement::toJson() const {
  nlohmann::json j = {{"status", toString(status)}, {"verify", verify.toJson()}};
  if (!message.empty()) j["message"] = message;
  if (!detail.empty()) j["detail"] = detail;
  if (timing) j["timing"] = timing->toJson();
  if (!kernels.empty()) j["kernels"] = kernels;
  if (!outputs.empty()) j["outputs"] = outputs;
  if (!work.empty()) j["work"] = work;
  j["wall_seconds"] = wall_seconds;
  return j;
}

CaseMeasurement measurementFromReply(const WorkerReply& reply) {
  CaseMeasurement m;
  m.wall_seconds = reply.seconds;
  switch (reply.status) {
    case WorkerReply::Status::kOk: break;
    case WorkerReply::Status::kTimeout:
      m.status = CandidateStatus::kTimeout;
      m.message = reply.message;
      m.detail = reply.detail;
      return m;
    case WorkerReply::Status::kFailed:
      // An op that raised: a fatal CUDA error (the worker exits after replying) is a crash, a
      // kernel that never finished a timeout; the worker says which in the error's data.
      m.status = CandidateStatus::kRuntimeError;
      if (reply.result.is_object() && reply.result.contains("status") && reply.result["status"].is_string()) {
        m.status = candidateStatusFromString(reply.result["status"].get<std::string>());
      }
      m.message = reply.error_type + ": " + reply.message;
      m.detail = reply.detail;
      return m;
    default:
      m.status = CandidateStatus::kCrash;
      m.message = reply.message;
      m.detail = reply.detail;
      return m;
  }
  const auto& r = reply.result;
  m.status = candidateStatusFromString(r.value("status", "runtime-error"));
  if (m.status != CandidateStatus::kOk) {
    m.message = r.value("message", std::string());
    if (r.contains("verify") && r["verify"].is_object()) m.message = r["verify"].value("reason", m.message);
  }
  if (r.contains("verify") && r["verify"].is_object()) {
    const auto& v = r["verify"];
    m.verify.passed = v.value("passed", false);
    m.verify.max_abs_err = v.value("max_abs_err", 0.0);
    m.verify.max_rel_err = v.value("max_rel_err", 0.0);
    m.verify.reason = v.value("reason", std::string());
    if (v.contains("first_bad")) m.verify.first_bad = v["first_bad"];
    if (v.contains("failed_seed")) m.verify.failed_seed = v["failed_seed"].get<int>();
    m.verify.reference_note = v.value("reference_note", std::string());
    if (v.contains("tolerances")) m.verify.tolerances = v["tolerances"];
  }
  if (r.contains("timing") && r["timing"].is_object()) m.timing = TimingStats::fromJson(r["timing"]);
  if (r.contains("kernels") && r["kernels"].is_array()) m.kernels = r["kernels"];
  if (r.contains("outputs") && r["outputs"].is_array()) m.outputs = r["outputs"];
  if (r.contains("work") && r["work"].is_object()) m.work = r["work"];
  return m;
}

}  // namespace tf
