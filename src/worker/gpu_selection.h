// Which GPUs a command measures on (`--gpus all|N|LIST`), resolved against what a worker's
// hello reports, and grouped by model.
//
// Entry points: parseGpuSelection (the flag; bad text is a UserError), resolveGpus (the
// hello's device list -> one GpuDevice per lane, each with its CUDA_VISIBLE_DEVICES value),
// groupByModel (lanes of one GPU model are tuned together; each model is its own search).
// Reads CUDA_VISIBLE_DEVICES of this process: a lane's value is the entry of that list (the
// user's numbering is kept), else the index itself.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tf {

struct GpuSelection {
  enum class Kind { kDefault, kAll, kCount, kList };
  Kind kind = Kind::kDefault;
  int count = 0;                     // kCount
  std::vector<int> list;             // kList: indices among the visible GPUs, in order
  std::string text;                  // as given
  bool isDefault() const { return kind == Kind::kDefault; }
};

// "" (default: one GPU, as before), "all", "N" (the first N), "0,2" (these). Throws UserError.
GpuSelection parseGpuSelection(const std::string& text);

struct GpuDevice {
  int index = 0;                     // among the GPUs the discovering worker saw
  std::string device;                // CUDA_VISIBLE_DEVICES value that pins a worker to it
  std::string name;                  // the model ("NVIDIA H200")
};

// The lanes a selection gives, from a hello (its "gpu": {"device_count", "devices": [{"index",
// "name"}]}). `visible`: this process's CUDA_VISIBLE_DEVICES ("" when unset). Throws
// UserError when the selection names a GPU that is not there. A hello without a GPU gives
// no lanes (the command then runs as without a GPU).
std::vector<GpuDevice> resolveGpus(const GpuSelection& sel, const nlohmann::json& hello, const std::string& visible);

// Lanes grouped by model name, in the order each model first appears.
std::vector<std::vector<GpuDevice>> groupByModel(const std::vector<GpuDevice>& lanes);

// "NVIDIA H200" -> "nvidia-h200": a folder name for a model's results.
std::string modelSlug(const std::string& name);

// Splits `lanes` into `slots` contiguous groups of sizes as equal as possible (slots <= size).
std::vector<std::vector<GpuDevice>> splitLanes(const std::vector<GpuDevice>& lanes, int slots);

}  // namespace tf
