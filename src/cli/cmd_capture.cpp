// tritonforge capture [-o DIR] [--rows N] [--top N] [--no-save] [--quota-mb N] [--per-kernel N]
//                    [--optimize [--budget S]] -- PROGRAM ARGS...
// tritonforge capture --show DIR [--rows N]
// tritonforge capture --from DIR --optimize [--budget S]
//
// Runs a program unchanged and records every launch of an @triton.jit kernel it makes (the
// recorder is python/tritonforge_worker/capture/, installed through a sitecustomize.py put
// first on the program's PYTHONPATH, so `python prog.py`, `python -m pkg`, torchrun and the
// program's own subprocesses are all covered), then prints the kernels ranked by GPU time,
// writes DIR/capture.json, and a replay task for each of the --top costliest tunable kernels
// (capture/replay_task.h); --optimize then replays each task twice as written (the kernels whose
// outputs are not the run's are widened or left out: capture/replay_check.h), runs the search
// loop on each of the others and builds the overlay of the improved ones (capture/overlay.h)
// for `run --overlay DIR`. --show prints the table of an earlier capture; --from DIR
// --optimize does the optimizing part for the tasks of an earlier capture, running no program.
//
// Exit codes: 0 the program ran and its launches are recorded; 1 the program failed (what it
// launched before is recorded and shown) or could not be started; 2 bad input (DIR not empty,
// no program, a wrong flag); 3 --optimize found no GPU (the record and tasks stay).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

#include "capture/capture_record.h"
#include "capture/overlay.h"
#include "capture/program_launch.h"
#include "capture/replay_check.h"
#include "capture/replay_task.h"
#include "cli/commands.h"
#include "cli/optimize_command.h"
#include "report/html_report.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/paths.h"
#include "util/subprocess.h"
#include "worker/worker_process.h"

namespace fs = std::filesystem;

namespace tf {
namespace {

struct CaptureFlags {
  std::vector<std::string> program;
  std::string out = "tritonforge-capture";
  std::string show;
  std::string from;
  size_t rows = 20;
  size_t top = 5;
  bool no_save = false;
  int quota_mb = 2048;
  int per_kernel = 3;
  bool optimize = false;
  double budget = 60;
  std::string timing = "events";
};

// `--optimize`, first: each written task replayed twice as written (capture/replay_check.h); a
// kernel that is not replayable is left out, the others keep (or widen) their tolerance.
void checkReplays(std::vector<ReplayTask>& tasks, const GlobalOptions& global) {
  WorkerOptions wo = workerOptionsFor(global, false);
  wo.name = "replay worker";
  WorkerProcess worker(wo);
  for (auto& t : tasks) {
    if (t.task.empty()) continue;
    ReplayVerdict v;
    try {
      v = checkReplayTask(worker, t.task);
    } catch (const UserError& e) {
      v = {ReplayVerdict::Kind::kNotReplayable, std::string("not replayable: ") + e.what(), 0};
    }
    std::fprintf(stderr, "capture: %s replayed as written: %s\n", t.kernel.c_str(), v.line.c_str());
    if (!v.tunable()) {
      t.why_not = v.line;
      t.task.clear();
    }
  }
}

// `--optimize`: the existing loop on each replayable task, its results under DIR/optimized/.
// Returns 3 when there is no GPU (what is written stays), else 0; a task the loop refuses is
// reported and the others still run.
int optimizeTasks(const CaptureFlags& f, std::vector<ReplayTask> tasks, const fs::path& dir,
                  const GlobalOptions& global) {
  checkReplays(tasks, global);
  for (const auto& t : tasks) {
    if (t.task.empty()) continue;
    OptimizeFlags o;
    o.task = t.task.string();
    o.tasks = {o.task};
    o.budget = f.budget;
    o.out = (dir / "optimized").string();
    o.given = {"--budget"};
    std::fprintf(stderr, "\ncapture: optimizing %s (%s)\n", t.kernel.c_str(), o.task.c_str());
    try {
      if (runOptimize(o, global) == 3) return 3;
    } catch (const UserError& e) {
      std::fprintf(stderr, "capture: %s not optimized: %s\n", t.kernel.c_str(), e.what());
    } catch (const EnvironmentError& e) {  // its budget ran out, its worker failed: the next task still runs
      std::fprintf(stderr, "capture: %s not optimized: %s\n", t.kernel.c_str(), e.what());
    }
  }
  // The overlay of what the search improved: `run --overlay DIR` serves it to the program.
  OverlayBuild build = buildOverlay(dir);
  std::printf("\n%s", overlayText(build, "overlay:").c_str());
  if (build.served() > 0) {
    std::printf("run the program with them: tritonforge run --overlay %s -- %s\n", dir.string().c_str(),
                f.program.empty() ? "PROGRAM ARGS..." : fmt::format("{}", fmt::join(f.program, " ")).c_str());
  }
  return 0;
}

// `--from DIR --optimize`: the tasks an earlier capture wrote (DIR/tasks/*/task.toml).
int optimizeEarlierCapture(const CaptureFlags& f, const GlobalOptions& global) {
  const fs::path dir = f.from;
  std::error_code ec;
  if (!fs::is_directory(dir / "tasks", ec)) {
    throw UserError(fmt::format("{}: no tasks/ folder (give a folder written by `tritonforge capture --top N`)",
                                dir.string()));
  }
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(dir / "tasks", ec)) {
    if (e.is_directory() && fs::exists(e.path() / "task.toml")) folders.push_back(e.path());
  }
  std::sort(folders.begin(), folders.end());
  if (folders.empty()) throw UserError(fmt::format("{}: holds no replay task", (dir / "tasks").string()));
  std::vector<ReplayTask> tasks;
  for (const auto& folder : folders) {
    ReplayTask t;
    t.kernel = folder.filename().string();
    t.task = folder / "task.toml";
    tasks.push_back(t);
  }
  return optimizeTasks(f, tasks, dir, global);
}

int showCapture(const fs::path& dir, size_t rows) {
  CaptureSummary summary = readCapture(dir);
  std::fputs(captureTable(summary, rows).c_str(), stdout);
  for (const auto& e : summary.errors) std::fprintf(stderr, "capture: %s\n", e.c_str());
  return 0;
}

// The output folder: created, or an empty one; never one with files in it (a second capture
// into the same folder would mix two runs' records).
void prepareOutput(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw UserError(fmt::format("{}: exists and is not a folder", dir.string()));
    if (!fs::is_empty(dir, ec)) {
      throw UserError(fmt::format("{}: is not empty (a capture goes into a new or empty folder: give another -o)",
                                  dir.string()));
    }
  }
  fs::create_directories(dir, ec);
  if (ec) throw UserError(fmt::format("{}: cannot create the folder: {}", dir.string(), ec.message()));
}

