// tritonforge: makes Triton kernels fast, with evidence. See README.md and docs/.
//
// Exit codes: 0 done; 1 the environment failed (no python3, a worker that will not start);
// 2 bad input (task file, source, flag), with one line naming the file and the problem;
// 3 nothing was measured because no CUDA GPU is visible.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <map>

#include "cli/commands.h"
#include "util/build_info.h"
#include "util/error.h"
#include "util/temp_dir.h"

int main(int argc, char** argv) {
  // Before any thread starts, so that every thread runs with the handler.
  tf::installSignalCleanup();
  tf::GlobalOptions global;
  CLI::App app{"tritonforge: profile-guided optimization of Triton kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", tf::toolVersionLine(), "The version and the git commit it was built from");
  app.add_option("--python", global.python,
                 "Python interpreter for the worker (default: $TRITONFORGE_PYTHON, else python3)");
  app.add_flag("-v,--verbose", global.verbose, "More detail on stderr (repeat for more)");

  app.fallthrough();  // global flags may also follow the command
  std::vector<std::pair<CLI::App*, tf::CommandRunner>> runners;
  for (const auto& cmd : tf::registeredCommands()) {
    tf::CommandRunner run = cmd.registrar(app, global);
    runners.emplace_back(app.get_subcommand(cmd.name), std::move(run));
  }

  if (argc > 1 && argv[1][0] != '-') {
    std::string first = argv[1], known;
    bool found = false;
    for (const auto& cmd : tf::registeredCommands()) {
      found = found || cmd.name == first;
      known += (known.empty() ? "" : ", ") + cmd.name;
    }
    if (!found) {
      std::fprintf(stderr, "tritonforge: unknown command '%s' (commands: %s)\n", first.c_str(), known.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tritonforge: %s (see tritonforge --help)\n", e.what());
    return 2;
  }
  try {
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
    std::fprintf(stderr, "tritonforge: no command given (see tritonforge --help)\n");
    return 2;
  } catch (const tf::UserError& e) {
    std::fprintf(stderr, "tritonforge: %s\n", e.what());
    return 2;
  } catch (const tf::EnvironmentError& e) {
    std::fprintf(stderr, "tritonforge: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tritonforge: internal error: %s\n", e.what());
    return 1;
  }
}
