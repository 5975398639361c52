// tritonforge transform SOURCE.py --kernel NAME --pass NAME[:k=v,...] [-o OUT.py]
// tritonforge transform --list
//
// Applies one pass to one kernel (and the code that launches it). The result goes to
// stdout, or to -o; the input is overwritten only when -o names it, and then with a note
// on stderr. A refusal (a precondition fails) prints the reason and exits 2; so does a
// result that does not compile for sm_90.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "report/diff.h"
#include "transform/pass.h"
#include "transform/transform_flags.h"
#include "util/error.h"
#include "util/fs.h"
#include "worker/worker_process.h"

namespace tf {
namespace {
namespace fs = std::filesystem;

struct TransformFlags {
  TransformRequest req;
  std::string source;
  std::string output;
  bool list = false;
  bool diff = false;
  bool json = false;
};

int runTransformCommand(TransformFlags& f, const GlobalOptions& global) {
  if (f.list) {
    PassFilter filter;
    for (const auto& name : f.req.switched_off) filter.disable(name);
    std::fputs(describePasses(filter).c_str(), stdout);
    return 0;
  }
  if (f.source.empty()) throw UserError("transform: give a SOURCE.py (or --list)");
  if (f.req.pass.empty()) throw UserError("transform: give --pass NAME[:key=value,...] (see transform --list)");
  f.req.source = f.source;
  std::string text = readTextFile(f.req.source, "source", kMaxSourceFileBytes);
  WorkerOptions wo = workerOptionsFor(global, false);
  wo.name = "transform worker";
  WorkerProcess worker(wo);
  TransformResult r = runTransform(worker, f.req, text);

  if (f.json) {
    nlohmann::json j = {{"schema", "tritonforge.transform/1"},
                        {"source", f.source},
                        {"kernel", r.kernel},
                        {"pass", f.req.pass},
                        {"applied", r.outcome.applied},
                        {"notes", r.outcome.notes},
                        {"compile", r.compile}};
    if (!r.outcome.applied) j["reason"] = r.outcome.reason;
    if (!r.message.empty()) j["message"] = r.message;
    std::cerr << j.dump(2) << std::endl;
  }
  switch (r.status) {
    case TransformResult::Status::kRefused:
      std::fprintf(stderr, "tritonforge: %s: %s refused: %s\n", f.source.c_str(), f.req.pass.c_str(),
                   r.outcome.reason.c_str());
      return 2;
    case TransformResult::Status::kBroken:
      std::fprintf(stderr, "tritonforge: %s\n", r.message.c_str());
      return 1;
    case TransformResult::Status::kCompileFailed:
      std::fprintf(stderr, "tritonforge: %s: %s\n", f.source.c_str(), r.message.c_str());
      return 2;
    case TransformResult::Status::kApplied:
      break;
  }
  for (const auto& n : r.outcome.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  std::string status = r.compile.value("status", "");
  if (status == "ok") {
    std::fprintf(stderr, "compiled for sm_90: %s shared memory bytes, %s registers\n",
                 r.compile.value("shared_bytes", nlohmann::json()).dump().c_str(),
                 r.compile.value("registers", nlohmann::json()).dump().c_str());
    if (r.compile.contains("not_compiled")) {
      const auto& nc = r.compile["not_compiled"];
      std::fprintf(stderr, "note: with %s=%s it does not compile (%s): a launch that sets it so fails\n",
                   nc.value("param", "").c_str(), nc["value"].dump().c_str(), nc.value("status", "").c_str());
    }
  } else if (status == "skipped") {
    std::fprintf(stderr, "compile check skipped: %s\n", r.compile.value("reason", "").c_str());
  }
  if (status == "ok" && r.compile.contains("companions")) {
    for (const auto& c : r.compile["companions"]) {
      if (c.value("status", "") == "ok") {
        std::fprintf(stderr, "%s compiled for sm_90: %s shared memory bytes, %s registers\n",
                     c.value("kernel", "").c_str(), c.value("shared_bytes", nlohmann::json()).dump().c_str(),
                     c.value("registers", nlohmann::json()).dump().c_str());
      } else {
        std::fprintf(stderr, "%s not compiled: %s\n", c.value("kernel", "").c_str(), c.value("reason", "").c_str());
      }
    }
  }
  std::string out_text = f.diff ? unifiedDiff(text, r.outcome.source, f.source, f.output.empty() ? f.source : f.output)
                                : r.outcome.source;
  if (f.output.empty()) {
    std::fwrite(out_text.data(), 1, out_text.size(), stdout);
    return 0;
  }
  if (sameFile(f.source, f.output)) {
    std::fprintf(stderr, "overwriting %s with the transformed source, as -o asks\n", f.source.c_str());
  }
  writeFileAtomic(f.output, out_text);
  return 0;
}

}  // namespace

CommandRunner registerTransform(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kTransformRegistration("transform", 30, &registerTransform);

CommandRunner registerTransform(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<TransformFlags>();
  CLI::App* sub = app.add_subcommand("transform", "Apply one transformation pass to a kernel and its launcher");
  sub->add_option("source", flags->source, "The Python source file");
  sub->add_option("-o,--output", flags->output, "Write the result here (default: stdout); may name the input to overwrite it");
  sub->add_flag("--list", flags->list, "List the passes with their preconditions and parameters");
  sub->add_flag("--diff", flags->diff, "Print a unified diff instead of the whole source");
  sub->add_flag("--json", flags->json, "Also print a JSON summary (schema tritonforge.transform/1) on stderr");
  addTransformFlags(*sub, flags->req);
  return [flags, &global] { return runTransformCommand(*flags, global); };
}

}  // namespace tf