int runCapture(const CaptureFlags& f, const GlobalOptions& global) {
  if (!f.show.empty()) {
    if (!f.program.empty()) throw UserError("--show prints an earlier capture and runs no program: drop the program");
    return showCapture(f.show, f.rows);
  }
  if (!f.from.empty()) {
    if (!f.program.empty()) throw UserError("--from optimizes an earlier capture and runs no program: drop the program");
    if (!f.optimize) throw UserError("--from DIR goes with --optimize (to print the table: --show DIR)");
    checkPositiveFlag("--budget", f.budget, 7 * 24 * 3600.0);
    return optimizeEarlierCapture(f, global);
  }
  if (f.program.empty()) throw UserError("capture: no program given (tritonforge capture -- python prog.py ...)");
  if (f.quota_mb < 0 || f.per_kernel < 0) throw UserError("--quota-mb and --per-kernel must be >= 0");
  if (f.optimize) {
    checkPositiveFlag("--budget", f.budget, 7 * 24 * 3600.0);
    if (f.no_save || f.top == 0) throw UserError("--optimize tunes the replay tasks: drop --no-save and give --top N > 0");
  }
  if (!programOnPath(f.program[0])) {
    throw UserError(fmt::format("capture: cannot run '{}': not found or not executable", f.program[0]));
  }
  const fs::path dir = f.out;
  prepareOutput(dir);
  auto started = std::chrono::steady_clock::now();
  ProgramLaunch launch{f.program, dir,
                       fmt::format("save={},quota_mb={},per_kernel={},timing={}", f.no_save ? 0 : 1, f.quota_mb,
                                   f.per_kernel, f.timing)};
  int status = runRelayed(programSpawn(launch));
  double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::fflush(stdout);
  std::fprintf(stderr, "\ncapture: the program %s after %.1f s%s\n",
               ok ? "ended" : ("failed (" + describeWaitStatus(status) + ")").c_str(), wall_s,
               ok ? "" : "; what it launched before is recorded");
  CaptureSummary summary;
  try {
    summary = readCapture(dir);
  } catch (const UserError& e) {
    std::fprintf(stderr, "capture: %s\n", e.what());
    return ok ? 0 : 1;
  }
  nlohmann::json j = captureSummaryJson(summary);
  j["program"] = {{"argv", f.program}, {"wall_s", wall_s}, {"status", describeWaitStatus(status)}, {"ok", ok}};
  writeFileAtomic(dir / "capture.json", j.dump(1) + "\n");
  std::fputs(captureTable(summary, f.rows).c_str(), stdout);
  for (const auto& e : summary.errors) std::fprintf(stderr, "capture: %s\n", e.c_str());
  std::fprintf(stderr, "capture: wrote %s\n", (dir / "capture.json").string().c_str());
  auto writeReport = [&] {
    HtmlReportOutcome html = writeCaptureHtml(dir, choosePython(global.python), workerPackageDir());
    if (!html.rendered) std::fprintf(stderr, "capture: report.html not rendered: %s\n", html.why.c_str());
  };
  if (f.top > 0 && !f.no_save) {
    std::vector<ReplayTask> tasks = writeReplayTasks(summary, dir, f.top, workerPackageDir());
    nlohmann::json listed = nlohmann::json::array();
    for (const auto& t : tasks) {
      if (t.task.empty()) {
        std::printf("no task for %s: %s\n", t.kernel.c_str(), t.why_not.c_str());
      } else {
        std::printf("task for %s: %s (%d case%s)\n", t.kernel.c_str(), t.task.string().c_str(), t.cases,
                    t.cases == 1 ? "" : "s");
      }
      for (const auto& n : t.notes) std::printf("    %s\n", n.c_str());
      listed.push_back({{"kernel", t.kernel}, {"task", t.task.string()}, {"why_not", t.why_not}, {"cases", t.cases},
                        {"notes", t.notes}});
    }
    j["tasks"] = listed;
    writeFileAtomic(dir / "capture.json", j.dump(1) + "\n");
    writeReport();
    std::fflush(stdout);
    if (f.optimize && optimizeTasks(f, tasks, dir, global) == 3) return 3;
  }
  if (f.top == 0 || f.no_save) writeReport();
  return ok ? 0 : 1;
}

}  // namespace

