// The CLI's commands. Each registers its subcommand and options on the app and returns the
// function that runs it (its exit code: 0 ok, 1 environment failure, 2 bad input, 3 nothing
// measured because there is no GPU).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace tf {

struct GlobalOptions {
  std::string python;   // --python
  int verbose = 0;      // -v
};

using CommandRunner = std::function<int()>;

CommandRunner registerOptimize(CLI::App& app, const GlobalOptions& global);
CommandRunner registerAnalyze(CLI::App& app, const GlobalOptions& global);

// Shared by the commands.
struct WorkerOptions;
WorkerOptions workerOptionsFor(const GlobalOptions& global, bool probe_torch);

}  // namespace tf
