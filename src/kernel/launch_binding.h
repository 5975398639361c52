// What a kernel is launched with for one case, found without running anything: a small
// evaluator of Python follows the harness's make_inputs(case, seed) (tensor shapes and dtypes
// from torch.randn / empty / ... calls) and then the launcher (x.shape, x.stride(i),
// triton.cdiv, triton.next_power_of_2, torch.empty_like, ...) up to each launch
// `kernel[grid](...)`, and evaluates the arguments and the grid there.
//
// Entry points: bindCase (per case: every launch reached from the launcher, with argument
// values) and configFor (one launch x one autotune config -> AnalysisConfig + ParamTypes).
// Anything it cannot evaluate stays unknown and is listed in `notes`; tensors are taken to be
// contiguous unless the code transposes or slices them.
#pragma once

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_cost.h"
#include "kernel/kernel_ir.h"
#include "kernel/module_ir.h"

namespace tf {

struct PyValue {
  enum class Kind { kUnknown, kNone, kInt, kFloat, kBool, kStr, kTensor, kTuple, kDict, kDType, kLambda, kDescriptor };
  Kind kind = Kind::kUnknown;
  int64_t i = 0;
  double f = 0;
  std::string s;                       // kStr; kDType: Triton dtype name ("fp16")
  std::vector<int64_t> shape, strides; // kTensor (kDescriptor: block shape in `shape`)
  std::string dtype;                   // kTensor / kDescriptor element type
  std::vector<PyValue> items;          // kTuple
  std::map<std::string, PyValue> dict; // kDict
  const Node* lambda = nullptr;        // kLambda

  static PyValue integer(int64_t v);
  bool isInt() const { return kind == Kind::kInt || kind == Kind::kBool; }
  std::string describe() const;        // short text: "tensor fp16[4096, 4096]", "4096"
};

struct LaunchBinding {
  std::string kernel;
  int site = -1;                                // index into ModuleIR::launches
  std::map<std::string, PyValue> args;          // kernel parameter -> value
  std::map<std::string, int64_t> options;       // num_warps / num_stages given at the launch
  const Node* grid = nullptr;
  std::map<std::string, PyValue> scope;         // the launcher's names at the launch (for grid lambdas)
  std::vector<std::string> notes;
};

struct CaseBinding {
  std::vector<PyValue> inputs;                  // make_inputs' result
  std::vector<LaunchBinding> launches;
  std::vector<std::string> notes;
};

// `harness` may be null (then the launcher's parameters are unknown). `case_` is a JSON object
// of scalars.
CaseBinding bindCase(const ModuleIR& source, const std::string& launcher, const ModuleIR* harness,
                     const nlohmann::json& case_);

// Evaluates the launch's grid with the constexpr values `meta` (autotune configs reach the
// grid lambda through META). nullopt when it cannot.
std::optional<std::array<int64_t, 3>> evalGrid(const ModuleIR& source, const LaunchBinding& launch,
                                               const std::map<std::string, int64_t>& meta);

// Values of the kernel's @triton.heuristics for this launch (each sees the ones before it).
std::map<std::string, int64_t> evalHeuristics(const ModuleIR& source, const Kernel& kernel, const LaunchBinding& launch,
                                              const std::map<std::string, int64_t>& meta, std::vector<std::string>* notes);

// The Triton type of an argument as the JIT would specialize it: "*fp16", "i32", "i64",
// "fp32", "i1", "tensordesc<fp16[64, 64]>"; "" when unknown. Integers equal to 1 become
// constexpr 1 (`constexpr` then), as Triton's JIT does.
std::string tritonType(const PyValue& v);

}  // namespace tf
