#include "worker/worker_client.h"

#include <fmt/format.h>

#include "util/text.h"

namespace tf {
namespace {

nlohmann::json paths(const std::vector<std::filesystem::path>& ps) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& p : ps) a.push_back(p.string());
  return a;
}

nlohmann::json launchJson(const LaunchSpec& l) {
  nlohmann::json variant = {{"path", l.variant.path.string()}, {"module_name", l.variant.module_name}};
  if (!l.variant.package.empty()) variant["package"] = l.variant.package;
  nlohmann::json j = {{"variant", variant},
                      {"launcher", l.launcher},
                      {"harness", l.harness.string()},
                      {"search_path", paths(l.search_path)}};
  if (l.direction != "forward") j["direction"] = l.direction;
  return j;
}

nlohmann::json checkJson(const CheckArgs& c) {
  nlohmann::json j = {{"reference_precision", c.reference_precision}, {"in_place", c.in_place}};
  if (c.rtol) j["rtol"] = *c.rtol;
  if (c.atol) j["atol"] = *c.atol;
  if (!c.output_atol.empty()) j["output_atol"] = c.output_atol;
  return j;
}

std::chrono::milliseconds pick(std::optional<std::chrono::milliseconds> given, std::chrono::milliseconds fallback) {
  return given ? *given : fallback;
}

}  // namespace

nlohmann::json TimingOptions::toJson() const {
  return {{"budget_ms", budget_ms}, {"min_reps", min_reps}, {"max_reps", max_reps}, {"flush", flush_l2},
          {"method", method}, {"pin_autotune", pin_autotune}};
}

nlohmann::json toJson(const RunRequest& r) {
  nlohmann::json j = launchJson(r.launch);
  j["case"] = r.case_values;
  j["seeds"] = r.seeds;
  j["check"] = checkJson(r.check);
  j["timing"] = r.timing ? r.timing->toJson() : nlohmann::json{{"enabled", false}};
  if (!r.asm_texts.empty()) j["asm"] = r.asm_texts;
  if (r.timeline) j["timeline"] = true;
  return j;
}

nlohmann::json toJson(const WarmRequest& r) {
  nlohmann::json j = launchJson(r.launch);
  j["cases"] = r.cases;
  if (r.memory_wait_s > 0) j["memory_wait_s"] = r.memory_wait_s;
  if (r.autotune_part) j["autotune_part"] = {r.autotune_part->first, r.autotune_part->second};
  return j;
}

nlohmann::json toJson(const CompileRequest& r) {
  nlohmann::json sig = nlohmann::json::object(), attrs = nlohmann::json::object(), opts = nlohmann::json::object();
  for (const auto& [p, t] : r.signature) sig[p] = t;
  for (const auto& [p, d] : r.divisibility) attrs[p] = d;
  for (const auto& [k, v] : r.options) opts[k] = v;
  nlohmann::json j = {{"path", r.path.string()}, {"kernel", r.kernel},   {"signature", sig},
                      {"constexprs", r.constexprs}, {"attrs", attrs},    {"options", opts},
                      {"target", r.target.toJson()}};
  if (!r.module_name.empty()) j["module_name"] = r.module_name;
  if (!r.search_path.empty()) j["search_path"] = paths(r.search_path);
  if (!r.package.empty()) j["package"] = r.package;
  if (!r.want.empty()) j["want"] = r.want;
  if (!r.config.is_null()) j["config"] = r.config;
  return j;
}

nlohmann::json profileLaunchRequest(const RunRequest& request, int warmup) {
  nlohmann::json args = toJson(request);
  args.erase("timing");
  args["warmup"] = warmup;
  args["seed"] = request.seeds.empty() ? 0 : request.seeds.front();
  return {{"op", "profile_launch"}, {"args", args}};
}

