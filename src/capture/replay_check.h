// Before the search tunes a captured kernel, its task is replayed as written, twice per saved
// launch (the worker's `replay_check` op, python/tritonforge_worker/capture/replay_check.py),
// and each replay's outputs are compared with what the program's launch left and with each
// other. A kernel that reduces with atomics, or reads memory that was not saved, does not give
// the recorded outputs back bit for bit; the verdict says what to do with it:
//
//   reproduced   every replay is the recording, bit for bit: nothing changes
//   within       replays differ from the recording (or from each other) but within the task's
//                tolerance: nothing changes, the line says by how much
//   widened      they differ by more than the task's `atol` allows, but by no more than its `rtol`
//                allows at the outputs' largest magnitude (the size of a reordered sum near
//                zero): `atol` becomes twice the difference seen (at most that bound), written
//                into the task with a comment, so the search's verification accepts what the
//                kernel as written does and still rejects what is wrong by more
//   not replayable  larger differences, NaNs or integers that differ, or a replay that fails:
//                randomness, a race or state that was not saved; the kernel is not tuned and
//                the line says why
//   not checked  no GPU (the search then stops with exit 3 anyway)
//
// A replay starts from the memory the program's launch saw, so a variant that leaves part of an
// output unwritten would find the saved bytes there, close to right, and pass; served to the
// program, it leaves whatever a fresh buffer holds. So the check also replays from poisoned
// outputs (NaN over all of them, else over what the launch wrote) and, where the kernel as
// written still gives the recording, every later replay starts from that poison.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace tf {

class WorkerProcess;

struct ReplayVerdict {
  enum class Kind { kReproduced, kWithin, kWidened, kNotReplayable, kNotChecked };
  Kind kind = Kind::kNotChecked;
  std::string line;      // one line: what was seen
  double atol = 0;       // the task's atol after the verdict (widened: the new one)
  // How the search's replays poison the in-place outputs (replay_harness.py): "outputs" (every
  // element), "written" (those the recorded launch changed) or "none" (the kernel reads them).
  std::string poison = "none";
  // Each in-place output's own atol (empty: none tighter than `atol`), written into the task.
  std::vector<double> output_atol;
  bool tunable() const { return kind != Kind::kNotReplayable; }
};

const char* toString(ReplayVerdict::Kind kind);

// The verdict for a `replay_check` reply (its `cases`) under the task's tolerances.
ReplayVerdict judgeReplays(const nlohmann::json& reply, double rtol, double atol);

// Replays the task (task.toml written by `capture`) `runs` times per case, judges, writes
// replay_check.json beside the task and, when widened, the new atol into its [check].
ReplayVerdict checkReplayTask(WorkerProcess& worker, const std::filesystem::path& task_file, int runs = 2);

// Each in-place output's atol from a `replay_check` reply: `rtol` times its largest recorded
// magnitude, at least twice what its replays needed, at most `atol`. One absolute tolerance for
// all outputs is fit for the largest: a gradient a thousand times smaller would pass whatever
// it held.
std::vector<double> outputAtols(const nlohmann::json& reply, double rtol, double atol);

// Writes `output_atol = [...]` after the `atol = ` line of a task written by capture (replacing
// one written before), with a comment line. Throws UserError when the file has no `atol` line.
void setTaskOutputAtol(const std::filesystem::path& task_file, const std::vector<double>& values,
                       const std::string& why);

// Writes each case's poisoning from a `replay_check` reply into the replay plan (replay.json),
// where the task's harness reads it; returns the weakest over the cases.
std::string recordPoisoning(const std::filesystem::path& replay_plan, const nlohmann::json& reply);

// One clause saying what a poisoning mode means for the search.
std::string poisoningLine(const std::string& mode);

// Sets `atol = value` in the [check] table of a task file written by `capture`, with a comment
// line saying why. Throws UserError when the file has no such line.
void setTaskAtol(const std::filesystem::path& task_file, double value, const std::string& why);

}  // namespace tf
