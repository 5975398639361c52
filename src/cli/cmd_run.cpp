// tritonforge run --overlay DIR [--compare [--repeat N] [--rtol R] [--atol A] [--lines REGEX]]
//                 -- PROGRAM ARGS...
//
// Runs a program with the tuned kernels of a capture (DIR, written by `tritonforge capture`, its
// replay tasks optimized by `capture --optimize`): the overlay (capture/overlay.h) is built from
// the optimized results, and the program is started as capture starts it, with the overlay's
// manifest in $TRITONFORGE_OVERLAY; python/tritonforge_worker/capture/overlay.py serves the
// tuned launch for every launch that matches one the search verified, and leaves every other
// launch as the program wrote it. Installed packages and the program's files are not touched.
//
// --compare runs the program as written and with the overlay, both under the recorder (no
// tensors saved), compares the numbers they print, and reports the served kernels' GPU time and
// the program's wall time before and after (--repeat N more pairs without the recorder, for the
// wall time), into DIR/compare/<time>/compare.json.
//
// Exit codes: 0 the program ran (and with --compare, its outputs agree); 1 the program failed,
// or --compare found its outputs different; 2 bad input (DIR not a capture, no program).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "capture/capture_record.h"
#include "capture/output_compare.h"
#include "capture/overlay.h"
#include "capture/program_launch.h"
#include "cli/commands.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;

