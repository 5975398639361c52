// Parsing a Python source with the worker's `parse` op (Python's own ast) into kernel/'s
// ParsedSource. kernel/ never starts a worker: its callers parse here and hand it the result.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "kernel/ast.h"
#include "worker/worker_client.h"

namespace tf {

// Parses `text` (the contents of `path`). Throws UserError "path:line:col: syntax error:
// ..." on a syntax error, EnvironmentError when the worker cannot run.
ParsedSource parseSource(WorkerClient& worker, const std::filesystem::path& path, std::string text);
ParsedSource parseSource(WorkerProcess& worker, const std::filesystem::path& path, std::string text);

// Reads, checks (not empty, UTF-8) and parses a file. Throws UserError naming it.
ParsedSource parseFile(WorkerProcess& worker, const std::filesystem::path& path, std::string_view what);

}  // namespace tf
