#include "task/task_sources.h"

#include <fmt/format.h>

#include "util/error.h"
#include "task/source_parser.h"

namespace tf {

bool definesName(const ParsedSource& src, const std::string& name) {
  for (const auto& s : src.ast["body"]) {
    const std::string& t = nodeType(s);
    if ((t == "FunctionDef" || t == "AsyncFunctionDef" || t == "ClassDef") && s["name"] == name) return true;
    if (t == "Assign") {
      for (const auto& target : s["targets"]) if (isType(target, "Name") && target["id"] == name) return true;
    }
    if (t == "Import" || t == "ImportFrom") {
      for (const auto& a : s["names"]) {
        std::string local = a["asname"].is_string() ? a["asname"].get<std::string>() : a["name"].get<std::string>();
        if (local == name) return true;
      }
    }
  }
  return false;
}

std::unique_ptr<TaskSources> loadTaskSources(const Task& task, WorkerProcess& parser) {
  auto out = std::make_unique<TaskSources>();
  out->source = parseFile(parser, task.source, "kernel source");
  out->harness = parseFile(parser, task.harness, "harness");
  // "Class.apply": the class must be defined here (its forward is followed later).
  const std::string head = task.launcher.substr(0, task.launcher.find('.'));
  if (!definesName(out->source, head)) {
    throw UserError(fmt::format("{}: key 'launcher': {} defines no function or class '{}'", task.path.string(),
                                task.source.filename().string(), head));
  }
  for (const char* fn : {"make_inputs", "reference"}) {
    if (!definesName(out->harness, fn)) {
      throw UserError(fmt::format("{}: key 'harness': {} defines no function '{}'", task.path.string(),
                                  task.harness.filename().string(), fn));
    }
  }
  out->imported = loadImportedKernels(parser, out->source, task.source, task.package);
  out->ir = buildModuleIR(out->source, &out->imported->kernels);
  if (out->ir.kernels.empty()) {
    throw UserError(fmt::format("{}: no @triton.jit kernel found, in it or in the modules of its package it imports "
                                "kernels from",
                                task.source.string()));
  }
  for (const auto& k : task.kernels) {
    if (!out->ir.kernel(k)) {
      throw UserError(fmt::format("{}: key 'kernels': {} has no @triton.jit kernel '{}'", task.path.string(),
                                  task.source.filename().string(), k));
    }
  }
  for (const auto& [k, params] : task.signatures) {
    const Kernel* kernel = out->ir.kernel(k);
    if (!kernel) {
      throw UserError(fmt::format("{}: key 'signature.{}': no such kernel in {}", task.path.string(), k,
                                  task.source.filename().string()));
    }
    for (const auto& [p, v] : params) {
      if (!kernel->param(p)) {
        throw UserError(fmt::format("{}: key 'signature.{}.{}': kernel '{}' has no parameter '{}'",
                                    task.path.string(), k, p, k, p));
      }
    }
  }
  return out;
}

}  // namespace tf
