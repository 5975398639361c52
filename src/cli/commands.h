// The CLI's commands. Each command lives in its own cli/cmd_<name>.cpp and registers
// itself with a static CommandRegistration, so adding a command touches no shared file.
// A command's runner returns its exit code: 0 ok, 1 environment failure, 2 bad input,
// 3 nothing measured because there is no GPU.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tf {

struct GlobalOptions {
  std::string python;   // --python
  int verbose = 0;      // -v
};

using CommandRunner = std::function<int()>;
// Adds the subcommand to `app` and returns the function that runs it once parsed.
using CommandRegistrar = CommandRunner (*)(CLI::App& app, const GlobalOptions& global);

struct CommandRegistration {
  CommandRegistration(const char* name, int order, CommandRegistrar registrar);
};

struct RegisteredCommand {
  std::string name;
  int order;               // position in --help
  CommandRegistrar registrar;
};
// Every registered command, in `order`.
std::vector<RegisteredCommand> registeredCommands();

// Checks of flag values shared by the commands; each throws a UserError naming the flag.
// A timeout in seconds: finite, > 0, at most a week (longer ones overflow the clocks).
void checkTimeoutFlag(std::string_view flag, double seconds);
// A finite number > 0 and at most `max` (a budget, a time per case): "--budget-ms".
void checkPositiveFlag(std::string_view flag, double value, double max);
// --jobs: 0 means automatic, else 1 to 1024 workers.
void checkJobsFlag(int jobs);

struct WorkerOptions;
// Worker options from the global flags: the interpreter and the worker package.
WorkerOptions workerOptionsFor(const GlobalOptions& global, bool probe_torch);

}  // namespace tf
