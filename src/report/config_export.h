// `tritonforge export`: the best verified configuration per shape (task case) of an optimize
// run, from its result.json, as an @triton.autotune config list or as a per-shape dispatch
// table (JSON, with a small Python helper that picks the nearest tuned shape).
//
// Entry points: bestPerShape (reads result.json; UserError on anything it cannot use),
// autotuneConfigsArg (the autotune pass's `configs=` for one kernel), dispatchTableJson,
// dispatchHelperPython, autotuneDecorator (the decorator text in a rewritten source).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tf {

inline constexpr const char* kDispatchSchema = "tritonforge.dispatch/1";

struct ShapeBest {
  nlohmann::json shape;                 // the task's case object
  std::string label;
  int candidate = -1;                   // id in result.json's candidates[]
  double time_ms = 0;                   // its median on this case
  double as_written_ms = 0;             // the kernel as written on this case (0: unknown)
  // kernel -> parameter -> value; values left as written are filled in from tunables[].
  std::map<std::string, std::map<std::string, int64_t>> params;
  // kernel -> parameters the candidate left as written (and whose value is not known).
  std::map<std::string, std::vector<std::string>> as_written;
};

struct ShapeTable {
  std::string task, source;             // the task's name and its source file
  std::vector<std::string> keys;        // the case keys, in the order of the first case
  std::vector<ShapeBest> shapes;        // one per case, in the task's order
  std::vector<std::string> kernels;     // kernels with a tuned parameter, sorted
};

// Per case, the fastest candidate that verified on every case and applies to the source as
// written (a pass's rewrite is another source: it cannot be a config of this one). Throws
// UserError naming `what` for a file that is not an optimize result or holds no measurement.
ShapeTable bestPerShape(const nlohmann::json& result, const std::string& what);

// "[BLOCK=256 num_warps=8; BLOCK=128 num_warps=4]": the distinct configurations of
// `kernel`, fastest shape first, as the autotune pass's `configs` parameter.
std::string autotuneConfigsArg(const ShapeTable& table, const std::string& kernel);

// {"schema", "task", "keys", "entries": [{"case", "label", "time_ms", "speedup", "config": {kernel: {param: v}}}]}
nlohmann::json dispatchTableJson(const ShapeTable& table);

// A Python module: load(path) and pick(table, **shape) -> the entry of the nearest tuned
// shape (distance: sum over the keys of |log2(a) - log2(b)|; exact matches first).
std::string dispatchHelperPython();

// The `@triton.autotune(...)` decorator above `kernel` in `source` (as the pass wrote it),
// or "" when there is none.
std::string autotuneDecorator(const std::string& source, const std::string& kernel);

}  // namespace tf
