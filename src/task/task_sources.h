// A task's source and harness, parsed, with the source's module IR, and checked against
// the task (the launcher and the harness functions exist).
#pragma once

#include <memory>

#include "kernel/module_ir.h"
#include "task/imported_kernels.h"
#include "task/task.h"

namespace tf {

class WorkerProcess;

struct TaskSources {
  ParsedSource source;
  ParsedSource harness;
  std::unique_ptr<ImportedKernels> imported;  // kernels of the package's other modules
  ModuleIR ir;  // points into `source` and `imported`: TaskSources is not movable
  // The kernels a rewritten source imports (for buildModuleIR of a variant).
  const std::vector<Kernel>* importedKernels() const { return imported ? &imported->kernels : nullptr; }
  TaskSources() = default;
  TaskSources(const TaskSources&) = delete;
  TaskSources& operator=(const TaskSources&) = delete;
};

// Parses and checks; throws UserError naming the task file and the key, or the source
// file and line for a syntax error.
std::unique_ptr<TaskSources> loadTaskSources(const Task& task, WorkerProcess& parser);

// True when the module defines `name` at top level (def, class, assignment or import).
bool definesName(const ParsedSource& src, const std::string& name);

}  // namespace tf