ParseReply parseReplyFrom(WorkerReply r) {
  ParseReply out;
  out.worker = r.status;
  out.message = r.message;
  out.detail = r.detail;
  if (r.ok()) {
    if (r.result.is_object() && r.result.contains("ast") && r.result["ast"].is_object()) {
      out.ast = std::move(r.result["ast"]);
    } else {
      out.worker = WorkerReply::Status::kProtocolError;
      out.message = "the parse reply has no 'ast' object";
    }
    return out;
  }
  if (r.status == WorkerReply::Status::kFailed && r.result.is_object()) {
    auto num = [&](const char* k) { return r.result.contains(k) && r.result[k].is_number_integer() ? r.result[k].get<int>() : 0; };
    out.line = num("line");
    out.col = num("col");
  }
  return out;
}

CompileReply compileReplyFrom(WorkerReply r) {
  CompileReply out;
  out.worker = r.status;
  out.error_type = r.error_type;
  if (r.ok()) {
    out.status = "ok";
    if (r.result.is_object()) out.result = std::move(r.result);
    // A companion the launch would not take for these values is not compiled (its reason).
    if (out.result.value("skipped", false)) {
      out.status = "skipped";
      out.message = out.result.value("reason", "");
      return out;
    }
    if (auto it = out.result.find("shared_bytes"); it != out.result.end() && it->is_number_integer()) {
      out.shared_bytes = it->get<int64_t>();
    }
    if (auto it = out.result.find("cubin"); it != out.result.end() && it->is_object() && it->contains("registers") &&
                                            (*it)["registers"].is_number_integer()) {
      out.registers = (*it)["registers"].get<int>();
    }
    return out;
  }
  out.status = "compile-error";
  if (r.status == WorkerReply::Status::kFailed && r.result.is_object() && r.result.contains("status") &&
      r.result["status"].is_string()) {
    out.status = r.result["status"].get<std::string>();
  }
  if (r.status == WorkerReply::Status::kTimeout) out.status = "timeout";
  out.message = r.error_type.empty() ? r.message : r.error_type + ": " + r.message;
  if (r.result.is_object()) out.result = std::move(r.result);
  return out;
}

CompileOutcome warmOutcomeFrom(WorkerReply r, std::chrono::milliseconds limit) {
  CompileOutcome out;
  out.seconds = r.seconds;
  CaseMeasurement m = measurementFromReply(r);
  out.status = m.status;
  out.message = m.message;
  out.detail = m.detail;
  if (r.ok() && r.result.is_object()) {
    // Not json::value, which throws for a status that is no string.
    const nlohmann::json& status = r.result.contains("status") ? r.result["status"] : nlohmann::json();
    out.status = candidateStatusFromString(status.is_string() ? status.get<std::string>() : "runtime-error");
    // One line, as CompileOutcome::message promises.
    out.message = r.result.contains("message") && r.result["message"].is_string()
                      ? firstLine(r.result["message"].get<std::string>(), 8000)
                      : "";
    if (r.result.contains("kernels") && r.result["kernels"].is_array()) out.kernels = r.result["kernels"];
  }
  if (out.status == CandidateStatus::kTimeout && r.status == WorkerReply::Status::kTimeout) {
    out.message = fmt::format("compiling took longer than {:.0f} s", limit.count() / 1000.0);
  }
  return out;
}

CeilingsReply ceilingsReplyFrom(WorkerReply r) {
  CeilingsReply out;
  if (!r.ok() || !r.result.is_object()) {
    out.message = r.ok() ? "the ceilings reply is not an object" : r.message;
    return out;
  }
  if (r.result.contains("dram_bytes_per_s") && r.result["dram_bytes_per_s"].is_number()) {
    out.dram_bytes_per_s = r.result["dram_bytes_per_s"].get<double>();
  }
  if (r.result.contains("flops_per_s") && r.result["flops_per_s"].is_object()) {
    for (const auto& [k, v] : r.result["flops_per_s"].items()) {
      if (v.is_number()) out.flops_per_s[k] = v.get<double>();
    }
  }
  out.ok = true;
  return out;
}

