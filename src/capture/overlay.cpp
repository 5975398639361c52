#include "capture/overlay.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "report/diff.h"
#include "task/task.h"
#include "util/error.h"
#include "util/fs.h"

namespace fs = std::filesystem;

namespace tf {
namespace {

using Json = nlohmann::json;

// Where the replay task's copy of the module ends and its appended launcher begins
// (replay_task.cpp writes it; a per-shape dispatch appends its variants after it).
constexpr const char* kLauncherMarker = "\n\n# ---- added by tritonforge capture";

Json readJson(const fs::path& path, const char* what) {
  Json j = Json::parse(readTextFile(path, what), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw UserError(fmt::format("{}: not a JSON object", path.string()));
  return j;
}

// The manifest's entry for one task, or why it is not served. Writes the tuned module and the
// patch under `out`.
OverlayKernel oneKernel(const fs::path& dir, const fs::path& task_dir, const fs::path& out, Json& entries) {
  OverlayKernel k;
  k.task = task_dir.filename().string();
  const Json replay = readJson(task_dir / "replay.json", "replay plan");
  k.kernel = replay.value("kernel", k.task);
  Task task = loadTask(task_dir / "task.toml");
  k.rtol = task.check.rtol.value_or(0);
  k.atol = task.check.atol.value_or(0);
  const Json& cases = replay["cases"];
  if (!replay.contains("launcher") || cases.empty() || !cases[0].contains("match")) {
    k.why_not = "its task was written by an older tritonforge (no launch matching): capture again";
    return k;
  }
  const fs::path check_path = task_dir / "replay_check.json";
  if (fs::exists(check_path)) {  // replayed as written before the search (capture/replay_check.h)
    const Json check = readJson(check_path, "replay check");
    if (check.value("verdict", "") == "not-replayable") {
      k.why_not = check.value("line", "not replayable");
      return k;
    }
  }
  const fs::path result_path = dir / "optimized" / k.task / "result.json";
  if (!fs::exists(result_path)) {
    k.why_not = "not optimized (no " + result_path.string() + ")";
    return k;
  }
  const Json result = readJson(result_path, "optimize result");
  const std::string status = result.value("status", "");
  if (status != "improved") {
    k.why_not = status == "unchanged" ? "the search found nothing faster than the kernel as written"
                                      : "its optimize run ended '" + status + "'";
    return k;
  }
  const fs::path tuned = result["outputs"].value("source", "");
  if (tuned.empty() || !fs::exists(tuned)) {
    k.why_not = "its optimized source is missing (" + tuned.string() + ")";
    return k;
  }
  k.speedup = result.value("speedup", 1.0);
  const std::string tuned_text = readTextFile(tuned, "optimized source", kMaxSourceFileBytes);
  const fs::path folder = out / k.task;
  fs::create_directories(folder);
  writeFileAtomic(folder / tuned.filename(), tuned_text);

  // The patch of the original file: the tuned copy up to the appended launcher, against the
  // file as it is now (only when that is still the captured one).
  const std::string source = replay.value("source", "");
  const size_t cut = tuned_text.find(kLauncherMarker);
  std::string original;
  try {
    original = readTextFile(source, "kernel source", kMaxSourceFileBytes);
  } catch (const UserError&) {
  }
  const bool dispatch = result.contains("dispatch") && result["dispatch"].value("handed_back", false);
  // The task's copy is the file as captured, up to the appended launcher.
  const std::string captured = readTextFile(task.source, "replay task source", kMaxSourceFileBytes);
  if (original.empty() || captured.substr(0, captured.find(kLauncherMarker)) != original) {
    k.note = "its source file changed since the capture: no patch (and run --overlay serves it as written)";
  } else if (dispatch) {
    k.note = "a per-shape dispatch: served by the overlay, no single patch of the source";
  } else if (cut != std::string::npos && tuned_text.substr(0, cut) != original) {
    // Named from the folder that holds the top package (or the file's own folder), so that
    // `patch -p1 -d THAT_FOLDER < PATCH` applies it.
    const std::string root = replay.value("package_root", "");
    const std::string name =
        root.empty() ? fs::path(source).filename().string() : fs::path(source).lexically_relative(root).string();
    k.patch = folder / (fs::path(source).filename().string() + ".patch");
    k.note = fmt::format("the patch applies with `patch -p1 -d {}`",
                         root.empty() ? fs::path(source).parent_path().string() : root);
    writeFileAtomic(k.patch, unifiedDiff(original, tuned_text.substr(0, cut), name, name));
  }
  Json match = Json::array();
  for (const auto& c : cases) match.push_back(c["match"]);
  Json search_path = Json::array();
  if (!replay.value("package_root", "").empty()) search_path.push_back(replay["package_root"]);
  else search_path.push_back(fs::path(source).parent_path().string());
  entries.push_back({{"kernel", k.kernel},
                     {"task", k.task},
                     {"source", source},
                     {"source_sha256", replay.value("source_sha256", "")},
                     {"tuned", (fs::path(k.task) / tuned.filename()).string()},
                     {"launcher", replay["launcher"]},
                     {"inputs", replay["inputs"]},
                     {"through_wrapper", replay.value("through_wrapper", false)},
                     {"package", replay.value("package", "")},
                     {"search_path", search_path},
                     {"cases", match},
                     {"speedup", k.speedup},
                     {"patch", k.patch.empty() ? Json() : Json(k.patch.string())},
                     {"tuned_launch", cut == std::string::npos ? "" : tuned_text.substr(cut + 2)}});
  k.served = true;
  return k;
}

}  // namespace

std::string overlayText(const OverlayBuild& build, const std::string& prefix) {
  std::string out;
  for (const auto& k : build.kernels) {
    if (k.served) {
      out += fmt::format("{} serving {} (task {}, {:.3f}x on its replay){}{}\n", prefix, k.kernel, k.task, k.speedup,
                         k.patch.empty() ? "" : "; patch: ", k.patch.string());
      if (!k.note.empty()) out += fmt::format("     {}\n", k.note);
    } else {
      out += fmt::format("{} not serving {}: {}\n", prefix, k.kernel, k.why_not);
    }
  }
  return out;
}

size_t OverlayBuild::served() const {
  return static_cast<size_t>(std::count_if(kernels.begin(), kernels.end(), [](const OverlayKernel& k) { return k.served; }));
}

OverlayBuild buildOverlay(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UserError(fmt::format("{}: not a folder (give a capture's folder)", dir.string()));
  const fs::path tasks = dir / "tasks";
  if (!fs::is_directory(tasks, ec)) {
    throw UserError(fmt::format("{}: no replay tasks (not a folder written by `tritonforge capture`, or captured "
                                "with --no-save or --top 0)", dir.string()));
  }
  std::vector<fs::path> task_dirs;
  for (const auto& e : fs::directory_iterator(tasks, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "replay.json")) task_dirs.push_back(e.path());
  }
  std::sort(task_dirs.begin(), task_dirs.end());
  if (task_dirs.empty()) throw UserError(fmt::format("{}: holds no replay task", tasks.string()));

