// compileChecks, compileChecksOf (optimizer.h): what `optimize` can tell without a GPU.
#include <fmt/format.h>

#include <set>

#include "search/optimizer.h"
#include "worker/worker_client.h"

namespace tf {

nlohmann::json compileChecks(const Task& task, const TaskSources& sources, const TunableSet& tunables,
                             WorkerProcess& worker) {
  return compileChecksOf(task, task.source, sources.ir, tunables, worker, {"spills"});
}

nlohmann::json compileChecksOf(const Task& task, const std::filesystem::path& source, const ModuleIR& ir,
                               const TunableSet& tunables, WorkerProcess& worker, const std::vector<std::string>& want) {
  WorkerClient client(worker);
  nlohmann::json out = nlohmann::json::array();
  std::set<std::string> kernels;
  for (int s : tunables.sites) kernels.insert(ir.launches[static_cast<size_t>(s)].kernel);
  for (const auto& name : kernels) {
    const Kernel* k = ir.kernel(name);
    if (!k) continue;  // a kernel of another module: its own task compiles it
    CompileRequest req;
    req.path = source;
    req.kernel = name;
    req.want = want;
    // Loaded as the measurements load it: beside the task's source, inside its package.
    req.search_path = {task.source.parent_path()};
    if (!task.package.name.empty()) {
      req.search_path.push_back(task.package.root);
      req.package = task.package.name;
    }
    req.search_path.insert(req.search_path.end(), task.search_path.begin(), task.search_path.end());
    nlohmann::json check = {{"kernel", name}, {"target", req.target.label()}};
    auto sig_it = task.signatures.find(name);
    if (sig_it == task.signatures.end()) {
      check["status"] = "skipped";
      check["reason"] = fmt::format("no [signature.{}] in the task: parameter types are known only from a run on a GPU",
                                    name);
      out.push_back(check);
      continue;
    }
    for (const auto& [p, v] : sig_it->second) {
      if (v.is_string()) req.signature[p] = v.get<std::string>();
      else req.constexprs[p] = v;
    }
    std::vector<std::string> missing;
    for (const auto& p : k->params) {
      if (!p.is_constexpr || req.constexprs.contains(p.name)) continue;
      const Tunable* t = nullptr;
      for (const auto& x : tunables.items) {
        if (x.kernel == name && x.param == p.name) t = &x;
      }
      if (t && t->value) req.constexprs[p.name] = *t->value;
      else if (p.default_int) req.constexprs[p.name] = *p.default_int;
      else missing.push_back(p.name);
    }
    for (const auto& t : tunables.items) {
      if (t.kernel == name && (t.role == TunableRole::kNumWarps || t.role == TunableRole::kNumStages) && t.value) {
        req.options[t.param] = *t.value;
      }
    }
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
      check["status"] = "skipped";
      check["reason"] = fmt::format("the value of {} is computed at run time; give it in [signature.{}]", list, name);
      out.push_back(check);
      continue;
    }
    CompileReply r = client.compile(req);
    if (r.ok()) {
      check["status"] = "ok";
      check["result"] = r.result;
    } else {
      check["status"] = r.answered() ? r.status : "compile-error";
      check["reason"] = r.message;
    }
    out.push_back(check);
  }
  return out;
}

}  // namespace tf
