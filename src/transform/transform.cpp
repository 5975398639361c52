#include "transform/transform.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <set>

#include "kernel/module_ir.h"
#include "kernel/tunables.h"
#include "task/task.h"
#include "transform/pass_context.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/temp_dir.h"
#include "worker/worker_process.h"

namespace tf {
namespace fs = std::filesystem;
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

// The functions that launch `kernel`.
std::vector<std::string> launchers(const ModuleIR& ir, const std::string& kernel) {
  std::vector<std::string> out;
  for (const auto& l : ir.launches) {
    if (l.kernel != kernel || l.function.empty()) continue;
    if (std::find(out.begin(), out.end(), l.function) == out.end()) out.push_back(l.function);
  }
  return out;
}

// Compiles `kernel` of the rewritten source for sm_90 with the worker's `compile` op.
nlohmann::json compileCheck(WorkerProcess& worker, const fs::path& original, const std::string& text,
                            const ModuleIR& ir, const std::string& kernel,
                            const std::map<std::string, nlohmann::json>& signature,
                            const std::map<std::string, std::string>& added) {
  nlohmann::json check = {{"target", "cuda:90"}};
  const Kernel* k = ir.kernel(kernel);
  nlohmann::json sig = nlohmann::json::object(), constexprs = nlohmann::json::object();
  for (const auto& [p, v] : signature) {
    if (!k->param(p)) continue;  // a parameter the pass removed
    if (v.is_string()) sig[p] = v;
    else constexprs[p] = v;
  }
  for (const auto& [p, type] : added) sig[p] = type;
  // Constexpr values as the launch writes them (or the first autotune config).
  std::map<std::string, int64_t> values;
  nlohmann::json options = nlohmann::json::object();
  for (const auto& fn : launchers(ir, kernel)) {
    TunableSet set = discoverTunables(ir, fn, {kernel});
    for (const auto& t : set.items) {
      if (!t.value || t.id.find('#') != std::string::npos) continue;
      if (t.role == TunableRole::kNumWarps || t.role == TunableRole::kNumStages) {
        if (!options.contains(t.param)) options[t.param] = *t.value;
      } else if (!values.count(t.param)) {
        values[t.param] = *t.value;
      }
    }
    for (const auto& site : ir.launches) {
      if (site.kernel != kernel || site.function != fn) continue;
      for (const char* o : {"num_ctas", "maxnreg"}) {
        auto it = site.options.find(o);
        if (it == site.options.end()) continue;
        if (auto v = intLiteral(*it->second.expr); v && !options.contains(o)) options[o] = *v;
      }
      // Literal constexpr arguments the tunables leave alone (flags, split factors).
      for (const auto& a : site.args) {
        const Param* p = k->param(a.param);
        if (!p || !p->is_constexpr || values.count(a.param)) continue;
        if (auto v = intLiteral(*a.expr)) values[a.param] = *v;
        else if (isType(*a.expr, "Constant") && (*a.expr)["vt"] == "bool") values[a.param] = (*a.expr)["value"].get<bool>();
      }
    }
  }
  std::vector<std::string> missing;
  for (const auto& p : k->params) {
    if (p.is_constexpr) {
      if (constexprs.contains(p.name)) continue;
      if (values.count(p.name)) constexprs[p.name] = values.at(p.name);
      else if (p.default_int) constexprs[p.name] = *p.default_int;
      else missing.push_back(p.name);
    } else if (!sig.contains(p.name)) {
      missing.push_back(p.name);
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    check["status"] = "skipped";
    check["reason"] = fmt::format("no type or value for {} (give --signature or --task)", list);
    return check;
  }
  // The module is loaded from a private copy beside nothing else; the original's folder
  // stays on the import path for the modules it imports.
  static int counter = 0;
  ++counter;
  TempDir dir("tf-transform-");
  fs::path file = dir.path() / original.filename();
  writeFileAtomic(file, text);
  nlohmann::json args = {{"path", file.string()},
                         {"kernel", kernel},
                         {"module_name", fmt::format("tf_transform_{}_{}", getpid(), counter)},
                         {"search_path", {fs::absolute(original).parent_path().string()}},
                         {"signature", sig},
                         {"constexprs", constexprs},
                         {"options", options},
                         {"target", {{"backend", "cuda"}, {"arch", 90}, {"warp_size", 32}}}};
  WorkerReply r = worker.call("compile", args, std::chrono::milliseconds(300000));
  check["constexprs"] = constexprs;
  check["options"] = options;
  // sm_90 gives a program at most 227 KiB of shared memory; the compile does not check.
  constexpr int64_t kSm90SharedLimit = 232448;
  if (r.ok() && r.result.value("shared_bytes", int64_t{0}) > kSm90SharedLimit) {
    check["status"] = "out-of-resources";
    check["reason"] = fmt::format("{} bytes of shared memory; sm_90 allows {}", r.result.value("shared_bytes", int64_t{0}),
                                  kSm90SharedLimit);
    return check;
  }
  if (r.ok()) {
    check["status"] = "ok";
    check["shared_bytes"] = r.result.value("shared_bytes", nlohmann::json());
    if (r.result.contains("cubin")) check["registers"] = r.result["cubin"].value("registers", nlohmann::json());
    check["seconds"] = r.result.value("compile_seconds", 0.0);
    return check;
  }
  if (r.status != WorkerReply::Status::kFailed) {
    throw EnvironmentError(fmt::format("the compile worker failed: {}", r.message));
  }
  if (r.error_type == "ModuleNotFoundError" && r.message.find("'triton'") != std::string::npos) {
    throw EnvironmentError(fmt::format("the worker's python ({}) has no triton: the sm_90 compile check needs it "
                                       "(set TRITONFORGE_PYTHON, or pass --no-compile)",
                                       worker.options().python));
  }
  check["status"] = r.result.is_object() ? r.result.value("status", "compile-error") : "compile-error";
  std::string msg = r.error_type.empty() ? r.message : r.error_type + ": " + r.message;
  if (msg.size() > 600) msg = msg.substr(0, 600) + "...";
  check["reason"] = msg;
  return check;
}

}  // namespace

std::map<std::string, nlohmann::json> parseSignature(const std::string& spec) {
  std::map<std::string, nlohmann::json> out;
  size_t at = 0;
  while (at <= spec.size()) {
    size_t comma = spec.find(',', at);
    std::string item = trim(spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    at = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw UserError(fmt::format("--signature: '{}' is not name=type", item));
    std::string name = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    if (name.empty() || value.empty()) throw UserError(fmt::format("--signature: '{}' is not name=type", item));
    bool integer = value.find_first_not_of("-0123456789") == std::string::npos && value != "-";
    if (integer) out[name] = std::stoll(value);
    else if (value == "True" || value == "true") out[name] = true;
    else if (value == "False" || value == "false") out[name] = false;
    else out[name] = value;
  }
  return out;
}

TransformResult runTransform(WorkerProcess& worker, const TransformRequest& req, const std::string& text) {
  PassSpec spec = parsePassSpec(req.pass);
  const Pass* pass = findPass(spec.name);
  if (!pass) {
    std::string known;
    for (const auto& p : allPasses()) known += (known.empty() ? "" : ", ") + p->info().name;
    throw UserError(fmt::format("no pass named '{}' (passes: {})", spec.name, known));
  }
  PassFilter filter;
  if (!req.disabled.empty()) filter.disable(req.disabled);
  if (!filter.enabled(spec.name)) {
    throw UserError(fmt::format("the pass '{}' is switched off (--disable-pass)", spec.name));
  }
  PassArgs args = validateArgs(*pass, spec);

  ParsedSource src = parseSource(worker, req.source, text);
  ModuleIR ir = buildModuleIR(src);
  std::string kernel = req.kernel;
  if (kernel.empty()) {
    if (ir.kernels.size() != 1) {
      throw UserError(fmt::format("{}: {} @triton.jit kernels; name one with --kernel", req.source.string(),
                                  ir.kernels.size()));
    }
    kernel = ir.kernels.front().name;
  }
  const Kernel* k = ir.kernel(kernel);
  if (!k) throw UserError(fmt::format("{}: no @triton.jit kernel named '{}'", req.source.string(), kernel));

  PassContext ctx = PassContext::make(ir, *k);
  if (!req.task.empty()) {
    Task task = loadTask(req.task);
    auto it = task.signatures.find(kernel);
    if (it != task.signatures.end()) ctx.signature = it->second;
    ctx.rtol = task.check.rtol;
    ctx.atol = task.check.atol;
  }
  for (const auto& [p, v] : parseSignature(req.signature)) {
    if (!k->param(p)) throw UserError(fmt::format("--signature: '{}' is not a parameter of {}", p, kernel));
    ctx.signature[p] = v;
  }
  if (req.rtol) ctx.rtol = req.rtol;
  if (req.atol) ctx.atol = req.atol;

  TransformResult result;
  result.kernel = kernel;
  result.outcome = pass->run(ctx, args);
  if (!result.outcome.applied) {
    result.status = TransformResult::Status::kRefused;
    return result;
  }
  // The result must parse; a pass that writes broken Python is a bug, reported as such.
  ParsedSource out_src;
  try {
    out_src = parseSource(worker, req.source, result.outcome.source);
  } catch (const UserError& e) {
    result.status = TransformResult::Status::kBroken;
    result.message = fmt::format("the rewritten source does not parse ({}); this is a bug of the pass '{}'",
                                 e.what(), spec.name);
    return result;
  }
  ModuleIR out_ir = buildModuleIR(out_src);
  if (!out_ir.kernel(kernel)) {
    result.status = TransformResult::Status::kBroken;
    result.message = fmt::format("the rewritten source has no kernel '{}'", kernel);
    return result;
  }
  result.status = TransformResult::Status::kApplied;
  if (!req.compile) {
    result.compile = {{"status", "skipped"}, {"reason", "--no-compile"}};
    return result;
  }
  result.compile = compileCheck(worker, req.source, result.outcome.source, out_ir, kernel, ctx.signature,
                                result.outcome.param_types);
  std::string status = result.compile.value("status", "");
  if (status != "ok" && status != "skipped") {
    result.status = TransformResult::Status::kCompileFailed;
    result.message = fmt::format("the result does not compile for sm_90 ({}): {}", status,
                                 result.compile.value("reason", ""));
  }
  return result;
}

}  // namespace tf
