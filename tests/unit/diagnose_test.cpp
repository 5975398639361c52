// The diagnosis rules on synthetic Nsight Compute rows: a healthy memory-bound kernel (no
// findings), then one planted problem at a time, each giving its finding with the expected
// severity, limiter or stall reason, and nothing else of note. Then the diagnosis without ncu:
// from launch facts, static facts and the roofline alone.
// The metric values are written by hand (plausible H200 figures), not recorded.
#include <gtest/gtest.h>

#include <map>

#include "diagnose/diagnose.h"
#include "measure/ncu_csv.h"
#include "support/test_support.h"

namespace tf {
namespace {

using Row = std::map<std::string, std::pair<std::string, std::string>>;  // metric -> (unit, value)

// A streaming kernel at the DRAM roofline: nothing to find.
Row healthy() {
  return {
      {"gpu__time_duration.sum", {"usecond", "125.5"}},
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "35"}},
      {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "92"}},
      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "92"}},
      {"l1tex__throughput.avg.pct_of_peak_sustained_active", {"%", "40"}},
      {"lts__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "60"}},
      {"launch__grid_size", {"", "32,768"}},
      {"launch__block_size", {"", "128"}},
      {"launch__registers_per_thread", {"register/thread", "32"}},
      {"launch__shared_mem_per_block_dynamic", {"byte", "0"}},
      {"launch__waves_per_multiprocessor", {"", "15.52"}},
      {"device__attribute_multiprocessor_count", {"", "132"}},
      {"sm__maximum_warps_per_active_cycle_pct", {"%", "100"}},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", {"%", "85"}},
      {"launch__occupancy_limit_registers", {"block", "16"}},
      {"launch__occupancy_limit_shared_mem", {"block", "32"}},
      {"launch__occupancy_limit_warps", {"block", "16"}},
      {"launch__occupancy_limit_blocks", {"block", "32"}},
      {"smsp__sass_inst_executed_op_local_ld.sum", {"inst", "0"}},
      {"smsp__sass_inst_executed_op_local_st.sum", {"inst", "0"}},
      {"derived__local_spilling_requests", {"", "0"}},
      {"smsp__sass_inst_executed_op_global_ld.sum", {"inst", "1,048,576"}},
      {"smsp__sass_inst_executed_op_global_st.sum", {"inst", "1,048,576"}},
      {"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio", {"byte/sector", "32"}},
      {"smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio", {"byte/sector", "32"}},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", {"sector", "16,777,216"}},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", {"request", "1,048,576"}},
      {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", {"%", "10"}},
      {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", {"%", "0"}},
      {"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", {"%", "0"}},
      {"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", {"", "0"}},
      {"derived__memory_l1_wavefronts_shared_excessive", {"", "0"}},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", {"", "0"}},
      {"lts__t_sector_hit_rate.pct", {"%", "30"}},
      {"dram__bytes_read.sum", {"Mbyte", "268.44"}},
      {"dram__bytes_write.sum", {"Mbyte", "268.44"}},
      {"smsp__issue_active.avg.pct_of_peak_sustained_active", {"%", "20"}},
      {"smsp__average_warp_latency_per_inst_issued.ratio", {"cycle", "40"}},
      {"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", {"", "30"}},
      {"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", {"", "3"}},
      {"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", {"", "0"}},
      {"smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio", {"", "4"}},
      {"smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio", {"", "1"}},
      {"smsp__average_warps_issue_stalled_selected_per_issue_active.ratio", {"", "1"}},
  };
}

std::string csvOf(const Row& row, const std::string& kernel = "k") {
  std::string h = "\"ID\",\"Kernel Name\"", u = "\"\",\"\"", v = "\"0\",\"" + kernel + "\"";
  for (const auto& [name, uv] : row) {
    h += ",\"" + name + "\"";
    u += ",\"" + uv.first + "\"";
    v += ",\"" + uv.second + "\"";
  }
  return h + "\n" + u + "\n" + v + "\n";
}

struct Result {
  Diagnosis d;
  std::vector<std::string> kinds;
};

