// check.in_place indices beyond the inputs make_inputs returns: the loader cannot know the
// number of inputs, the worker refuses them at the first `run` (a TaskError reply), and the
// CLI reports that as bad input of the task file: one line naming it, exit 2. The fake GPU
// worker runs the real worker's check against TF_FAKE_INPUTS inputs.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/test_support.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

// The softmax example with `in_place = [0, 5]`: make_inputs returns 2 inputs (say).
fs::path taskWithInPlace() {
  fs::path dir = test::tempDir("in-place");
  fs::copy(test::sourceDir() / "examples" / "softmax", dir, fs::copy_options::recursive);
  std::string text = test::readFile(dir / "task.toml");
  size_t at = text.find("[check]\n");
  EXPECT_NE(at, std::string::npos);
  text.insert(at + 8, "in_place = [0, 5]\n");
  test::writeFile(dir / "task.toml", text);
  return dir / "task.toml";
}

std::string fakeRun(const std::string& args) {
  return "TF_FAKE_REAL_PYTHON=" + choosePython("") + " TF_FAKE_INPUTS=2 " + test::tritonforgeBinary().string() +
         " --python " + (test::sourceDir() / "tests/worker_fakes/fake_gpu_python").string() + " " + args;
}

void expectTaskError(const std::pair<int, std::string>& result, const fs::path& task) {
  const auto& [rc, out] = result;
  EXPECT_EQ(rc, 2) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("tritonforge: " + task.string() +
                     ": check.in_place[1] = 5 names no input: make_inputs returned 2 inputs (indices 0 to 1)"),
            std::string::npos)
      << out;
}

TEST(InPlaceIndex, ProfileRefusesAnIndexBeyondTheInputs) {
  fs::path task = taskWithInPlace();
  expectTaskError(test::runShell(fakeRun("profile " + task.string() + " --no-roofline")), task);
}

// The baseline measurement of `optimize` (src/search/baseline.cpp) turns the worker's
// TaskError into this one line.
TEST(InPlaceIndex, OptimizeRefusesAnIndexBeyondTheInputs) {
  fs::path task = taskWithInPlace();
  fs::path out = test::tempDir("in-place-out");
  expectTaskError(test::runShell(fakeRun("optimize " + task.string() + " --no-db --out " + out.string() +
                                         " --jobs 1 --budget 60 --json")),
                  task);
}

}  // namespace
}  // namespace tf
