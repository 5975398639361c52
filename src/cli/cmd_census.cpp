// tritonforge census FILE.py... [--json] [--pass a,b] [--no-pass a,b] [--no-check]
//
// Tries every transformation pass on every @triton.jit kernel of the files and counts what
// became of each (docs/census.md): applied, refused with its reason, broken (the rewrite does
// not parse), crashed (the pass threw). One worker parses each file once. Prints the counts
// (per pass; per reason class, ranked by kernels blocked), or with --json the whole census
// (schema tritonforge.census/1) on stdout. Exit codes: 0 done (refusals are results);
// 2 a file missing, not UTF-8 or not Python, or a bad flag; 1 the worker failed.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "transform/census.h"
#include "transform/pass.h"
#include "util/error.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

struct CensusFlags {
  std::vector<std::string> files;
  std::vector<std::string> passes;
  std::vector<std::string> switched_off;
  bool json = false;
  bool no_check = false;
};

int runCensusCommand(const CensusFlags& f, const GlobalOptions& global) {
  if (f.files.empty()) throw UserError("census: give one or more Python sources");
  CensusOptions options;
  options.check = !f.no_check;
  for (const auto& name : f.passes) {
    if (!findPass(name)) throw UserError("census: --pass: no pass named '" + name + "' (see transform --list)");
    options.passes.insert(name);
  }
  PassFilter filter;
  for (const auto& names : f.switched_off) filter.disable(names);
  options.switched_off = filter.disabled();
  std::vector<std::filesystem::path> paths(f.files.begin(), f.files.end());
  WorkerOptions wo = workerOptionsFor(global, false);
  wo.name = "census worker";
  WorkerProcess worker(wo);
  std::vector<CensusFile> files = runCensus(worker, paths, options);
  if (f.json) {
    std::cout << censusJson(files, options).dump(1) << std::endl;
    return 0;
  }
  std::fputs(censusSummaryText(censusCounts(files)).c_str(), stdout);
  return 0;
}

}  // namespace

CommandRunner registerCensus(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kCensusRegistration("census", 35, &registerCensus);

CommandRunner registerCensus(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<CensusFlags>();
  CLI::App* sub = app.add_subcommand("census", "Try every transformation pass on every kernel of the files and count the refusals");
  sub->add_option("files", flags->files, "Python sources with @triton.jit kernels");
  // One value per occurrence: a list option would take the files after it for pass names.
  sub->add_option("--pass", flags->passes, "Only these passes (repeatable; names may be comma separated)")
      ->allow_extra_args(false)
      ->take_all()
      ->delimiter(',');
  sub->add_option("--no-pass", flags->switched_off, "Switch a pass off (repeatable; names may be comma separated)")
      ->allow_extra_args(false)
      ->take_all()
      ->delimiter(',');
  sub->add_flag("--json", flags->json, "Print the whole census as JSON (schema tritonforge.census/1)");
  sub->add_flag("--no-check", flags->no_check, "Do not parse applied results again");
  return [flags, &global] { return runCensusCommand(*flags, global); };
}

}  // namespace tf
