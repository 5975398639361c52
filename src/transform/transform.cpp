#include "transform/transform.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "kernel/module_ir.h"
#include "kernel/tunables.h"
#include "task/imported_kernels.h"
#include "task/task.h"
#include "transform/kernel_normalize.h"
#include "transform/pass_context.h"
#include "util/error.h"
#include "util/fs.h"
#include "task/source_parser.h"
#include "transform/pass_applier.h"
#include "util/temp_dir.h"
#include "worker/worker_client.h"

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

// Is the launch's argument an integer the launcher reads off a tensor (`b.stride(1)`,
// `x.shape[0]`, `t.numel()`), an integer literal, or a choice between such (`1 if b_t is b else
// b_t.stride(1)`)? Such a parameter compiles as i32 when the signature does not name it: one an
// earlier rewrite added (relayout's `b_stride1`) is typed so in a later `transform` call.
bool integerArgument(const Node& e) {
  if (intLiteral(e)) return true;
  if (isType(e, "IfExp")) return integerArgument(e["body"]) && integerArgument(e["orelse"]);
  if (isType(e, "Subscript")) return isType(e["value"], "Attribute") && e["value"]["attr"] == "shape";
  if (isType(e, "Call") && isType(e["func"], "Attribute")) {
    const std::string& m = e["func"]["attr"].get_ref<const std::string&>();
    return m == "stride" || m == "size" || m == "numel" || m == "dim";
  }
  return false;
}

