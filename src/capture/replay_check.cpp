#include "capture/replay_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <regex>

#include "measure/case_request.h"
#include "task/task.h"
#include "util/error.h"
#include "util/fs.h"
#include "worker/worker_process.h"

namespace tf {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const char* toString(ReplayVerdict::Kind kind) {
  switch (kind) {
    case ReplayVerdict::Kind::kReproduced: return "reproduced";
    case ReplayVerdict::Kind::kWithin: return "within";
    case ReplayVerdict::Kind::kWidened: return "widened";
    case ReplayVerdict::Kind::kNotReplayable: return "not-replayable";
    case ReplayVerdict::Kind::kNotChecked: return "not-checked";
  }
  return "?";
}

namespace {

ReplayVerdict notReplayable(size_t case_index, const std::string& why) {
  return {ReplayVerdict::Kind::kNotReplayable, fmt::format("not replayable: case {}: {}", case_index, why), 0};
}

}  // namespace

ReplayVerdict judgeReplays(const Json& reply, double rtol, double atol) {
  if (reply.value("status", "") == "no_gpu") {
    return {ReplayVerdict::Kind::kNotChecked, "not replayed: " + reply.value("message", "no GPU"), atol};
  }
  const Json& cases = reply.at("cases");
  if (!cases.is_array() || cases.empty()) return {ReplayVerdict::Kind::kNotChecked, "not replayed: no case", atol};
  bool exact = true, agree = true;
  double needed = 0, scale = 0, max_abs = 0, between = 0;
  int runs = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const Json& entry = cases[c];
    if (entry.contains("error")) return notReplayable(c, "the replay failed: " + entry["error"].get<std::string>());
    const bool equal = entry.value("runs_equal", true);
    agree = agree && equal;
    between = std::max(between, entry.value("between_max_abs", 0.0));
    for (const Json& run : entry.at("runs")) {
      ++runs;
      if (run.value("nan_mismatch", false) || run.value("int_mismatch", false)) {
        const char* what = run.value("int_mismatch", false) ? "integers" : "NaNs or infinities";
        return notReplayable(c, equal ? fmt::format("the replay's {} differ from the run's, the same in every replay: "
                                                    "the launch read memory or state that was not saved", what)
                                      : fmt::format("its {} differ between replays: randomness or a race", what));
      }
      exact = exact && run.value("exact", false);
      needed = std::max(needed, run.value("needed_atol", 0.0));
      max_abs = std::max(max_abs, run.value("max_abs", 0.0));
      scale = std::max(scale, run.value("scale", 0.0));
    }
  }
  const int per_case = runs / static_cast<int>(cases.size());
  if (exact && agree) {
    return {ReplayVerdict::Kind::kReproduced,
            fmt::format("reproduced: {} replays of each of {} case(s) give the run's outputs bit for bit", per_case,
                        cases.size()),
            atol};
  }
  const std::string seen =
      agree ? fmt::format("the replays agree with each other and differ from the run's outputs by up to {:.3g}", max_abs)
            : fmt::format("the replays differ from each other by up to {:.3g} and from the run's outputs by up to {:.3g} "
                          "(atomics or another order of a reduction)",
                          between, max_abs);
  if (needed <= atol) {
    return {ReplayVerdict::Kind::kWithin, fmt::format("within tolerance: {} (rtol {:g}, atol {:g})", seen, rtol, atol),
            atol};
  }
  const double bound = rtol * scale;
  if (needed > bound) {
    return {ReplayVerdict::Kind::kNotReplayable,
            fmt::format("not replayable: {}; accepting that needs atol {:.3g}, more than rtol {:g} allows at the "
                        "outputs' largest magnitude {:.3g}: {}",
                        seen, needed, rtol, scale,
                        agree ? "the launch read memory or state that was not saved" : "randomness or a race"),
            atol};
  }
  const double widened = std::min(2 * needed, bound);
  return {ReplayVerdict::Kind::kWidened,
          fmt::format("atol widened from {:g} to {:.3g}: {}", atol, widened, seen), widened};
}

namespace {

// The `atol = ...` line of a task written by capture (with the newline before it, if any).
std::smatch atolLine(const std::string& text, const fs::path& task_file) {
  static const std::regex kAtol(R"((^|\n)atol = [^\n]*\n)");
  std::smatch m;
  if (!std::regex_search(text, m, kAtol)) {
    throw UserError(fmt::format("{}: no `atol = ` line in its [check] (not a task written by capture)",
                                task_file.string()));
  }
  return m;
}

}  // namespace

void setTaskAtol(const fs::path& task_file, double value, const std::string& why) {
  std::string text = readTextFile(task_file, "task file", 1 << 20);
  const std::smatch m = atolLine(text, task_file);
  const std::string line = fmt::format("{}# {}\natol = {:.6g}\n", m[1].str(), why, value);
  text.replace(static_cast<size_t>(m.position(0)), static_cast<size_t>(m.length(0)), line);
  writeFileAtomic(task_file, text);
}

