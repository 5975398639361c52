// tritonforge export RESULT.json|DB [--run ID] [--format autotune|table] [-o FILE]
//
// The best verified configuration per shape (task case) of an optimize run, or, from a
// results database, the best the database knows for the task of a run (--run, default the
// most recent), in that run's environment:
//   autotune  the distinct per-shape bests as an @triton.autotune config list, its key chosen
//             by the autotune pass (the sizes in masks and loop bounds). Without -o the
//             decorator is printed, ready to paste; with -o FILE the pass is applied to a
//             copy of the task's source (launch values removed, grid a lambda META), written
//             to FILE. The source itself is overwritten only when FILE names it.
//   table     a dispatch table (JSON, schema tritonforge.dispatch/1) on stdout, or with -o
//             FILE written there with tritonforge_dispatch.py (load / pick the nearest tuned
//             shape) in the same folder.
//
// Exit codes: 0 written; 1 the environment failed; 2 bad input (not an optimize result, no
// measured configuration, the pass refused).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/export_source.h"
#include "report/config_export.h"
#include "transform/transform.h"
#include "util/error.h"
#include "util/fs.h"
#include "worker/worker_process.h"

namespace tf {
namespace {
namespace fs = std::filesystem;

struct ExportFlags {
  std::string input;
  std::optional<int64_t> run;
  std::string format = "autotune";
  std::string output;
};

int exportTable(const ShapeTable& table, const ExportFlags& f) {
  std::string json = dispatchTableJson(table).dump(2) + "\n";
  if (f.output.empty()) {
    std::fputs(json.c_str(), stdout);
    return 0;
  }
  fs::path helper = fs::absolute(f.output).parent_path() / "tritonforge_dispatch.py";
  refuseOutputOverInput(helper, f.input, "result");
  writeFileAtomic(f.output, json);
  writeFileAtomic(helper, dispatchHelperPython());
  std::fprintf(stderr, "wrote %s and %s\n", f.output.c_str(), helper.string().c_str());
  return 0;
}

int exportAutotune(const ShapeTable& table, const ExportFlags& f, const GlobalOptions& global) {
  if (table.kernels.empty()) throw UserError(fmt::format("{}: the run tuned no kernel parameter", f.input));
  if (table.source.empty()) {
    throw UserError(fmt::format("{}: the run's task file could not be read, and the autotune export edits its source "
                                "(--format table needs no source)", f.input));
  }
  const fs::path source = table.source;
  std::string text = readTextFile(source, "source (named by the result's task.source)", kMaxSourceFileBytes);
  WorkerOptions wo = workerOptionsFor(global, false);
  wo.name = "transform worker";
  WorkerProcess worker(wo);
  std::string snippets;
  for (const auto& kernel : table.kernels) {
    std::string configs = autotuneConfigsArg(table, kernel);
    if (configs == "[]") continue;  // every shape's best leaves this kernel as written
    TransformRequest req;
    req.source = source;
    req.kernel = kernel;
    req.pass = "autotune:configs=" + configs;
    req.compile = false;  // the types of the kernel's parameters are not known here
    TransformResult r = runTransform(worker, req, text);
    if (r.status == TransformResult::Status::kRefused) {
      throw UserError(fmt::format("{}: the autotune pass refused {}: {}", source.string(), kernel, r.outcome.reason));
    }
    if (r.status != TransformResult::Status::kApplied) {
      throw UserError(fmt::format("{}: autotune on {}: {}", source.string(), kernel, r.message));
    }
    text = r.outcome.source;
    snippets += fmt::format("# {}: the best configuration of each of {} shape(s); put it above @triton.jit and stop "
                            "passing the tuned values at the launch (export -o FILE does both)\n{}\n",
                            kernel, table.shapes.size(), autotuneDecorator(text, kernel));
  }
  if (snippets.empty()) throw UserError(fmt::format("{}: every shape's best is the kernel as written", f.input));
  if (f.output.empty()) {
    std::fputs(snippets.c_str(), stdout);
    return 0;
  }
  if (sameFile(source, f.output)) {
    std::fprintf(stderr, "overwriting %s with the autotuned source, as -o asks\n", source.string().c_str());
  }
  writeFileAtomic(f.output, text);
  std::fprintf(stderr, "wrote %s (%s with @triton.autotune)\n", f.output.c_str(), source.string().c_str());
  return 0;
}

int runExport(const ExportFlags& f, const GlobalOptions& global) {
  if (f.format != "autotune" && f.format != "table") {
    throw UserError(fmt::format("--format must be autotune or table, not '{}'", f.format));
  }
  refuseOutputOverInput(f.output, f.input, "result");
  nlohmann::json result;
  if (isSqliteFile(f.input)) {
    result = resultFromDatabase(f.input, f.run);
  } else {
    if (f.run) throw UserError(fmt::format("{}: --run selects a run of a results database, and this is no database", f.input));
    std::string text = readTextFile(f.input, "optimize result");
    result = nlohmann::json::parse(text, nullptr, false);
    if (result.is_discarded()) throw UserError(fmt::format("{}: not valid JSON", f.input));
  }
  ShapeTable table = bestPerShape(result, f.input);
  if (f.format == "table") return exportTable(table, f);
  return exportAutotune(table, f, global);
}

}  // namespace

CommandRunner registerExport(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kExportRegistration("export", 57, &registerExport);

CommandRunner registerExport(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* sub = app.add_subcommand(
      "export", "The best configuration per shape of an optimize run, as @triton.autotune configs or a dispatch table");
  sub->add_option("result", flags->input, "An optimize result.json, or a results database (SQLite)")->required();
  sub->add_option("--run", flags->run, "With a database: the run whose task and environment to export (default: the latest)");
  sub->add_option("--format", flags->format, "autotune (default) or table");
  sub->add_option("-o,--output", flags->output,
                  "autotune: write the autotuned copy of the source here; table: write the table here (and "
                  "tritonforge_dispatch.py beside it)");
  return [flags, &global] { return runExport(*flags, global); };
}

}  // namespace tf
