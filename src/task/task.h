// The task file (TOML): what to optimize and how to check it. docs/task-format.md.
//
//   name = "softmax"                 # [A-Za-z0-9_.-]+, names the output folder
//   source = "softmax.py"            # kernels and launcher; paths relative to the task file
//   launcher = "softmax"             # launcher(*inputs) -> output tensor(s)
//   harness = "softmax_harness.py"   # make_inputs(case, seed) -> tuple; reference(*inputs) -> output(s)
//   cases = [ { M = 4096, N = 4096 } ]
//   kernels = ["softmax_kernel"]     # optional: only tune these
//   [check]  rtol, atol, seeds, reference_precision ("float64" | "as-is"), in_place = [0]
//   [signature.KERNEL]  param = "*fp16" | "i32" | 128 ...  # optional: compile checks without a GPU
//
// Unknown keys are errors (a misspelt key must not be silently ignored).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tf {

struct CheckSpec {
  std::optional<double> rtol;           // unset: the default for the output dtype
  std::optional<double> atol;
  int seeds = 2;                        // random seeds per case
  std::string reference_precision = "float64";
  std::vector<int> in_place;            // inputs the launcher may modify (outputs in place)
  // Per output, in order: its atol, in place of `atol` (capture writes them from each output's
  // magnitude: an absolute tolerance fit for one output is no check of a much smaller one).
  // Forward tasks only: a backward task's gradients use `atol`.
  std::vector<double> output_atol;
};

// The Python package a source belongs to (folders with an __init__.py above it), so that its
// relative imports (`from .utils import x`) resolve when a variant of it is loaded.
struct SourcePackage {
  std::string name;                     // "liger_kernel.ops"; "" when the source is no package's
  std::filesystem::path root;           // the folder holding the top package
};

// The package of `source` (empty when its folder has no __init__.py).
SourcePackage packageOf(const std::filesystem::path& source);

struct Task {
  std::filesystem::path path;           // the task file, absolute
  std::filesystem::path dir;            // its folder
  std::string name;
  std::filesystem::path source;         // absolute
  std::filesystem::path harness;        // absolute
  std::string launcher;                 // a function, an alias, or "Class.apply"
  SourcePackage package;                // the source's package, if it is in one
  std::vector<std::filesystem::path> search_path;  // more folders its modules import from (key `search_path`)
  std::vector<nlohmann::json> cases;    // each a JSON object of scalars
  std::vector<std::string> kernels;     // empty: every kernel the launcher launches
  // "forward": the launcher's call is measured and its outputs checked. "backward": the
  // gradients of its floating outputs are, computed by the backward of the autograd
  // Functions it calls, and the kernels those launch are the ones tuned.
  std::string direction = "forward";
  CheckSpec check;
  // kernel -> param -> Triton type ("*fp16", "i32", ...) as a string, or a constexpr's
  // value as an integer / boolean: lets `optimize` and `analyze` compile without a GPU.
  std::map<std::string, std::map<std::string, nlohmann::json>> signatures;

  nlohmann::json toJson() const;
  // A short label for case i: "M=4096,N=4096", one line (control characters escaped).
  std::string caseLabel(size_t i) const;
};

// Reads and validates a task file. Throws UserError naming the file and the key.
// Checks that `source` and `harness` exist; whether the functions they must define
// exist is checked once they are parsed (validateTaskFunctions in cli).
Task loadTask(const std::filesystem::path& path);

}  // namespace tf