Result diagnoseRow(const Row& row, std::optional<double> expected_bytes = std::nullopt,
                   std::optional<StaticFacts> facts = std::nullopt) {
  NcuTable t = parseNcuRawCsv(csvOf(row), "synthetic.csv");
  auto ks = kernelMetricsFromTable(t);
  DiagnosisInput in;
  in.kernel = ks[0].name;
  in.ncu = &ks[0];
  in.expected_bytes = expected_bytes;
  in.static_facts = facts;
  Result r{diagnose(in), {}};
  for (const auto& f : r.d.findings) r.kinds.push_back(toString(f.kind));
  return r;
}

Row with(Row row, const Row& changes) {
  for (const auto& [k, v] : changes) row[k] = v;
  return row;
}

std::string kindsOf(const Result& r) {
  std::string s;
  for (const auto& f : r.d.findings) s += std::string(toString(f.kind)) + "(" + std::to_string(f.severity) + ") ";
  return s;
}

TEST(DiagnoseNcu, HealthyStreamingKernelIsMemoryBoundWithNoFindings) {
  Result r = diagnoseRow(healthy());
  EXPECT_EQ(r.d.bottleneck, Bottleneck::kMemoryBound);
  EXPECT_EQ(r.d.basis, "ncu");
  EXPECT_TRUE(r.kinds.empty()) << kindsOf(r);
  EXPECT_DOUBLE_EQ(r.d.bottleneck_evidence["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"], 92.0);
  EXPECT_DOUBLE_EQ(r.d.metrics["duration_us"], 125.5);
  EXPECT_EQ(r.d.metrics["grid_blocks"], 32768.0);
}

TEST(DiagnoseNcu, StridedLoadsAreUncoalesced) {
  Result r = diagnoseRow(with(healthy(), {{"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
                                           {"byte/sector", "4"}}}));
  ASSERT_EQ(r.kinds, std::vector<std::string>{"uncoalesced-access"}) << kindsOf(r);
  const Finding& f = r.d.findings[0];
  EXPECT_DOUBLE_EQ(f.severity, 0.875);
  EXPECT_EQ(f.detail, "loads");
  EXPECT_DOUBLE_EQ(f.evidence["efficiency"], 0.125);
  EXPECT_EQ(f.suggestions, (std::vector<PassName>{PassName::kRetile, PassName::kMemoryHints}));
}

