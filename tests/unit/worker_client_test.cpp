// The typed worker client: the JSON each request becomes (the protocol the Python worker
// reads, docs/worker-protocol.md), replies read back into typed values whatever their
// shape, and the GPU's limits taken from what the worker reports.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "worker/measurement.h"
#include "worker/target.h"
#include "worker/worker_client.h"

namespace tf {
namespace {

RunRequest aRun() {
  RunRequest r;
  r.launch.variant = {"/w/v1/k.py", "tfv_1"};
  r.launch.launcher = "add";
  r.launch.harness = "/t/h.py";
  r.launch.search_path = {"/t", "/h"};
  r.case_values = {{"N", 4096}};
  r.seeds = {0, 1};
  r.check.rtol = 1e-3;
  r.check.in_place = {2};
  return r;
}

TEST(WorkerClient, RunRequestIsTheProtocolsRun) {
  RunRequest r = aRun();
  nlohmann::json j = toJson(r);
  EXPECT_EQ(j["variant"], (nlohmann::json{{"path", "/w/v1/k.py"}, {"module_name", "tfv_1"}}));
  EXPECT_EQ(j["launcher"], "add");
  EXPECT_EQ(j["search_path"], (nlohmann::json{"/t", "/h"}));
  EXPECT_EQ(j["case"]["N"], 4096);
  EXPECT_EQ(j["seeds"], (nlohmann::json{0, 1}));
  EXPECT_EQ(j["check"]["rtol"], 1e-3);
  EXPECT_FALSE(j["check"].contains("atol"));  // unset: the worker's default per dtype
  EXPECT_EQ(j["check"]["in_place"], (nlohmann::json{2}));
  EXPECT_EQ(j["timing"], (nlohmann::json{{"enabled", false}}));
  EXPECT_FALSE(j.contains("asm"));
  r.timing = TimingOptions{};
  r.asm_texts = {"ptx"};
  j = toJson(r);
  EXPECT_EQ(j["timing"]["budget_ms"], 250);
  EXPECT_EQ(j["timing"]["flush"], true);
  EXPECT_EQ(j["asm"], (nlohmann::json{"ptx"}));
  nlohmann::json once = profileLaunchRequest(r, 3);
  EXPECT_EQ(once["op"], "profile_launch");
  EXPECT_EQ(once["args"]["warmup"], 3);
  EXPECT_EQ(once["args"]["seed"], 0);
  EXPECT_FALSE(once["args"].contains("timing"));
}

TEST(WorkerClient, ABackwardTaskSaysSoInRunAndWarm) {
  RunRequest r = aRun();
  EXPECT_FALSE(toJson(r).contains("direction"));  // forward: the protocol as before
  r.launch.direction = "backward";
  EXPECT_EQ(toJson(r)["direction"], "backward");
  WarmRequest w;
  w.launch = r.launch;
  EXPECT_EQ(toJson(w)["direction"], "backward");
}

TEST(WorkerClient, CompileRequestCarriesTheTargetOnce) {
  CompileRequest c;
  c.path = "/k.py";
  c.kernel = "k";
  c.signature = {{"x_ptr", "*fp16"}, {"n", "i32"}};
  c.constexprs = {{"BLOCK", 128}};
  c.divisibility = {{"n", 16}};
  c.options = {{"num_warps", 8}};
  nlohmann::json j = toJson(c);
  EXPECT_EQ(j["target"], (nlohmann::json{{"backend", "cuda"}, {"arch", 90}, {"warp_size", 32}}));
  EXPECT_EQ(j["signature"]["x_ptr"], "*fp16");
  EXPECT_EQ(j["attrs"]["n"], 16);
  EXPECT_EQ(j["options"]["num_warps"], 8);
  EXPECT_FALSE(j.contains("module_name"));
  EXPECT_EQ(kSm90Target.label(), "cuda:90");
}

TEST(WorkerClient, MeasurementsReadAnyShapeWithoutThrowing) {
  // The worker's result and the database's stored JSON go through the same reader.
  CaseMeasurement ok = CaseMeasurement::fromJson(nlohmann::json::parse(R"({
      "status": "ok", "verify": {"passed": true, "max_abs_err": 0.5, "failed_seed": "x"},
      "timing": {"median_ms": 2.0, "q1_ms": 1.9, "q3_ms": 2.1, "reps": 12},
      "kernels": [{"name": "k"}], "outputs": [{"shape": [4]}], "wall_seconds": 1.5})"));
  EXPECT_EQ(ok.status, CandidateStatus::kOk);
  EXPECT_TRUE(ok.verify.passed);
  EXPECT_DOUBLE_EQ(ok.verify.max_abs_err, 0.5);
  EXPECT_FALSE(ok.verify.failed_seed);  // a string where an int belongs is dropped, not thrown
  ASSERT_TRUE(ok.timing);
  EXPECT_DOUBLE_EQ(ok.timing->median_ms, 2.0);
  EXPECT_NEAR(ok.timing->noise(), 0.1, 1e-12);
  EXPECT_EQ(ok.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(ok.wall_seconds, 1.5);
  // Round trip.
  CaseMeasurement back = CaseMeasurement::fromJson(ok.toJson());
  EXPECT_EQ(back.toJson(), ok.toJson());
  // Wrong types everywhere: a value, not an exception.
  for (const char* text : {R"(42)", R"({"status": 7})", R"({"status": "ok", "timing": {"median_ms": "fast"}})",
                           R"({"status": "ok", "verify": [1], "kernels": {"a": 1}, "timing": {"median_ms": -1}})"}) {
    CaseMeasurement m = CaseMeasurement::fromJson(nlohmann::json::parse(text));
    EXPECT_NE(m.status, CandidateStatus::kOk) << text;
  }
}

TEST(WorkerClient, FailedCompileRepliesKeepTheirStatus) {
  WorkerReply r;
  r.status = WorkerReply::Status::kFailed;
  r.error_type = "OutOfResources";
  r.message = "shared memory";
  r.result = {{"status", "out-of-resources"}};
  CaseMeasurement m = measurementFromReply(r);
  EXPECT_EQ(m.status, CandidateStatus::kOutOfResources);
  EXPECT_EQ(m.message, "OutOfResources: shared memory");
  WorkerReply hang;
  hang.status = WorkerReply::Status::kTimeout;
  hang.message = "no reply";
  EXPECT_EQ(measurementFromReply(hang).status, CandidateStatus::kTimeout);
}

TEST(GpuLimits, WhatTheWorkerReportsWinsOverTheTable) {
  GpuLimits table = GpuLimits::fromHello(nlohmann::json{{"cc", {9, 0}}, {"sms", 132}});
  EXPECT_EQ(table.sharedPerBlock(), kSm90SharedPerBlock);
  EXPECT_EQ(kSm90SharedPerBlock, 232448);  // 227 KiB
  GpuLimits reported = GpuLimits::fromHello(nlohmann::json{
      {"cc", {9, 0}}, {"sms", 66}, {"shared_per_sm", 200 * 1024}, {"shared_per_block_optin", 199 * 1024},
      {"registers_per_sm", 32768}, {"max_threads_per_sm", 1536}});
  EXPECT_EQ(reported.sms, 66);
  EXPECT_EQ(reported.sharedPerBlock(), 199 * 1024);
  EXPECT_EQ(reported.registers_per_sm, 32768);
  EXPECT_EQ(reported.max_warps_per_sm, 48);
  // Nonsense is ignored, not trusted.
  GpuLimits odd = GpuLimits::fromHello(nlohmann::json{{"cc", "nine"}, {"sms", "x"}, {"shared_per_sm", -5}});
  EXPECT_EQ(odd.sharedPerBlock(), kSm90SharedPerBlock);
  EXPECT_EQ(odd.sms, 132);
}

}  // namespace
}  // namespace tf
