#include "transform/pass_applier.h"

#include <fmt/format.h>

#include "transform/pass.h"
#include "transform/transform.h"
#include "util/error.h"

namespace tf {

std::string passSpecText(const std::string& pass, const nlohmann::json& params) {
  std::string out = pass;
  if (!params.is_object() || params.empty()) return out;
  std::string args;
  for (const auto& [k, v] : params.items()) {
    std::string value = v.is_string() ? v.get<std::string>() : v.dump();
    args += fmt::format("{}{}={}", args.empty() ? "" : ",", k, value);
  }
  return out + ":" + args;
}

TransformPassApplier::TransformPassApplier(const Task& task, WorkerOptions worker_options, std::set<std::string> disabled)
    : task_(task), disabled_(std::move(disabled)) {
  worker_options.name = "pass worker";
  worker_ = std::make_unique<WorkerProcess>(std::move(worker_options));
}

std::vector<std::string> TransformPassApplier::available() const {
  std::vector<std::string> out;
  for (const auto& p : allPasses()) {
    std::string name = p->info().name;
    if (!disabled_.count(name)) out.push_back(name);
  }
  return out;
}

PassApplication TransformPassApplier::apply(const std::string& source, const std::string& kernel, const std::string& pass,
                                        const nlohmann::json& params) {
  PassApplication out;
  TransformRequest req;
  req.source = task_.source;
  req.kernel = kernel;
  req.pass = passSpecText(pass, params);
  req.task = task_.path;
  req.compile = true;
  try {
    TransformResult r = runTransform(*worker_, req, source);
    switch (r.status) {
      case TransformResult::Status::kApplied:
        out.applied = true;
        out.source = r.outcome.source;
        return out;
      case TransformResult::Status::kRefused:
        out.message = r.outcome.reason.empty() ? r.message : r.outcome.reason;
        return out;
      case TransformResult::Status::kBroken:
      case TransformResult::Status::kCompileFailed:
        out.message = r.message.empty() ? "the result does not compile" : r.message;
        return out;
    }
  } catch (const UserError& e) {
    out.message = e.what();
  } catch (const EnvironmentError& e) {
    out.message = std::string("the pass worker failed: ") + e.what();
  }
  return out;
}

}  // namespace tf