TEST(DiagnoseNcu, UncoalescedFromSectorsPerRequestWhenBytesPerSectorIsMissing) {
  Row row = healthy();
  row.erase("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio");
  row.erase("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio");
  Result ok = diagnoseRow(row);  // 16 sectors per request: 128-bit loads, fine
  EXPECT_EQ(ok.d.find(FindingKind::kUncoalescedAccess), nullptr) << kindsOf(ok);
  row["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = {"sector", "33,554,432"};  // 32 per request
  Result bad = diagnoseRow(row);
  const Finding* f = bad.d.find(FindingKind::kUncoalescedAccess);
  ASSERT_NE(f, nullptr) << kindsOf(bad);
  EXPECT_DOUBLE_EQ(f->severity, 0.875);
  // With the load width known (32-bit loads: 4 sectors per request is ideal), 12 is bad too.
  StaticFacts s;
  s.global_loads_by_bits[32] = 10;
  row["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = {"sector", "12,582,912"};
  Result third = diagnoseRow(row, std::nullopt, s);
  f = third.d.find(FindingKind::kUncoalescedAccess);
  ASSERT_NE(f, nullptr) << kindsOf(third);
  EXPECT_NEAR(f->severity, 1 - 4.0 / 12, 1e-3);
  EXPECT_EQ(f->evidence["static.dominant_load_bits"], 32);
}

TEST(DiagnoseNcu, LocalMemoryTrafficIsRegisterSpills) {
  Result r = diagnoseRow(with(healthy(), {{"smsp__sass_inst_executed_op_local_ld.sum", {"inst", "600,000"}},
                                          {"smsp__sass_inst_executed_op_local_st.sum", {"inst", "400,000"}},
                                          {"derived__local_spilling_requests", {"", "1,000,000"}},
                                          {"launch__registers_per_thread", {"register/thread", "255"}}}));
  ASSERT_EQ(r.kinds, std::vector<std::string>{"register-spills"}) << kindsOf(r);
  // local / (local + global) = 1e6 / 3.097e6 = 0.323; severity 0.1 + 0.9 * min(1, 3 * 0.323)
  EXPECT_NEAR(r.d.findings[0].severity, 0.1 + 0.9 * 3 * (1e6 / 3097152), 0.001);
  EXPECT_EQ(r.d.findings[0].evidence["launch__registers_per_thread"], 255.0);
}

TEST(DiagnoseNcu, FewProgramsIsSmallGridAndLatencyBound) {
  Result r = diagnoseRow(with(healthy(), {{"launch__grid_size", {"", "8"}},
                                          {"launch__waves_per_multiprocessor", {"", "0.06"}},
                                          {"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "4"}},
                                          {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "6"}},
                                          {"dram__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "6"}},
                                          {"smsp__issue_active.avg.pct_of_peak_sustained_active", {"%", "90"}}}));
  EXPECT_EQ(r.d.bottleneck, Bottleneck::kLatencyBound);
  ASSERT_EQ(r.kinds, std::vector<std::string>{"small-grid"}) << kindsOf(r);
  EXPECT_NEAR(r.d.findings[0].severity, 1 - 8.0 / 132, 1e-3);
  EXPECT_EQ(r.d.findings[0].evidence["sms"], 132.0);
}

TEST(DiagnoseNcu, OneAndABitWavesIsATailEffect) {
  Result r = diagnoseRow(with(healthy(), {{"launch__waves_per_multiprocessor", {"", "1.1"}}}));
  ASSERT_EQ(r.kinds, std::vector<std::string>{"tail-effect"}) << kindsOf(r);
  EXPECT_NEAR(r.d.findings[0].severity, 0.45, 1e-3);
  EXPECT_EQ(r.d.findings[0].suggestions.front(), PassName::kPersistent);
}

TEST(DiagnoseNcu, SharedMemoryLimitsOccupancy) {
  Result r = diagnoseRow(with(healthy(), {{"sm__maximum_warps_per_active_cycle_pct", {"%", "6.25"}},
                                          {"sm__warps_active.avg.pct_of_peak_sustained_active", {"%", "6.1"}},
                                          {"launch__occupancy_limit_registers", {"block", "3"}},
                                          {"launch__occupancy_limit_shared_mem", {"block", "1"}},
                                          {"launch__shared_mem_per_block_dynamic", {"Kbyte", "131.07"}},
                                          {"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "40"}},
                                          {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "30"}},
                                          {"smsp__issue_active.avg.pct_of_peak_sustained_active", {"%", "90"}}}));
  EXPECT_EQ(r.d.bottleneck, Bottleneck::kLatencyBound);
  ASSERT_EQ(r.kinds, std::vector<std::string>{"low-occupancy"}) << kindsOf(r);
  const Finding& f = r.d.findings[0];
  EXPECT_EQ(f.limiter, Limiter::kSharedMemory);
  EXPECT_EQ(f.toJson()["limiter"], "shared-memory");
  EXPECT_NEAR(f.severity, (1 - 0.0625 / 0.5) * (1 - 0.4), 1e-3);
  EXPECT_EQ(f.suggestions.front(), PassName::kLaunch);
}

TEST(DiagnoseNcu, RegistersAndBlockSizeAsLimiters) {
  Result regs = diagnoseRow(with(healthy(), {{"sm__maximum_warps_per_active_cycle_pct", {"%", "25"}},
                                             {"launch__occupancy_limit_registers", {"block", "4"}},
                                             {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "30"}},
                                             {"dram__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "30"}}}));
  ASSERT_NE(regs.d.find(FindingKind::kLowOccupancy), nullptr) << kindsOf(regs);
  EXPECT_EQ(regs.d.find(FindingKind::kLowOccupancy)->limiter, Limiter::kRegisters);
  Result block = diagnoseRow(with(healthy(), {{"sm__maximum_warps_per_active_cycle_pct", {"%", "25"}},
                                              {"launch__block_size", {"", "32"}},
                                              {"launch__occupancy_limit_blocks", {"block", "16"}},
                                              {"launch__occupancy_limit_warps", {"block", "64"}},
                                              {"launch__occupancy_limit_registers", {"block", "64"}},
                                              {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "30"}}}));
  ASSERT_NE(block.d.find(FindingKind::kLowOccupancy), nullptr) << kindsOf(block);
  EXPECT_EQ(block.d.find(FindingKind::kLowOccupancy)->limiter, Limiter::kBlockSize);
}

TEST(DiagnoseNcu, LowOccupancyOfASaturatedKernelIsNotAFinding) {
  Result r = diagnoseRow(with(healthy(), {{"sm__maximum_warps_per_active_cycle_pct", {"%", "12.5"}},
                                          {"launch__occupancy_limit_shared_mem", {"block", "1"}},
                                          {"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "93"}}}));
  EXPECT_EQ(r.d.find(FindingKind::kLowOccupancy), nullptr) << kindsOf(r);
}

TEST(DiagnoseNcu, BusyFmaPipeWithIdleTensorPipesIsNoTensorCores) {
  Result r = diagnoseRow(with(healthy(), {{"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", {"%", "85"}},
                                          {"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "88"}},
                                          {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "30"}},
                                          {"dram__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "5"}}}));
  EXPECT_EQ(r.d.bottleneck, Bottleneck::kComputeBound);
  ASSERT_EQ(r.kinds, std::vector<std::string>{"no-tensor-cores"}) << kindsOf(r);
  EXPECT_DOUBLE_EQ(r.d.findings[0].severity, 0.5);
  EXPECT_EQ(r.d.findings[0].suggestions, std::vector<PassName>{PassName::kTensorCores});
  // Static facts that show no dot at all silence it: nothing to put on tensor cores.
  StaticFacts none;
  none.dots = 0;
  none.sources = {"ttgir"};
  Result r2 = diagnoseRow(with(healthy(), {{"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", {"%", "85"}},
                                           {"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "88"}}}),
                          std::nullopt, none);
  EXPECT_EQ(r2.d.find(FindingKind::kNoTensorCores), nullptr);
}

TEST(DiagnoseNcu, ExcessSharedWavefrontsAreBankConflicts) {
  Result r = diagnoseRow(with(healthy(), {{"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", {"", "1,000,000"}},
                                          {"derived__memory_l1_wavefronts_shared_excessive", {"", "900,000"}}}));
  ASSERT_EQ(r.kinds, std::vector<std::string>{"shared-bank-conflicts"}) << kindsOf(r);
  EXPECT_DOUBLE_EQ(r.d.findings[0].severity, 0.9);
  // Without the excess metric, the conflict counter (discounted).
  Row row = with(healthy(), {{"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", {"", "1,000,000"}},
                             {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", {"", "500,000"}}});
  row.erase("derived__memory_l1_wavefronts_shared_excessive");
  Result r2 = diagnoseRow(row);
  ASSERT_NE(r2.d.find(FindingKind::kSharedBankConflicts), nullptr) << kindsOf(r2);
  EXPECT_DOUBLE_EQ(r2.d.find(FindingKind::kSharedBankConflicts)->severity, 0.4);
}

TEST(DiagnoseNcu, DramTrafficFourTimesTheDataIsPoorL2Reuse) {
  // 536.88 MB of DRAM traffic for a kernel that must move 134.22 MB.
  Result r = diagnoseRow(healthy(), 134.22e6);
  ASSERT_EQ(r.kinds, std::vector<std::string>{"poor-l2-reuse"}) << kindsOf(r);
  EXPECT_DOUBLE_EQ(r.d.findings[0].severity, 1.0);
  EXPECT_NEAR(r.d.findings[0].evidence["dram_over_expected"].get<double>(), 4.0, 0.01);
  // Traffic equal to the data: no finding.
  Result ok = diagnoseRow(healthy(), 536.88e6);
  EXPECT_TRUE(ok.kinds.empty()) << kindsOf(ok);
}

TEST(DiagnoseNcu, MatrixKernelMissingL2WithoutExpectedBytes) {
  Result r = diagnoseRow(with(healthy(), {{"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", {"%", "30"}},
                                          {"lts__t_sector_hit_rate.pct", {"%", "20"}}}));
  ASSERT_NE(r.d.find(FindingKind::kPoorL2Reuse), nullptr) << kindsOf(r);
  EXPECT_DOUBLE_EQ(r.d.find(FindingKind::kPoorL2Reuse)->severity, 0.4);
}

TEST(DiagnoseNcu, DependentLoadsAreLongScoreboardStalls) {
  Result r = diagnoseRow(with(healthy(), {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "3"}},
                                          {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "5"}},
                                          {"dram__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "5"}},
                                          {"smsp__issue_active.avg.pct_of_peak_sustained_active", {"%", "2"}},
                                          {"smsp__average_warp_latency_per_inst_issued.ratio", {"cycle", "320"}},
                                          {"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", {"", "300"}}}));
  EXPECT_EQ(r.d.bottleneck, Bottleneck::kLatencyBound);
  ASSERT_EQ(r.kinds, std::vector<std::string>{"long-stalls"}) << kindsOf(r);
  const Finding& f = r.d.findings[0];
  EXPECT_EQ(f.detail, "long_scoreboard");
  EXPECT_EQ(f.toJson()["reason"], "long_scoreboard");
  EXPECT_NEAR(f.severity, 300.0 / 320 * 0.98 * 0.95, 1e-3);
  EXPECT_EQ(f.suggestions.front(), PassName::kMemoryHints);
}

TEST(DiagnoseNcu, PcSamplingStallsWhenWarpStateIsMissing) {
  Row row = with(healthy(), {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "10"}},
                             {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "10"}},
                             {"smsp__pcsamp_warps_issue_stalled_barrier", {"", "8,000"}},
                             {"smsp__pcsamp_warps_issue_stalled_barrier_not_issued", {"", "7,000"}},
                             {"smsp__pcsamp_warps_issue_stalled_long_scoreboard", {"", "1,000"}},
                             {"smsp__pcsamp_warps_issue_stalled_selected", {"", "1,000"}}});
  for (auto it = row.begin(); it != row.end();) {
    it = it->first.rfind("smsp__average_warp", 0) == 0 ? row.erase(it) : std::next(it);
  }
  Result r = diagnoseRow(row);
  const Finding* f = r.d.find(FindingKind::kLongStalls);
  ASSERT_NE(f, nullptr) << kindsOf(r);
  EXPECT_EQ(f->detail, "barrier");
  EXPECT_EQ(f->evidence["source"], "pc-sampling");
  EXPECT_NEAR(f->evidence["share"].get<double>(), 8.0 / 9, 1e-3);
}

TEST(DiagnoseNcu, BothUnitsBusyIsBalanced) {
  Result r = diagnoseRow(with(healthy(), {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "80"}},
                                          {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "78"}}}));
  EXPECT_EQ(r.d.bottleneck, Bottleneck::kBalanced);
}

TEST(DiagnoseNcu, FewSectionsGiveNotesNotErrors) {
  Row row = {{"gpu__time_duration.sum", {"usecond", "10"}},
             {"sm__throughput.avg.pct_of_peak_sustained_elapsed", {"%", "20"}},
             {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", {"%", "70"}}};
  Result r = diagnoseRow(row);
  EXPECT_EQ(r.d.bottleneck, Bottleneck::kMemoryBound);
  EXPECT_TRUE(r.kinds.empty());
  std::string notes = nlohmann::json(r.d.notes).dump();
  EXPECT_NE(notes.find("WarpStateStats"), std::string::npos) << notes;
  EXPECT_NE(notes.find("Occupancy"), std::string::npos) << notes;
}

TEST(DiagnoseNcu, JsonShape) {
  Result r = diagnoseRow(with(healthy(), {{"launch__waves_per_multiprocessor", {"", "1.1"}}}));
  nlohmann::json j = r.d.toJson();
  EXPECT_EQ(j["name"], "k");
  EXPECT_EQ(j["bottleneck"], "memory-bound");
  ASSERT_EQ(j["findings"].size(), 1u);
  const auto& f = j["findings"][0];
  for (const char* key : {"kind", "severity", "evidence", "suggestions", "summary"}) EXPECT_TRUE(f.contains(key)) << key;
  EXPECT_EQ(f["evidence"]["launch__waves_per_multiprocessor"], 1.1);
}

// ---------------------------------------------------------------------------------------
// Without Nsight Compute

TEST(DiagnoseStatic, LaunchFactsGiveSmallGridTailAndOccupancy) {
  DiagnosisInput in;
  in.kernel = "k";
  in.gpu = GpuLimits::forComputeCapability(9, 0, 132);
  in.launch = LaunchFacts::fromKernelJson(
      {{"grid", {8, 1, 1}}, {"num_warps", 4}, {"registers", 32}, {"shared_bytes", 0}, {"spills", 0}});
  Diagnosis d = diagnose(in);
  EXPECT_EQ(d.bottleneck, Bottleneck::kUnknown);
  ASSERT_NE(d.find(FindingKind::kSmallGrid), nullptr);
  EXPECT_NEAR(d.find(FindingKind::kSmallGrid)->severity, 1 - 8.0 / 132, 1e-3);
  EXPECT_EQ(d.find(FindingKind::kSmallGrid)->evidence["launch.grid_blocks"], 8.0);

  // 4 warps, 32 registers: 16 blocks per SM (warps limit); 2323 blocks = 1.1 waves.
  in.launch.grid_blocks = 2323;
  d = diagnose(in);
  ASSERT_NE(d.find(FindingKind::kTailEffect), nullptr);
  EXPECT_EQ(d.find(FindingKind::kTailEffect)->evidence["static.blocks_per_sm"], 16);
  EXPECT_NEAR(d.find(FindingKind::kTailEffect)->severity, (1 - (2323.0 / 2112 - 1)) / 2, 1e-3);

  // 4 warps with 128 KiB of shared memory: one block per SM, 6.25% occupancy.
  in.launch.shared_bytes = 131072;
  in.launch.grid_blocks = 132 * 40;
  d = diagnose(in);
  const Finding* occ = d.find(FindingKind::kLowOccupancy);
  ASSERT_NE(occ, nullptr);
  EXPECT_EQ(occ->limiter, Limiter::kSharedMemory);
  EXPECT_NEAR(occ->severity, (1 - 0.0625 / 0.5) * 0.5, 1e-3);  // busy unknown: 0.5
}

TEST(DiagnoseStatic, SpillsFromTheLaunchAndTheSass) {
  DiagnosisInput in;
  in.launch = LaunchFacts::fromKernelJson({{"grid", {4096}}, {"num_warps", 1}, {"registers", 255}, {"spills", 64}});
  Diagnosis d = diagnose(in);
  ASSERT_NE(d.find(FindingKind::kRegisterSpills), nullptr);
  EXPECT_NEAR(d.find(FindingKind::kRegisterSpills)->severity, 1.0, 1e-3);
  in.launch.spills = 2;  // two words of local memory: a small finding
  EXPECT_NEAR(diagnose(in).find(FindingKind::kRegisterSpills)->severity, 0.1 + 0.9 * 2 / 64, 1e-3);
  EXPECT_EQ(d.find(FindingKind::kRegisterSpills)->evidence["launch.spill_words_per_thread"], 64);
}

TEST(DiagnoseStatic, DotOnFmaIsNoTensorCoresWithoutCounters) {
  CompiledTexts t;
  t.ttgir = test::readFile(test::sourceDir() / "tests/data/asm/dot_f32_ieee.ttgir");
  t.ptx = test::readFile(test::sourceDir() / "tests/data/asm/dot_f32_ieee.ptx");
  DiagnosisInput in;
  in.static_facts = staticFactsFromTexts(t);
  Diagnosis d = diagnose(in);
  const Finding* f = d.find(FindingKind::kNoTensorCores);
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->severity, 0.8);
  EXPECT_EQ(f->evidence["static.dots_on_fma"], 1);
  EXPECT_EQ(f->evidence["static.mma_instructions"], 0);
}

TEST(DiagnoseStatic, RooflineGivesTheBottleneck) {
  Ceilings c;
  c.dram_bytes_per_s = 4e12;
  c.flops_per_s = {{"fp32", 50e12}, {"fp16", 600e12}};
  DiagnosisInput in;
  // 400 MB in 110 us at 4 TB/s (100 us on the roof): memory-bound at 91%.
  in.roofline = rooflinePoint(1e8, 4e8, 110e-6, c, "fp32");
  Diagnosis d = diagnose(in);
  EXPECT_EQ(d.bottleneck, Bottleneck::kMemoryBound);
  EXPECT_EQ(d.basis, "roofline");
  EXPECT_NEAR(d.bottleneck_evidence["roofline.memory_fraction"].get<double>(), 0.909, 1e-3);
  // The same work in 1 ms: far from both roofs.
  in.roofline = rooflinePoint(1e8, 4e8, 1e-3, c, "fp32");
  EXPECT_EQ(diagnose(in).bottleneck, Bottleneck::kLatencyBound);
  // A matmul near the fp16 tensor roof.
  in.roofline = rooflinePoint(2 * 4096.0 * 4096 * 4096, 3 * 2 * 4096.0 * 4096, 0.26e-3, c, "fp16");
  EXPECT_EQ(diagnose(in).bottleneck, Bottleneck::kComputeBound);
}

}  // namespace
}  // namespace tf
