// Kernels a source imports from the other modules of its package (`from .kernels import
// _rms_fwd`, `from mypkg.ops.kernels import _rms_fwd`): those modules are parsed so that the
// source's launches of their kernels are found, analysed and tuned where the launch sets
// their parameters. Their own files are not rewritten (a variant is the task's source only).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernel/module_ir.h"
#include "task/task.h"

namespace tf {

class WorkerProcess;

struct ImportedKernels {
  std::vector<std::unique_ptr<ParsedSource>> sources;   // the sibling modules, parsed
  std::vector<std::unique_ptr<ModuleIR>> irs;           // their IRs (the kernels' `home`)
  std::vector<Kernel> kernels;                          // as defined there, `home` set
  std::vector<std::string> notes;                       // imports that could not be followed
};

// Follows the source's imports of modules of its own package (relative, or under the
// package's top name) that exist as files; a module that does not parse is noted, not fatal.
std::unique_ptr<ImportedKernels> loadImportedKernels(WorkerProcess& parser, const ParsedSource& source,
                                                     const std::filesystem::path& path, const SourcePackage& package);

}  // namespace tf