GuardReply WorkerClient::guard(const std::string& source, const std::string& original, const std::string& launcher) {
  WorkerReply r = process_.call("guard", {{"source", source}, {"original", original}, {"launcher", launcher}},
                                timeouts_.parse);
  GuardReply out;
  if (!r.ok()) {
    out.message = r.message;
    return out;
  }
  out.answered = true;
  if (r.result.contains("reasons") && r.result["reasons"].is_array()) {
    for (const auto& x : r.result["reasons"]) {
      if (x.is_string()) out.reasons.push_back(x.get<std::string>());
    }
  }
  if (!r.result.value("ok", false) && out.reasons.empty()) out.reasons.push_back("refused without a reason");
  return out;
}

LlmReply WorkerClient::llm(const LlmRequest& request) {
  nlohmann::json args = {{"endpoint", request.endpoint},         {"model", request.model},
                         {"engine_input", request.engine_input}, {"feedback", request.feedback},
                         {"max_requests", request.max_requests}, {"timeout_s", request.timeout_s},
                         {"deadline_s", request.deadline_s}};
  auto limit = std::chrono::milliseconds(static_cast<int64_t>((request.deadline_s + 10) * 1000));
  WorkerReply r = process_.call("llm", args, limit);
  LlmReply out;
  if (!r.ok()) {
    out.error = r.status == WorkerReply::Status::kTimeout
                    ? fmt::format("the model gave no answer within {:.0f} s", request.deadline_s)
                    : "the llm op failed: " + r.message;
    // A killed op spent what it was allowed (the count is unknown): the cap is honoured.
    out.requests = request.max_requests;
    return out;
  }
  const nlohmann::json& j = r.result;
  if (j.contains("answer") && j["answer"].is_object()) out.answer = j["answer"];
  if (j.contains("requests") && j["requests"].is_number_integer()) out.requests = j["requests"].get<int>();
  if (j.contains("usage") && j["usage"].is_object()) {
    out.prompt_tokens = j["usage"].value("prompt_tokens", int64_t{0});
    out.completion_tokens = j["usage"].value("completion_tokens", int64_t{0});
  }
  if (j.contains("error") && j["error"].is_string()) out.error = j["error"].get<std::string>();
  if (j.contains("events") && j["events"].is_array()) {
    for (const auto& e : j["events"]) {
      if (e.is_string()) out.events.push_back(e.get<std::string>());
    }
  }
  return out;
}

ParseReply WorkerClient::parse(const std::string& text, const std::string& filename,
                               std::optional<std::chrono::milliseconds> timeout) {
  WorkerReply r = process_.call("parse", {{"text", text}, {"filename", filename}}, pick(timeout, timeouts_.parse));
  return parseReplyFrom(std::move(r));
}

CompileReply WorkerClient::compile(const CompileRequest& request, std::optional<std::chrono::milliseconds> timeout) {
  WorkerReply r = process_.call("compile", toJson(request), pick(timeout, timeouts_.compile));
  return compileReplyFrom(std::move(r));
}

CompileOutcome WorkerClient::warm(const WarmRequest& request, std::optional<std::chrono::milliseconds> timeout) {
  auto limit = pick(timeout, timeouts_.warm);
  WorkerReply r = process_.call("warm", toJson(request), limit);
  return warmOutcomeFrom(std::move(r), limit);
}

WorkerReply WorkerClient::preload(const WarmRequest& request, std::chrono::milliseconds timeout) {
  return process_.call("preload", toJson(request), timeout);
}

CaseMeasurement WorkerClient::run(const RunRequest& request, std::optional<std::chrono::milliseconds> timeout) {
  auto limit = pick(timeout, timeouts_.run);
  WorkerReply r = process_.call("run", toJson(request), limit);
  CaseMeasurement m = measurementFromReply(r);
  // Only a timeout of the request itself: the worker's own hang watchdog says what it saw.
  if (r.status == WorkerReply::Status::kTimeout) {
    m.message = fmt::format("no result within {:.0f} s (a hang?); the worker was replaced", limit.count() / 1000.0);
  }
  return m;
}

CeilingsReply WorkerClient::ceilings(std::optional<std::chrono::milliseconds> timeout) {
  WorkerReply r = process_.call("ceilings", nlohmann::json::object(), pick(timeout, timeouts_.ceilings));
  return ceilingsReplyFrom(std::move(r));
}

}  // namespace tf
