// Replay tasks from a capture: the launcher appended to a copy of the kernel's module (literal
// constexprs and options where the search tunes them, the grid rebuilt from the arguments),
// the task file that the task loader accepts, and the reasons a kernel gets no task.
#include <gtest/gtest.h>

#include "capture/replay_task.h"
#include "support/test_support.h"
#include "task/task.h"
#include "util/fs.h"

namespace tf {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Json tensorArg(std::vector<int64_t> shape, const char* dtype = "float16") {
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
  return {{"kind", "tensor"}, {"dtype", dtype}, {"shape", shape}, {"stride", stride}, {"offset", 0}, {"device", "cuda:0"},
          {"align16", true}};
}

Json intArg(int64_t v) { return {{"kind", "int"}, {"value", v}}; }

// One recorded launch of rows(x_ptr, y_ptr, n_rows, n_cols, BLOCK) with x read and y written.
Json rowsLaunch(int64_t rows, int64_t cols, int64_t block, std::vector<int64_t> grid, Json config = Json::object()) {
  Json args = {{"x_ptr", tensorArg({rows, cols})}, {"y_ptr", tensorArg({rows, cols})}, {"n_rows", intArg(rows)},
               {"n_cols", intArg(cols)}};
  Json given = {"x_ptr", "y_ptr", "n_rows", "n_cols"};
  if (config.empty()) {
    args["BLOCK"] = intArg(block);
    given.push_back("BLOCK");
  } else {
    args["BLOCK"] = config["BLOCK"];
  }
  int64_t bytes = rows * cols * 2;
  Json snapshot = {{"spans", {{{"device", "cuda:0"}, {"nbytes", bytes}, {"before", "aa"}, {"after", nullptr}},
                              {{"device", "cuda:0"}, {"nbytes", bytes}, {"before", "bb"}, {"after", "cc"}}}},
                   {"tensors", {{"x_ptr", {{"span", 0}, {"byte_offset", 0}}}, {"y_ptr", {{"span", 1}, {"byte_offset", 0}}}}}};
  return {{"args", args}, {"given", given}, {"grid", grid}, {"options", {{"num_warps", 4}}}, {"config", config},
          {"launches", 3}, {"time_ms", 1.0}, {"snapshot", snapshot}, {"snapshot_skipped", nullptr}};
}

CapturedKernel rowsKernel(const fs::path& file, std::vector<Json> launches, std::vector<std::string> via = {"jit"}) {
  CapturedKernel k;
  k.name = "rows_kernel";
  k.file = file.string();
  k.line = 3;
  k.tunable = true;
  k.via = via;
  k.arg_names = {"x_ptr", "y_ptr", "n_rows", "n_cols", "BLOCK"};
  k.constexprs = {"BLOCK"};
  k.signatures = std::move(launches);
  k.launches = 6;
  k.time_ms = 2;
  return k;
}

class ReplayTasks : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::tempDir("replay");
    test::writeFile(dir_ / "prog" / "rows.py", "import triton\n\n@triton.jit\ndef rows_kernel(x_ptr, y_ptr, n_rows, "
                                               "n_cols, BLOCK: tl.constexpr):\n    pass\n");
    test::writeFile(dir_ / "worker" / "tritonforge_worker" / "capture" / "replay_harness.py",
                    "def make_inputs(case, seed):\n    return ()\ndef reference(*a):\n    return 0\n");
  }
  std::vector<ReplayTask> write(const CapturedKernel& k, const fs::path& out) {
    CaptureSummary s;
    s.kernels = {k};
    return writeReplayTasks(s, out, 5, dir_ / "worker");
  }
  fs::path dir_;
};

TEST_F(ReplayTasks, TheLauncherBindsTheConstexprAndRebuildsTheGridFromTheArguments) {
  CapturedKernel k = rowsKernel(dir_ / "prog" / "rows.py", {rowsLaunch(4096, 1000, 256, {4, 4096, 1}),
                                                            rowsLaunch(64, 3000, 256, {12, 64, 1})});
  auto tasks = write(k, dir_ / "cap");
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_FALSE(tasks[0].task.empty()) << tasks[0].why_not;
  EXPECT_EQ(tasks[0].cases, 2);
  std::string source = readTextFile(tasks[0].task.parent_path() / "rows.py", "source");
  EXPECT_NE(source.find("def tritonforge_replay(x_ptr, y_ptr, n_rows, n_cols):\n    BLOCK = 256\n    num_warps = 4\n"
                        "    rows_kernel[(triton.cdiv(n_cols, BLOCK), n_rows)](x_ptr, y_ptr, n_rows, n_cols, "
                        "BLOCK=BLOCK, num_warps=num_warps)\n"),
            std::string::npos)
      << source;
  EXPECT_EQ(source.rfind("import triton\n\n@triton.jit", 0), 0u) << "the module itself comes first, unchanged";
  Task task = loadTask(tasks[0].task);
  EXPECT_EQ(task.launcher, "tritonforge_replay");
  EXPECT_EQ(task.cases.size(), 2u);
  EXPECT_EQ(task.check.in_place, std::vector<int>({1}));
  EXPECT_EQ(task.check.reference_precision, "as-is");
  EXPECT_EQ(*task.check.rtol, 2e-3);  // float16 outputs
  ASSERT_EQ(task.search_path.size(), 1u);  // the program's own folder: not a package
  EXPECT_EQ(task.search_path[0], (dir_ / "prog").lexically_normal());
  EXPECT_EQ(task.signatures.at("rows_kernel").at("x_ptr"), "*fp16");
  EXPECT_EQ(task.signatures.at("rows_kernel").at("n_rows"), "i32");
  Json replay = Json::parse(readTextFile(tasks[0].task.parent_path() / "replay.json", "replay"));
  EXPECT_EQ(replay["inputs"], Json({"x_ptr", "y_ptr", "n_rows", "n_cols"}));
  EXPECT_EQ(replay["cases"][1]["scalars"]["n_cols"], 3000);
  EXPECT_EQ(replay["cases"][0]["tensors"]["y_ptr"]["span"], 1);
}