CommandRunner registerCapture(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kCaptureRegistration("capture", 48, &registerCapture);

CommandRunner registerCapture(CLI::App& app, const GlobalOptions& global) {
  auto flags = std::make_shared<CaptureFlags>();
  CLI::App* sub = app.add_subcommand(
      "capture", "Run a program unchanged and record the Triton kernels it launches, ranked by GPU time");
  sub->add_option("program", flags->program, "The program and its arguments, after --: -- python prog.py ...");
  sub->add_option("-o,--out", flags->out, "A new or empty folder for the record (default tritonforge-capture)");
  sub->add_option("--show", flags->show, "Print the table of an earlier capture folder and run nothing");
  sub->add_option("--from", flags->from,
                  "With --optimize: optimize the replay tasks of an earlier capture folder and run no program");
  sub->add_option("--rows", flags->rows, "Rows of the table (default 20; 0: every kernel)");
  sub->add_option("--top", flags->top,
                  "Write replay tasks (DIR/tasks/) for this many of the costliest tunable kernels (default 5; 0: none)");
  sub->add_flag("--no-save", flags->no_save, "Record launches only; save no tensors for replay (and write no tasks)");
  sub->add_flag("--optimize", flags->optimize,
                "Then optimize each replay task with the search loop (results in DIR/optimized/)");
  sub->add_option("--budget", flags->budget, "With --optimize: seconds per kernel (default 60)");
  sub->add_option("--quota-mb", flags->quota_mb, "Most MiB of tensors saved for replay (default 2048)");
  sub->add_option("--per-kernel", flags->per_kernel, "Distinct launches saved per kernel (default 3)");
  sub->add_option("--timing", flags->timing,
                  "events (default: CUDA events around each launch) or profiler (torch.profiler's kernel times, exact, "
                  "and the share of the program's whole GPU kernel time)")
      ->check(CLI::IsMember({"events", "profiler"}));
  return [flags, &global] { return runCapture(*flags, global); };
}

}  // namespace tf