  // Built beside, then swapped in: a failed build leaves the previous overlay as it was.
  const fs::path out = dir / "overlay";
  const fs::path building = dir / "overlay.building";
  fs::remove_all(building, ec);
  fs::create_directories(building);
  OverlayBuild build;
  Json entries = Json::array();
  for (const auto& t : task_dirs) {
    try {
      build.kernels.push_back(oneKernel(dir, t, building, entries));
    } catch (const UserError& e) {
      build.kernels.push_back(OverlayKernel{t.filename().string(), t.filename().string(), false, e.what()});
    } catch (const nlohmann::json::exception& e) {
      build.kernels.push_back(OverlayKernel{t.filename().string(), t.filename().string(), false,
                                            fmt::format("its files are not as capture and optimize write them ({})", e.what())});
    }
  }
  Json manifest = {{"schema", "tritonforge.overlay/1"}, {"capture", fs::absolute(dir).lexically_normal().string()},
                   {"kernels", entries}};
  writeFileAtomic(building / "overlay.json", manifest.dump(1) + "\n");
  fs::remove_all(out, ec);
  fs::rename(building, out, ec);
  if (ec) throw UserError(fmt::format("{}: cannot write the overlay: {}", out.string(), ec.message()));
  build.manifest = out / "overlay.json";
  for (auto& k : build.kernels) {
    if (!k.patch.empty()) k.patch = out / k.patch.lexically_relative(building);
  }
  return build;
}

}  // namespace tf