ReplayVerdict checkReplayTask(WorkerProcess& worker, const fs::path& task_file, int runs) {
  Task task = loadTask(task_file);
  const double rtol = task.check.rtol.value_or(0), atol = task.check.atol.value_or(0);
  Json args = toJson(caseRunRequest(task, {task.source, "tfv_replay_check", {}}, 0));
  args.erase("case");
  args["cases"] = task.cases;
  args["runs"] = runs;
  WorkerReply reply = worker.call("replay_check", args, std::chrono::minutes(10));
  ReplayVerdict v;
  if (!reply.ok()) {
    v = {ReplayVerdict::Kind::kNotReplayable,
         fmt::format("not replayable: the replay failed ({}): {}", toString(reply.status), reply.message), atol};
  } else {
    v = judgeReplays(reply.result, rtol, atol);
  }
  if (v.kind == ReplayVerdict::Kind::kWidened) {
    setTaskAtol(task_file, v.atol, fmt::format("widened by the replay check (replay_check.json): {}", v.line));
  }
  if (v.tunable() && reply.ok()) {
    v.output_atol = outputAtols(reply.result, rtol, v.atol);
    if (std::any_of(v.output_atol.begin(), v.output_atol.end(), [&](double a) { return a < v.atol; })) {
      setTaskOutputAtol(task_file, v.output_atol,
                        "each output's atol: rtol times its largest recorded magnitude (replay_check.json)");
    } else {
      v.output_atol.clear();
    }
    v.poison = recordPoisoning(task_file.parent_path() / "replay.json", reply.result);
    v.line += "; " + poisoningLine(v.poison);
  }
  Json record = {{"schema", "tritonforge.replay_check/1"}, {"verdict", toString(v.kind)}, {"line", v.line},
                 {"rtol", rtol}, {"atol_before", atol}, {"atol", v.atol}, {"output_atol", v.output_atol},
                 {"poison", v.poison},
                 {"reply", reply.ok() ? reply.result : Json{{"error", reply.message}}}};
  writeFileAtomic(task_file.parent_path() / "replay_check.json", record.dump(1) + "\n");
  return v;
}

std::vector<double> outputAtols(const Json& reply, double rtol, double atol) {
  std::vector<double> scale, needed;
  for (const Json& c : reply.value("cases", Json::array())) {
    for (const Json& run : c.value("runs", Json::array())) {
      const Json outputs = run.value("outputs", Json::array());
      if (outputs.size() > scale.size()) {
        scale.resize(outputs.size(), 0.0);
        needed.resize(outputs.size(), 0.0);
      }
      for (size_t i = 0; i < outputs.size(); ++i) {
        scale[i] = std::max(scale[i], outputs[i].value("scale", 0.0));
        needed[i] = std::max(needed[i], outputs[i].value("needed_atol", 0.0));
      }
    }
  }
  std::vector<double> out;
  for (size_t i = 0; i < scale.size(); ++i) out.push_back(std::min(atol, std::max(rtol * scale[i], 2 * needed[i])));
  return out;
}

void setTaskOutputAtol(const fs::path& task_file, const std::vector<double>& values, const std::string& why) {
  std::string text = readTextFile(task_file, "task file", 1 << 20);
  static const std::regex kOld(R"((^|\n)(# [^\n]*\n)?output_atol = [^\n]*\n)");
  std::smatch m;
  if (std::regex_search(text, m, kOld)) {
    text.replace(static_cast<size_t>(m.position(0)), static_cast<size_t>(m.length(0)), m[1].str());
  }
  m = atolLine(text, task_file);
  std::vector<std::string> items;
  for (double v : values) items.push_back(fmt::format("{:.6g}", v));
  const size_t at = static_cast<size_t>(m.position(0) + m.length(0));
  text.insert(at, fmt::format("# {}\noutput_atol = [{}]\n", why, fmt::join(items, ", ")));
  writeFileAtomic(task_file, text);
}

std::string recordPoisoning(const fs::path& replay_plan, const Json& reply) {
  Json plan = Json::parse(readTextFile(replay_plan, "replay plan", kMaxSourceFileBytes), nullptr, false);
  if (plan.is_discarded() || !plan.contains("cases") || !plan["cases"].is_array()) {
    throw UserError(fmt::format("{}: not a replay plan written by capture", replay_plan.string()));
  }
  // The weakest mode over the cases names the task's; each case keeps its own.
  static const std::vector<std::string> kOrder = {"none", "written", "outputs"};
  size_t weakest = kOrder.size() - 1;
  bool any = false;
  for (const Json& c : reply.value("cases", Json::array())) {
    const size_t launch = c.contains("case") ? c["case"].value("launch", size_t{0}) : size_t{0};
    const std::string mode = c.value("poison", std::string("none"));
    auto rank = std::find(kOrder.begin(), kOrder.end(), mode);
    const size_t r = rank == kOrder.end() ? 0 : static_cast<size_t>(rank - kOrder.begin());
    if (launch < plan["cases"].size()) plan["cases"][launch]["poison"] = kOrder[r];
    weakest = std::min(weakest, r);
    any = true;
  }
  const std::string mode = any ? kOrder[weakest] : "none";
  writeFileAtomic(replay_plan, plan.dump(1) + "\n");
  return mode;
}

std::string poisoningLine(const std::string& mode) {
  if (mode == "outputs") return "the search's replays start from outputs filled with NaN (the kernel writes all of them)";
  if (mode == "written") {
    return "the search's replays start from NaN where the launch wrote (the kernel writes those, whatever they held)";
  }
  return "the kernel reads what it writes: the search's replays start from the saved outputs";
}

}  // namespace tf
