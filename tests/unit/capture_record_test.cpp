// Reading what `tritonforge capture` recorded: per-process records merged per kernel, ranked
// by GPU time, the table and the summary JSON; a folder without a record or a file that is
// not one is refused by name.
#include <gtest/gtest.h>

#include "capture/capture_record.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/temp_dir.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

nlohmann::json kernelJson(const std::string& name, int launches, double ms, int signatures, int in_graph = 0) {
  nlohmann::json sigs = nlohmann::json::array();
  for (int i = 0; i < signatures; ++i) {
    sigs.push_back({{"launches", launches / signatures}, {"time_ms", ms / signatures}, {"in_graph_capture", in_graph}});
  }
  return {{"name", name}, {"module", "pkg.ops"}, {"file", "/env/lib/python3.12/site-packages/pkg/ops/" + name + ".py"},
          {"line", 10}, {"tunable", true}, {"why_not", nullptr}, {"via", {"jit"}}, {"launches", launches},
          {"bench_launches", 0}, {"time_ms", ms}, {"signatures", sigs}, {"other_signatures", nullptr}};
}

void writeRecord(const fs::path& dir, int pid, const nlohmann::json& kernels, const nlohmann::json& outside) {
  fs::create_directories(dir / "launches");
  nlohmann::json j = {{"pid", pid}, {"timing", "cuda-events"}, {"kernels", kernels}, {"outside", outside},
                      {"saved_bytes", 100}, {"errors", nlohmann::json::array()}, {"versions", {{"triton", "3.6.0"}}}};
  writeFileAtomic(dir / "launches" / (std::to_string(pid) + ".json"), j.dump());
}

TEST(CaptureRecord, WithTorchProfilerTimesTheShareIsOfTheProgramsWholeGpuTime) {
  TempDir tmp("tf-capture-");
  fs::create_directories(tmp.path() / "launches");
  nlohmann::json j = {{"pid", 1}, {"timing", "torch.profiler"}, {"gpu_total_ms", 40.0},
                      {"kernels", {kernelJson("rms_norm", 10, 2.0, 1)}}, {"outside", nlohmann::json::array()}};
  writeFileAtomic(tmp.path() / "launches" / "1.json", j.dump());
  nlohmann::json k = j;
  k["pid"] = 2;
  k["timing"] = "cuda-events";  // a process whose profiler did not start: the record says events
  k["gpu_total_ms"] = nullptr;
  writeFileAtomic(tmp.path() / "launches" / "2.json", k.dump());
  CaptureSummary s = readCapture(tmp.path());
  EXPECT_EQ(s.timing, "cuda-events");
  EXPECT_DOUBLE_EQ(s.gpu_total_ms, 40.0);
  std::string table = captureTable(s, 0);
  EXPECT_NE(table.find(" 10.0% "), std::string::npos) << table;  // 4 ms of 40
  EXPECT_NE(table.find("the program's GPU kernel time (torch.profiler, copies left out): 40.000 ms, 10.0% of it"), std::string::npos) << table;
  EXPECT_DOUBLE_EQ(captureSummaryJson(s)["kernels"][0]["share"].get<double>(), 0.1);
}

TEST(CaptureRecord, ProcessesAreMergedPerKernelAndRankedByTime) {
  TempDir tmp("tf-capture-");
  writeRecord(tmp.path(), 11, {kernelJson("rms_norm", 10, 2.0, 2), kernelJson("rope", 4, 0.5, 1)},
              nlohmann::json::array());
  writeRecord(tmp.path(), 12, {kernelJson("rms_norm", 10, 2.0, 1), kernelJson("graph_only", 3, 0.1, 1, 3)},
              {{{"name", "triton_poi_fused_sin_0"}, {"launches", 5}, {"time_ms", 4.5},
                {"why_not", "launched without @triton.jit's call"}}});
  CaptureSummary s = readCapture(tmp.path());
  ASSERT_EQ(s.kernels.size(), 4u);
  EXPECT_EQ(s.processes, 2);
  EXPECT_EQ(s.saved_bytes, 200);
  EXPECT_EQ(s.timing, "cuda-events");
  EXPECT_EQ(s.kernels[0].name, "triton_poi_fused_sin_0");
  EXPECT_TRUE(s.kernels[0].outside_jit);
  EXPECT_EQ(s.kernels[1].name, "rms_norm");
  EXPECT_EQ(s.kernels[1].launches, 20);
  EXPECT_DOUBLE_EQ(s.kernels[1].time_ms, 4.0);
  EXPECT_EQ(s.kernels[1].signatures.size(), 3u);
  EXPECT_EQ(s.kernels[1].processes, 2);
  EXPECT_NEAR(s.total_ms(), 9.1, 1e-9);

  std::string table = captureTable(s, 2);
  EXPECT_NE(table.find("rms_norm"), std::string::npos) << table;
  EXPECT_NE(table.find("pkg/ops/rms_norm.py:10"), std::string::npos) << table;  // site-packages/ cut off
  EXPECT_NE(table.find("no: launched without @triton.jit's call"), std::string::npos) << table;
  EXPECT_NE(table.find("(2 more kernels, 0.600 ms)"), std::string::npos) << table;
  EXPECT_NE(table.find("total: 4 kernels, 9.100 GPU ms over 2 process(es)"), std::string::npos) << table;

  nlohmann::json j = captureSummaryJson(s);
  ASSERT_EQ(j["kernels"].size(), 4u);
  EXPECT_FALSE(j["kernels"][0]["tunable"].get<bool>());
  EXPECT_TRUE(j["kernels"][1]["tunable"].get<bool>());
  EXPECT_NEAR(j["kernels"][1]["share"].get<double>(), 4.0 / 9.1, 1e-9);
  const auto& graph = j["kernels"][3];
  EXPECT_EQ(graph["name"], "graph_only");
  EXPECT_FALSE(graph["tunable"].get<bool>());
  EXPECT_NE(graph["why_not"].get<std::string>().find("CUDA-graph capture"), std::string::npos);
}

TEST(CaptureRecord, AFolderWithoutARecordOrAFileThatIsNotOneIsRefusedByName) {
  TempDir tmp("tf-capture-");
  try {
    readCapture(tmp.path());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no capture record here"), std::string::npos) << e.what();
  }
  fs::create_directories(tmp.path() / "launches");
  writeFileAtomic(tmp.path() / "launches" / "7.json", "[1, 2]");
  try {
    readCapture(tmp.path());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("7.json: not a capture record"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tf