// Compiles `kernel` of the rewritten source for sm_90 with the worker's `compile` op.
nlohmann::json compileCheck(WorkerProcess& worker, const fs::path& original, const std::string& text,
                            const ModuleIR& ir, const std::string& kernel,
                            const std::map<std::string, nlohmann::json>& signature,
                            const std::map<std::string, std::string>& added, const Companion* companion = nullptr) {
  nlohmann::json check = {{"target", kSm90Target.label()}};
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
  std::map<std::string, std::vector<int64_t>> alternatives;
  std::set<std::string> flags;
  nlohmann::json options = nlohmann::json::object();
  for (const auto& fn : launchers(ir, kernel)) {
    TunableSet set = discoverTunables(ir, fn, {kernel});
    for (const auto& t : set.items) {
      if (!t.value || t.id.find('#') != std::string::npos || t.origin == TunableOrigin::kLauncherScale) continue;
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
      // Literal constexpr arguments the tunables leave alone (flags, split factors). One
      // launched with several values (split-rows' stages) is compiled with each.
      for (const auto& a : site.args) {
        const Param* p = k->param(a.param);
        if (p && !p->is_constexpr && !sig.contains(a.param) && integerArgument(*a.expr)) sig[a.param] = "i32";
        if (!p || !p->is_constexpr) continue;
        if (auto v = intLiteral(*a.expr)) {
          auto& alt = alternatives[a.param];
          if (std::find(alt.begin(), alt.end(), *v) == alt.end()) alt.push_back(*v);
        }
        // A flag the launcher computes (`B_K_MAJOR=b.stride(0) != 1`): both values are compiled.
        if (isType(*a.expr, "Compare") || (isType(*a.expr, "UnaryOp") && isType((*a.expr)["op"], "Not"))) {
          flags.insert(a.param);
          if (!values.count(a.param)) values[a.param] = 0;
          continue;
        }
        if (values.count(a.param)) continue;
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
  // A flag: each value is compiled; the check passes if one does (the launch that computes the
  // other fails at run time, where the search's verification sees it), and says which did not.
  for (const auto& p : flags) {
    if (signature.count(p)) continue;
    nlohmann::json ok, failed;
    int64_t failed_value = 0;
    for (int64_t v : {0, 1}) {
      std::map<std::string, nlohmann::json> fixed = signature;
      fixed[p] = v;
      nlohmann::json r = compileCheck(worker, original, text, ir, kernel, fixed, added, companion);
      if (r.value("status", "") == "ok") {
        if (ok.is_null()) ok = std::move(r);
      } else if (failed.is_null()) {
        failed = std::move(r);
        failed_value = v;
      }
    }
    if (ok.is_null()) return failed;
    if (!failed.is_null()) {
      ok["not_compiled"] = {{"param", p}, {"value", failed_value}, {"status", failed.value("status", "")},
                            {"reason", failed.value("reason", "")}};
    }
    return ok;
  }
  for (const auto& [p, alt] : alternatives) {
    if (alt.size() < 2 || signature.count(p)) continue;
    for (size_t i = 1; i < alt.size(); ++i) {
      std::map<std::string, nlohmann::json> fixed = signature;
      fixed[p] = alt[i];
      nlohmann::json other = compileCheck(worker, original, text, ir, kernel, fixed, added, companion);
      if (other.value("status", "") != "ok") return other;
    }
    break;
  }
  // The module is loaded from a private copy beside nothing else; the original's folder
  // stays on the import path for the modules it imports.
  static int counter = 0;
  ++counter;
  TempDir dir("tf-transform-");
  fs::path file = dir.path() / original.filename();
  writeFileAtomic(file, text);
  CompileRequest req;
  req.path = file;
  req.kernel = kernel;
  req.module_name = fmt::format("tf_transform_{}_{}", getpid(), counter);
  req.search_path = {fs::absolute(original).parent_path()};
  // A module of a package imports the package's other modules by its name (FlagGems' `from
  // flag_gems.utils import triton_lang_extension as tle`): the package's root too.
  if (SourcePackage pkg = packageOf(fs::absolute(original)); !pkg.name.empty()) req.search_path.push_back(pkg.root);
  for (const auto& [p, t] : sig.items()) req.signature[p] = t.get<std::string>();
  req.constexprs = constexprs;
  for (const auto& [k, v] : options.items()) req.options[k] = v.get<int64_t>();
  if (companion) {
    // The kernel the pass added, with the rewritten kernel's parameters and its own.
    req.kernel = companion->kernel;
    for (const auto& [p, t] : companion->types) req.signature[p] = t;
    for (const auto& [p, v] : companion->constexprs) req.constexprs[p] = v;
    req.options.clear();
    if (!companion->config.empty()) {
      req.config = {{"function", companion->config}, {"args", companion->config_args}, {"sets", companion->config_sets}};
    }
    check["kernel"] = companion->kernel;
  }
  CompileReply r = WorkerClient(worker).compile(req);
  if (r.worker == WorkerReply::Status::kOk && r.status == "skipped") {
    check["status"] = "skipped";
    check["reason"] = r.message;
    return check;
  }
  check["constexprs"] = constexprs;
  check["options"] = options;
  check["target"] = req.target.label();
  // A program may use at most the GPU's shared memory per block; the compile does not check.
  const int64_t limit = GpuLimits{}.sharedPerBlock();
  if (r.ok() && r.shared_bytes.value_or(0) > limit) {
    check["status"] = "out-of-resources";
    check["reason"] = fmt::format("{} bytes of shared memory; {} allows {}", *r.shared_bytes, req.target.label(), limit);
    return check;
  }
  if (r.ok()) {
    check["status"] = "ok";
    check["shared_bytes"] = r.shared_bytes ? nlohmann::json(*r.shared_bytes) : nlohmann::json();
    check["registers"] = r.registers ? nlohmann::json(*r.registers) : nlohmann::json();
    check["seconds"] = r.result.contains("compile_seconds") && r.result["compile_seconds"].is_number()
                           ? r.result["compile_seconds"].get<double>()
                           : 0.0;
    return check;
  }
  if (r.worker != WorkerReply::Status::kFailed) {
    throw EnvironmentError(fmt::format("the compile worker failed: {}", r.message));
  }
  if (r.error_type == "ModuleNotFoundError" && r.message.find("'triton'") != std::string::npos) {
    throw EnvironmentError(fmt::format("the worker's python ({}) has no triton: the sm_90 compile check needs it "
                                       "(set TRITONFORGE_PYTHON, or pass --no-compile)",
                                       worker.options().python));
  }
  check["status"] = r.status;
  std::string msg = r.message;
  if (msg.size() > 600) msg = msg.substr(0, 600) + "...";
  check["reason"] = msg;
  return check;
}

}  // namespace

std::map<std::string, nlohmann::json> parseSignature(const std::string& spec) {
  std::map<std::string, nlohmann::json> out;
  size_t at = 0;
  while (at <= spec.size()) {
    // the next comma outside brackets (a descriptor's block shape: tensordesc<fp16[64, 64]>)
    size_t comma = at;
    for (int depth = 0; comma < spec.size(); ++comma) {
      if (spec[comma] == '[' || spec[comma] == '<') ++depth;
      else if ((spec[comma] == ']' || spec[comma] == '>') && depth > 0) --depth;
      else if (spec[comma] == ',' && depth == 0) break;
    }
    if (comma >= spec.size()) comma = std::string::npos;
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

TransformPassApplier::TransformPassApplier(WorkerProcess& worker, TransformSettings settings,
                                           std::set<std::string> switched_off)
    : PassApplier(std::move(switched_off)), worker_(worker), settings_(std::move(settings)) {}

TransformPassApplier::TransformPassApplier(WorkerOptions worker_options, TransformSettings settings,
                                           std::set<std::string> switched_off)
    : PassApplier(std::move(switched_off)),
      own_worker_([&] {
        worker_options.name = "pass worker";
        return std::make_unique<WorkerProcess>(std::move(worker_options));
      }()),
      worker_(*own_worker_),
      settings_(std::move(settings)) {}

TransformPassApplier::~TransformPassApplier() = default;

std::vector<std::string> TransformPassApplier::known() const {
  std::vector<std::string> out;
  for (const auto& p : allPasses()) out.push_back(p->info().name);
  return out;
}

std::vector<nlohmann::json> TransformPassApplier::paramVariants(const std::string& pass, const nlohmann::json& params,
                                                                size_t limit) const {
  std::vector<nlohmann::json> out{params.is_object() ? params : nlohmann::json::object()};
  const Pass* p = findPass(pass);
  if (!p) return out;
  for (const auto& spec : p->info().params) {
    if (spec.search.empty() || out.front().contains(spec.name)) continue;
    std::vector<std::string> values = spec.search;
    auto def = std::find(values.begin(), values.end(), spec.default_value);
    if (def != values.end()) std::rotate(values.begin(), def, def + 1);  // the pass's default first
    std::vector<nlohmann::json> next;
    for (const auto& base : out) {
      for (const auto& v : values) {
        nlohmann::json variant = base;
        if (spec.kind == PassParamKind::kInt) variant[spec.name] = std::stoll(v);
        else variant[spec.name] = v;
        next.push_back(std::move(variant));
      }
    }
    out = std::move(next);
  }
  if (out.size() > limit) out.resize(limit);
  return out;
}

PassApplication TransformPassApplier::rewrite(const PassRequest& request) {
  PassApplication out;
  out.status = PassApplication::Status::kRefused;
  const Pass* pass = findPass(request.pass);
  try {
    PassArgs args = validateArgs(*pass, parsePassSpec(passSpecText(request.pass, request.params)));
    ParsedSource src = parseSource(worker_, settings_.source_path, request.source);
    // Kernels imported from the package's other modules are seen too: a pass that edits only
    // the launch (its info says so) may rewrite how the task's source launches them.
    ModuleIR ir = buildModuleIR(src, pass->info().launcher_only ? settings_.imported : nullptr);
    const Kernel* k = ir.kernel(request.kernel);
    if (!k) {
      auto imported = ir.aliases.find(request.kernel);
      out.message = imported != ir.aliases.end()
                        ? fmt::format("'{}' is imported ({}): a pass rewrites the kernels of the task's source only",
                                      request.kernel, imported->second)
                        : fmt::format("the source has no @triton.jit kernel named '{}'", request.kernel);
      return out;
    }
    PassContext ctx = PassContext::make(ir, *k);
    if (auto it = settings_.signatures.find(request.kernel); it != settings_.signatures.end()) ctx.signature = it->second;
    ctx.rtol = settings_.rtol;
    ctx.atol = settings_.atol;
    // The normal form reads the @triton.jit helpers the source imports too (a program id
    // through FlagGems' `tle.program_id`): its context sees them, the pass's does not.
    PassOutcome o = runWithNormalForm(*pass, args, ctx, src, settings_.imported, normal_form_, settings_.source_path,
                                      pass->info().launcher_only ? settings_.imported : nullptr);
    if (!o.applied) {
      out.message = o.reason;
      return out;
    }
    out.status = PassApplication::Status::kApplied;
    out.source = std::move(o.source);
    out.notes = std::move(o.notes);
    added_types_ = std::move(o.param_types);
    companions_ = std::move(o.companions);
    signature_ = ctx.signature;
  } catch (const UserError& e) {
    // Bad parameters from an engine, a source that does not parse: the pass cannot run.
    out.message = e.what();
  }
  return out;
}

PassApplication TransformPassApplier::check(const PassRequest& request, PassApplication applied) {
  // The result must parse; a pass that writes broken Python is a bug, reported as such.
  ParsedSource out_src;
  try {
    out_src = parseSource(worker_, settings_.source_path, applied.source);
  } catch (const UserError& e) {
    applied.status = PassApplication::Status::kBroken;
    applied.message = fmt::format("the rewritten source does not parse ({}); this is a bug of the pass '{}'",
                                  e.what(), request.pass);
    return applied;
  }
  const Pass* pass = findPass(request.pass);
  bool launcher_only = pass && pass->info().launcher_only;
  ModuleIR out_ir = buildModuleIR(out_src, launcher_only ? settings_.imported : nullptr);
  if (!out_ir.kernel(request.kernel)) {
    applied.status = PassApplication::Status::kBroken;
    applied.message = fmt::format("the rewritten source has no kernel '{}'", request.kernel);
    return applied;
  }
  if (!settings_.compile) {
    applied.check = {{"status", "skipped"}, {"reason", "--no-compile"}};
    return applied;
  }
  if (launcher_only && out_ir.kernel(request.kernel)->home) {
    applied.check = {{"status", "skipped"}, {"reason", "the kernel is imported and unchanged (the pass edits the launch)"}};
    return applied;
  }
  applied.check = compileCheck(worker_, settings_.source_path, applied.source, out_ir, request.kernel, signature_,
                               added_types_);
  std::string status = applied.check.value("status", "");
  // The kernels the pass added beside it compile too (gluon-gemm's Gluon kernel).
  for (const Companion& c : companions_) {
    if (status != "ok") break;
    nlohmann::json other = compileCheck(worker_, settings_.source_path, applied.source, out_ir, request.kernel,
                                        signature_, added_types_, &c);
    applied.check["companions"].push_back(other);
    std::string st = other.value("status", "");
    if (st != "ok" && st != "skipped") {
      applied.check["status"] = st;
      applied.check["reason"] = fmt::format("{}: {}", c.kernel, other.value("reason", ""));
      status = st;
    }
  }
  if (status != "ok" && status != "skipped") {
    applied.status = PassApplication::Status::kDoesNotCompile;
    applied.message = fmt::format("the result does not compile for sm_90 ({}): {}", status,
                                  applied.check.value("reason", ""));
  }
  return applied;
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
  for (const auto& name : req.switched_off) filter.disable(name);
  if (!filter.enabled(spec.name)) {
    throw UserError(fmt::format("the pass '{}' is switched off (--no-pass)", spec.name));
  }
  validateArgs(*pass, spec);  // bad parameters are the user's: exit 2 before anything runs

  ParsedSource src = parseSource(worker, req.source, text);
  // The kernels and @triton.jit helpers the source imports from its package's other modules:
  // a pass that edits only the launch applies to those kernels too, and the normal form reads
  // a program id through such a helper (FlagGems' `tle.program_id`) as the tl call it wraps.
  std::unique_ptr<ImportedKernels> imported = loadImportedKernels(worker, src, req.source, packageOf(req.source));
  ModuleIR ir = buildModuleIR(src, imported ? &imported->kernels : nullptr);
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

  TransformSettings settings;
  settings.source_path = req.source;
  settings.compile = req.compile;
  settings.imported = imported ? &imported->kernels : nullptr;
  if (!req.task.empty()) {
    Task task = loadTask(req.task);
    if (auto it = task.signatures.find(kernel); it != task.signatures.end()) settings.signatures[kernel] = it->second;
    settings.rtol = task.check.rtol;
    settings.atol = task.check.atol;
  }
  for (const auto& [p, v] : parseSignature(req.signature)) {
    if (!k->param(p)) throw UserError(fmt::format("--signature: '{}' is not a parameter of {}", p, kernel));
    settings.signatures[kernel][p] = v;
  }
  if (req.rtol) settings.rtol = req.rtol;
  if (req.atol) settings.atol = req.atol;

  nlohmann::json params = nlohmann::json::object();
  for (const auto& [key, value] : spec.args) params[key] = value;
  TransformPassApplier applier(worker, settings, filter.disabled());
  PassApplication a = applier.apply({text, kernel, spec.name, params});

  TransformResult result;
  result.kernel = kernel;
  result.outcome.applied = a.applied();
  result.outcome.source = a.source;
  result.outcome.notes = a.notes;
  result.compile = a.check;
  result.seconds = a.seconds;
  switch (a.status) {
    case PassApplication::Status::kApplied:
      result.status = TransformResult::Status::kApplied;
      break;
    case PassApplication::Status::kRefused:
      result.status = TransformResult::Status::kRefused;
      result.outcome.reason = a.message;
      break;
    case PassApplication::Status::kDoesNotCompile:
      result.status = TransformResult::Status::kCompileFailed;
      result.message = a.message;
      break;
    case PassApplication::Status::kBroken:
    case PassApplication::Status::kSwitchedOff:
    case PassApplication::Status::kUnknownPass:
      // (switched off and unknown were refused above, as the user's error)
      result.status = TransformResult::Status::kBroken;
      result.message = a.message;
      break;
  }
  return result;
}

}  // namespace tf