namespace tf {
namespace {

struct RunFlags {
  std::vector<std::string> program;
  std::string overlay;
  bool compare = false;
  int repeat = 1;
  double rtol = -1;
  double atol = -1;
  std::string lines;
};

struct ProgramRun {
  bool ok = false;
  std::string status;
  double wall_s = 0;
  std::string out;
};

ProgramRun runOnce(const ProgramLaunch& launch, bool keep_output) {
  ProgramRun r;
  auto started = std::chrono::steady_clock::now();
  int status = runRelayed(programSpawn(launch), keep_output ? &r.out : nullptr);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  r.status = describeWaitStatus(status);
  return r;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// GPU time and launches per kernel name in one recorded run.
std::map<std::string, std::pair<double, int64_t>> timesByName(const fs::path& dir) {
  std::map<std::string, std::pair<double, int64_t>> out;
  try {
    for (const auto& k : readCapture(dir).kernels) {
      out[k.name].first += k.time_ms;
      out[k.name].second += k.launches;
    }
  } catch (const UserError&) {  // a run that launched nothing
  }
  return out;
}

int runCompare(const RunFlags& f, const OverlayBuild& build, const fs::path& dir) {
  // Unless given: the loosest of the served tasks' tolerances, and at least 1e-5 relative for
  // what a program prints of its own run-to-run noise (atomics in a backward pass change a
  // gradient norm's last printed digit).
  double loosest_rtol = 1e-5, loosest_atol = 0;
  for (const auto& k : build.kernels) {
    if (!k.served) continue;
    loosest_rtol = std::max(loosest_rtol, k.rtol);
    loosest_atol = std::max(loosest_atol, k.atol);
  }
  const double rtol = f.rtol >= 0 ? f.rtol : loosest_rtol;
  const double atol = f.atol >= 0 ? f.atol : loosest_atol;
  const fs::path where = dir / "compare" / utcTimestamp("%Y%m%d-%H%M%S");
  std::error_code ec;
  if (fs::exists(where, ec)) throw UserError(fmt::format("{}: exists already (one compare per second)", where.string()));
  fs::create_directories(where);
  std::fprintf(stderr, "\nrun: --compare: the program as written, recorded (%s)\n", (where / "as-written").string().c_str());
  ProgramRun a = runOnce({f.program, where / "as-written", "save=0,timing=profiler"}, true);
  std::fprintf(stderr, "\nrun: --compare: the program with the overlay, recorded (%s)\n", (where / "overlay").string().c_str());
  ProgramRun b = runOnce({f.program, where / "overlay", "save=0,timing=profiler", build.manifest, where / "overlay-served"}, true);
  std::vector<double> wall_a, wall_b;
  for (int i = 0; i < f.repeat && a.ok && b.ok; ++i) {  // alternated, without the recorder
    std::fprintf(stderr, "\nrun: --compare: wall time, pair %d of %d\n", i + 1, f.repeat);
    ProgramRun x = runOnce({f.program}, false);
    ProgramRun y = runOnce({f.program, {}, "", build.manifest}, false);
    if (!x.ok || !y.ok) break;
    wall_a.push_back(x.wall_s);
    wall_b.push_back(y.wall_s);
  }
  OutputComparison c = compareOutputs(a.out, b.out, rtol, atol, f.lines);
  auto before = timesByName(where / "as-written"), after = timesByName(where / "overlay");
  nlohmann::json kernels = nlohmann::json::array();
  std::string table = fmt::format("{:<40} {:>10} {:>12} {:>12} {:>8}\n", "kernel (served)", "launches", "GPU ms before",
                                  "GPU ms after", "ratio");
  double served_before = 0, served_after = 0, all_before = 0, all_after = 0;
  for (const auto& [name, t] : before) all_before += t.first;
  for (const auto& [name, t] : after) all_after += t.first;
  for (const auto& k : build.kernels) {
    if (!k.served) continue;
    auto x = before.count(k.kernel) ? before[k.kernel] : std::pair<double, int64_t>{0, 0};
    auto y = after.count(k.kernel) ? after[k.kernel] : std::pair<double, int64_t>{0, 0};
    served_before += x.first;
    served_after += y.first;
    table += fmt::format("{:<40} {:>10} {:>12.3f} {:>12.3f} {:>7.3f}x\n", k.kernel, x.second, x.first, y.first,
                         y.first > 0 ? x.first / y.first : 0.0);
    kernels.push_back({{"kernel", k.kernel}, {"launches", x.second}, {"gpu_ms_before", x.first}, {"gpu_ms_after", y.first}});
  }
  table += fmt::format("{:<40} {:>10} {:>12.3f} {:>12.3f} {:>7.3f}x\n", "served kernels, together", "", served_before,
                       served_after, served_after > 0 ? served_before / served_after : 0.0);
  table += fmt::format("{:<40} {:>10} {:>12.3f} {:>12.3f} {:>7.3f}x\n", "every recorded Triton kernel", "", all_before,
                       all_after, all_after > 0 ? all_before / all_after : 0.0);
  std::printf("\n%s", table.c_str());
  if (!wall_a.empty()) {
    std::printf("program wall time, median of %zu: %.2f s as written, %.2f s with the overlay (%.3fx)\n", wall_a.size(),
                median(wall_a), median(wall_b), median(wall_a) / median(wall_b));
  }
  if (c.same) {
    std::printf("outputs: the same within rtol %g, atol %g (%zu values on %zu lines; largest difference %.3g, %.3g "
                "relative)\n", rtol, atol, c.values, c.lines, c.max_abs, c.max_rel);
  } else {
    std::printf("outputs: DIFFERENT beyond rtol %g, atol %g: %s\n", rtol, atol, c.difference.c_str());
  }
  if (c.lines == 0) std::printf("outputs: the program printed nothing to compare\n");
  nlohmann::json j = {{"schema", "tritonforge.run-compare/1"},
                      {"program", f.program},
                      {"as_written", {{"ok", a.ok}, {"status", a.status}, {"wall_s_recorded", a.wall_s}, {"wall_s", wall_a}}},
                      {"overlay", {{"ok", b.ok}, {"status", b.status}, {"wall_s_recorded", b.wall_s}, {"wall_s", wall_b}}},
                      {"kernels", kernels},
                      {"served_gpu_ms", {{"before", served_before}, {"after", served_after}}},
                      {"all_gpu_ms", {{"before", all_before}, {"after", all_after}}},
                      {"outputs", {{"same", c.same}, {"rtol", rtol}, {"atol", atol}, {"lines", c.lines}, {"values", c.values},
                                   {"max_abs", c.max_abs}, {"max_rel", c.max_rel}, {"difference", c.difference}}}};
  writeFileAtomic(where / "compare.json", j.dump(1) + "\n");
  std::fprintf(stderr, "run: wrote %s\n", (where / "compare.json").string().c_str());
  if (!a.ok || !b.ok) {
    std::fprintf(stderr, "run: the program failed (%s as written, %s with the overlay)\n", a.status.c_str(), b.status.c_str());
    return 1;
  }
  return c.same ? 0 : 1;
}

int runProgram(const RunFlags& f) {
  if (f.program.empty()) throw UserError("run: no program given (tritonforge run --overlay DIR -- python prog.py ...)");
  if (f.overlay.empty()) throw UserError("run: give --overlay DIR (a folder written by `tritonforge capture --optimize`)");
  if (f.repeat < 0 || f.repeat > 100) throw UserError("--repeat must be between 0 and 100");
  if (!f.compare && (f.rtol >= 0 || f.atol >= 0 || !f.lines.empty() || f.repeat != 1)) {
    throw UserError("--repeat, --rtol, --atol and --lines go with --compare");
  }
  if (!programOnPath(f.program[0])) {
    throw UserError(fmt::format("run: cannot run '{}': not found or not executable", f.program[0]));
  }
  if (!f.lines.empty()) compareOutputs("", "", 0, 0, f.lines);  // a bad regex: exit 2 before running
  const fs::path dir = f.overlay;
  OverlayBuild build = buildOverlay(dir);
  std::fputs(overlayText(build, "run:").c_str(), stderr);
  if (build.served() == 0) std::fprintf(stderr, "run: no tuned kernel to serve: the program runs as written\n");
  std::fflush(stderr);
  if (f.compare) return runCompare(f, build, dir);
  ProgramRun r = runOnce({f.program, {}, "", build.manifest}, false);
  if (!r.ok) std::fprintf(stderr, "run: the program failed (%s)\n", r.status.c_str());
  return r.ok ? 0 : 1;
}

}  // namespace

CommandRunner registerRun(CLI::App& app, const GlobalOptions& global);
const CommandRegistration kRunRegistration("run", 49, &registerRun);

CommandRunner registerRun(CLI::App& app, const GlobalOptions&) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* sub = app.add_subcommand("run", "Run a program with the tuned kernels of a capture (--overlay DIR)");
  sub->add_option("program", flags->program, "The program and its arguments, after --: -- python prog.py ...");
  sub->add_option("--overlay", flags->overlay, "A capture's folder whose replay tasks were optimized (capture --optimize)");
  sub->add_flag("--compare", flags->compare,
                "Run it as written and with the overlay; compare printed numbers, GPU and wall time");
  sub->add_option("--repeat", flags->repeat, "With --compare: pairs of unrecorded runs for the wall time (default 1)");
  sub->add_option("--rtol", flags->rtol, "With --compare: relative tolerance (default: the served tasks' loosest)");
  sub->add_option("--atol", flags->atol, "With --compare: absolute tolerance (default: the served tasks' loosest)");
  sub->add_option("--lines", flags->lines, "With --compare: compare only output lines matching this regex");
  return [flags] { return runProgram(*flags); };
}

}  // namespace tf
