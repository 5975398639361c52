#include "worker/measurement.h"

#include "util/text.h"

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
  if (!arguments.empty()) j["arguments"] = arguments;
  j["wall_seconds"] = wall_seconds;
  if (setup_seconds > 0) j["setup_seconds"] = setup_seconds;
  if (timeline.is_object()) j["timeline"] = timeline;
  if (!timeline_error.empty()) j["timeline_error"] = timeline_error;
  return j;
}

nlohmann::json CompileOutcome::toJson() const {
  nlohmann::json j = {{"status", toString(status)}, {"seconds", seconds}};
  if (!message.empty()) j["message"] = message;
  if (!detail.empty()) j["detail"] = detail;
  if (!kernels.empty()) j["kernels"] = kernels;
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
      if (reply.error_type == "TaskError") m.task_error = reply.message;
      if (reply.error_type == "WorkerLost") {
        // The Ray bridge's answer when its actor or node died: nothing the variant did.
        m.status = CandidateStatus::kNotRun;
        m.worker_lost = true;
        m.message = "the measurement worker was lost: " + reply.message;
      }
      return m;
    default:
      m.status = CandidateStatus::kCrash;
      m.message = reply.message;
      m.detail = reply.detail;
      return m;
  }
  CaseMeasurement parsed = CaseMeasurement::fromJson(reply.result);
  parsed.wall_seconds = m.wall_seconds;
  if (parsed.status != CandidateStatus::kOk && !parsed.verify.reason.empty()) {
    parsed.message = firstLine(parsed.verify.reason, 8000);
  }
  return parsed;
}

namespace {

std::string str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double num(const nlohmann::json& j, const char* key, double fallback = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

}  // namespace

TimingStats TimingStats::fromJson(const nlohmann::json& j) {
  TimingStats t;
  if (!j.is_object()) return t;
  t.median_ms = num(j, "median_ms");
  t.q1_ms = num(j, "q1_ms", t.median_ms);
  t.q3_ms = num(j, "q3_ms", t.median_ms);
  t.min_ms = num(j, "min_ms", t.median_ms);
  t.max_ms = num(j, "max_ms", t.median_ms);
  t.mean_ms = num(j, "mean_ms", t.median_ms);
  auto reps = j.find("reps");
  t.reps = reps != j.end() && reps->is_number_integer() ? reps->get<int>() : 0;
  t.method = str(j, "method");
  return t;
}

CaseMeasurement CaseMeasurement::fromJson(const nlohmann::json& r) {
  CaseMeasurement m;
  if (!r.is_object()) {
    m.status = CandidateStatus::kRuntimeError;
    m.message = "not a measurement (a JSON object was expected)";
    return m;
  }
  std::string status = str(r, "status");
  m.status = candidateStatusFromString(status.empty() ? "runtime-error" : status);
  // One line, as the field promises (the worker sends one; a database may hold anything).
  m.message = firstLine(str(r, "message"), 8000);
  m.detail = str(r, "detail");
  if (auto it = r.find("verify"); it != r.end() && it->is_object()) {
    const auto& v = *it;
    auto passed = v.find("passed");
    m.verify.passed = passed != v.end() && passed->is_boolean() && passed->get<bool>();
    m.verify.max_abs_err = num(v, "max_abs_err");
    m.verify.max_rel_err = num(v, "max_rel_err");
    m.verify.reason = str(v, "reason");
    if (v.contains("first_bad")) m.verify.first_bad = v["first_bad"];
    if (auto s = v.find("failed_seed"); s != v.end() && s->is_number_integer()) m.verify.failed_seed = s->get<int>();
    m.verify.reference_note = str(v, "reference_note");
    if (v.contains("tolerances")) m.verify.tolerances = v["tolerances"];
  }
  if (auto it = r.find("timing"); it != r.end() && it->is_object()) m.timing = TimingStats::fromJson(*it);
  if (auto it = r.find("kernels"); it != r.end() && it->is_array()) m.kernels = *it;
  if (auto it = r.find("outputs"); it != r.end() && it->is_array()) m.outputs = *it;
  if (auto it = r.find("work"); it != r.end() && it->is_object()) m.work = *it;
  if (auto it = r.find("arguments"); it != r.end() && it->is_array()) m.arguments = *it;
  m.wall_seconds = num(r, "wall_seconds");
  m.setup_seconds = num(r, "setup_seconds");
  if (auto it = r.find("timeline"); it != r.end() && it->is_object()) m.timeline = *it;
  m.timeline_error = str(r, "timeline_error");
  // A verified measurement without a usable time is not a measurement.
  if (m.status == CandidateStatus::kOk && m.timing && !(m.timing->median_ms > 0)) {
    m.status = CandidateStatus::kRuntimeError;
    m.message = "the measurement has no positive median time";
  }
  return m;
}

}  // namespace tf