TEST_F(ReplayTasks, AnAutotunedKernelIsLaunchedThroughItsAutotunerWithAMetaGrid) {
  Json cfg = {{"BLOCK", intArg(128)}, {"num_warps", intArg(8)}};
  Json l1 = rowsLaunch(100, 1000, 0, {8, 1, 1}, cfg);
  Json l2 = rowsLaunch(100, 5000, 0, {40, 1, 1}, cfg);
  for (Json* l : {&l1, &l2}) (*l)["options"] = {{"num_warps", 8}};
  auto tasks = write(rowsKernel(dir_ / "prog" / "rows.py", {l1, l2}, {"autotuner"}), dir_ / "cap");
  ASSERT_FALSE(tasks[0].task.empty()) << tasks[0].why_not;
  std::string source = readTextFile(tasks[0].task.parent_path() / "rows.py", "source");
  EXPECT_NE(source.find("    rows_kernel[lambda META: (triton.cdiv(n_cols, META[\"BLOCK\"]),)](x_ptr, y_ptr, n_rows, "
                        "n_cols)\n"),
            std::string::npos)
      << source;
  Task task = loadTask(tasks[0].task);
  EXPECT_EQ(task.signatures.at("rows_kernel").at("BLOCK"), 128);  // the configuration's, for compiling
}

TEST_F(ReplayTasks, AConstexprThatDiffersIsPassedInAndAGridOfNoKnownFormIsRefused) {
  auto tasks = write(rowsKernel(dir_ / "prog" / "rows.py", {rowsLaunch(4096, 1000, 256, {4, 4096, 1}),
                                                            rowsLaunch(64, 3000, 512, {6, 64, 1})}),
                     dir_ / "a");
  ASSERT_FALSE(tasks[0].task.empty()) << tasks[0].why_not;
  ASSERT_EQ(tasks[0].notes.size(), 1u);
  EXPECT_NE(tasks[0].notes[0].find("constexpr 'BLOCK' differs between the launches: passed in, not tuned"),
            std::string::npos);
  std::string source = readTextFile(tasks[0].task.parent_path() / "rows.py", "source");
  EXPECT_NE(source.find("rows_kernel[(triton.cdiv(n_cols, BLOCK), n_rows)](x_ptr, y_ptr, n_rows, n_cols, BLOCK, "),
            std::string::npos)
      << source;

  tasks = write(rowsKernel(dir_ / "prog" / "rows.py", {rowsLaunch(4096, 1000, 256, {7, 1, 1}),
                                                       rowsLaunch(64, 3000, 256, {9, 1, 1})}),
                dir_ / "b");
  EXPECT_TRUE(tasks[0].task.empty());
  EXPECT_NE(tasks[0].why_not.find("grid dimension 0 (7, 9) is none of the forms"), std::string::npos)
      << tasks[0].why_not;
  EXPECT_FALSE(fs::exists(dir_ / "b" / "tasks")) << "nothing is written for a kernel without a task";
}

TEST_F(ReplayTasks, AGridThatTheProgramWroteWithoutADivisionIsRebuiltWithoutOne) {
  // One launch: 8 rows of 128 columns, BLOCK 128. cdiv(x.numel(), BLOCK) = 8 = n_rows too.
  Json one = rowsLaunch(8, 128, 128, {8, 1, 1});
  auto tasks = write(rowsKernel(dir_ / "prog" / "rows.py", {one}), dir_ / "a");
  ASSERT_FALSE(tasks[0].task.empty()) << tasks[0].why_not;
  std::string source = readTextFile(tasks[0].task.parent_path() / "rows.py", "source");
  EXPECT_NE(source.find("rows_kernel[(triton.cdiv(x_ptr.numel(), BLOCK),)]"), std::string::npos) << source;
  one["grid_source"] = "(n_rows,)";
  tasks = write(rowsKernel(dir_ / "prog" / "rows.py", {one}), dir_ / "b");
  source = readTextFile(tasks[0].task.parent_path() / "rows.py", "source");
  EXPECT_NE(source.find("rows_kernel[(n_rows,)]"), std::string::npos) << source;
}

TEST_F(ReplayTasks, AKernelWithoutASavedLaunchOrAnOutputGetsNoTaskAndSaysWhy) {
  Json unsaved = rowsLaunch(64, 64, 64, {1, 64, 1});
  unsaved["snapshot"] = nullptr;
  unsaved["snapshot_skipped"] = "the capture's data quota (0 MiB) is used up";
  auto tasks = write(rowsKernel(dir_ / "prog" / "rows.py", {unsaved}), dir_ / "a");
  EXPECT_EQ(tasks[0].why_not, "no launch of it was saved (the capture's data quota (0 MiB) is used up)");

  Json unchanged = rowsLaunch(64, 64, 64, {1, 64, 1});
  unchanged["snapshot"]["spans"][1]["after"] = nullptr;
  tasks = write(rowsKernel(dir_ / "prog" / "rows.py", {unchanged}), dir_ / "b");
  EXPECT_NE(tasks[0].why_not.find("changed no memory"), std::string::npos);

  Json broken = rowsLaunch(64, 64, 64, {1, 64, 1});
  broken["grid"] = "not a grid";
  tasks = write(rowsKernel(dir_ / "prog" / "rows.py", {broken}), dir_ / "c");
  EXPECT_FALSE(tasks[0].why_not.empty());
}

}  // namespace
}  // namespace tf
