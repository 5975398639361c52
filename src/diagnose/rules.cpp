// The diagnosis rules (diagnose.h). Map:
//   collect()            metrics of interest from ncu, under the names rules read
//   classify()           the bottleneck: ncu's SM / memory throughput, else the roofline
//   rule*()              one function per finding kind; each returns nothing or a Finding
//   diagnose()           runs them all, drops findings under kMinSeverity, sorts by severity
// Every number a rule uses goes into its evidence, under the ncu metric's own name or, for
// facts not from ncu, under "launch.*", "static.*" and "roofline.*" names.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "diagnose/diagnose.h"

namespace tf {
namespace {

double clamp01(double x) { return std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0.0; }
double round3(double x) { return std::round(x * 1000.0) / 1000.0; }

// Counts as integers in JSON (3 rather than 3.0).
nlohmann::json count(double v) {
  if (std::floor(v) == v && std::abs(v) < 9e15) return static_cast<int64_t>(v);
  return v;
}

using Opt = std::optional<double>;

// Metric names, as Nsight Compute 2023-2025 prints them in the raw page.
namespace m {
constexpr const char* kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kMem = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kDramAlt = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kL1 = "l1tex__throughput.avg.pct_of_peak_sustained_active";
constexpr const char* kL2 = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kDuration = "gpu__time_duration.sum";
constexpr const char* kGrid = "launch__grid_size";
constexpr const char* kBlock = "launch__block_size";
constexpr const char* kRegs = "launch__registers_per_thread";
constexpr const char* kSmemDyn = "launch__shared_mem_per_block_dynamic";
constexpr const char* kSmemStatic = "launch__shared_mem_per_block_static";
constexpr const char* kWaves = "launch__waves_per_multiprocessor";
constexpr const char* kSms = "device__attribute_multiprocessor_count";
constexpr const char* kSmsAlt = "launch__sm_count";
constexpr const char* kTheoOcc = "sm__maximum_warps_per_active_cycle_pct";
constexpr const char* kAchOcc = "sm__warps_active.avg.pct_of_peak_sustained_active";
constexpr const char* kLimRegs = "launch__occupancy_limit_registers";
constexpr const char* kLimSmem = "launch__occupancy_limit_shared_mem";
constexpr const char* kLimWarps = "launch__occupancy_limit_warps";
constexpr const char* kLimBlocks = "launch__occupancy_limit_blocks";
constexpr const char* kSpillReq = "derived__local_spilling_requests";
constexpr const char* kLocalLd = "smsp__sass_inst_executed_op_local_ld.sum";
constexpr const char* kLocalSt = "smsp__sass_inst_executed_op_local_st.sum";
constexpr const char* kGlobalLd = "smsp__sass_inst_executed_op_global_ld.sum";
constexpr const char* kGlobalSt = "smsp__sass_inst_executed_op_global_st.sum";
constexpr const char* kBpsLd = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio";
constexpr const char* kBpsSt = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio";
constexpr const char* kSectorsLd = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kRequestsLd = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kSectorsSt = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
constexpr const char* kRequestsSt = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
constexpr const char* kFma = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active";
constexpr const char* kFmaInst = "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active";
constexpr const char* kShWf = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum";
constexpr const char* kShWfLd = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
constexpr const char* kShWfSt = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
constexpr const char* kShExcess = "derived__memory_l1_wavefronts_shared_excessive";
constexpr const char* kBank = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum";
constexpr const char* kBankLd = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
constexpr const char* kBankSt = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
constexpr const char* kL2Hit = "lts__t_sector_hit_rate.pct";
constexpr const char* kDramRead = "dram__bytes_read.sum";
constexpr const char* kDramWrite = "dram__bytes_write.sum";
constexpr const char* kDramBytes = "dram__bytes.sum";
constexpr const char* kIssueActive = "smsp__issue_active.avg.pct_of_peak_sustained_active";
constexpr const char* kWarpLatency = "smsp__average_warp_latency_per_inst_issued.ratio";
constexpr const char* kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr const char* kStallSuffix = "_per_issue_active.ratio";
constexpr const char* kPcStallPrefix = "smsp__pcsamp_warps_issue_stalled_";
}  // namespace m

// Adds `value` to `ev` under `key` when present; returns it.
Opt note(nlohmann::json& ev, const std::string& key, Opt value) {
  if (value) ev[key] = round3(*value);
  return value;
}

Opt sumOpt(Opt a, Opt b) {
  if (!a && !b) return std::nullopt;
  return a.value_or(0) + b.value_or(0);
}

struct Context {
  Context(const DiagnosisInput& input, const KernelMetrics* metrics) : in(input), k(metrics) {}
  const DiagnosisInput& in;
  const KernelMetrics* k;            // ncu, may be null
  GpuLimits gpu;
  Opt sm_pct, mem_pct;               // ncu throughput
  double busy = -1;                  // 0..1: how close the busiest unit is to its peak; -1 unknown
  Opt grid;                          // blocks
  std::optional<OccupancyEstimate> static_occ;
  Opt get(const char* name) const { return k ? k->get(name) : std::nullopt; }
};

// ---------------------------------------------------------------------------------------
// Bottleneck

void classify(Context& c, Diagnosis& d) {
  auto& ev = d.bottleneck_evidence;
  if (c.sm_pct && c.mem_pct) {
    d.basis = "ncu";
    double sm = *c.sm_pct, mem = *c.mem_pct;
    note(ev, m::kSm, sm);
    note(ev, m::kMem, mem);
    note(ev, m::kDram, c.k->first({m::kDram, m::kDramAlt}));
    note(ev, m::kL1, c.get(m::kL1));
    note(ev, m::kL2, c.get(m::kL2));
    double hi = std::max(sm, mem);
    if (hi < 60) d.bottleneck = Bottleneck::kLatencyBound;
    else if (sm >= 60 && mem >= 60 && std::abs(sm - mem) <= 15) d.bottleneck = Bottleneck::kBalanced;
    else if (mem > sm) d.bottleneck = Bottleneck::kMemoryBound;
    else d.bottleneck = Bottleneck::kComputeBound;
    if (c.in.roofline) ev["roofline.fraction"] = round3(c.in.roofline->fraction);
    return;
  }
  if (c.in.roofline) {
    d.basis = "roofline";
    const auto& r = *c.in.roofline;
    double memf = r.seconds > 0 ? r.memory_seconds / r.seconds : 0;
    double compf = r.seconds > 0 ? r.compute_seconds / r.seconds : 0;
    ev["roofline.memory_fraction"] = round3(memf);
    ev["roofline.compute_fraction"] = round3(compf);
    ev["roofline.fraction"] = round3(r.fraction);
    double hi = std::max(memf, compf);
    if (hi < 0.6) d.bottleneck = Bottleneck::kLatencyBound;
    else if (memf >= 0.6 && compf >= 0.6 && std::abs(memf - compf) <= 0.15) d.bottleneck = Bottleneck::kBalanced;
    else if (memf > compf) d.bottleneck = Bottleneck::kMemoryBound;
    else d.bottleneck = Bottleneck::kComputeBound;
    return;
  }
  d.basis = "none";
  d.bottleneck = Bottleneck::kUnknown;
  d.notes.push_back("bottleneck: no Nsight Compute throughput and no roofline (the harness has no flops()/bytes())");
}

// ---------------------------------------------------------------------------------------
// Findings

std::optional<Finding> ruleSpills(Context& c) {
  Finding f;
  f.kind = FindingKind::kRegisterSpills;
  f.suggestions = {PassName::kRetile, PassName::kLaunch};
  auto& ev = f.evidence;
  Opt ld = note(ev, m::kLocalLd, c.get(m::kLocalLd));
  Opt st = note(ev, m::kLocalSt, c.get(m::kLocalSt));
  Opt req = note(ev, m::kSpillReq, c.get(m::kSpillReq));
  note(ev, m::kRegs, c.get(m::kRegs));
  Opt local = sumOpt(ld, st);
  double sev = -1;
  if ((local && *local > 0) || (req && *req > 0)) {
    Opt global = sumOpt(note(ev, m::kGlobalLd, c.get(m::kGlobalLd)), note(ev, m::kGlobalSt, c.get(m::kGlobalSt)));
    double n_local = local.value_or(0) > 0 ? *local : req.value_or(0);
    // Severity grows with local memory's share of the memory instructions: a spill or two
    // costs little, a third of the traffic going to local memory costs as much as it can.
    double share = n_local / (n_local + global.value_or(0));
    sev = 0.1 + 0.9 * clamp01(3 * share);
  }
  const LaunchFacts& l = c.in.launch;
  if (l.spills && *l.spills > 0) {
    ev["launch.spill_words_per_thread"] = *l.spills;
    sev = std::max(sev, 0.1 + 0.9 * clamp01(*l.spills / 64.0));
  }
  if (c.in.static_facts && c.in.static_facts->local_stores > 0) {
    const auto& s = *c.in.static_facts;
    ev["static.sass_local_loads"] = s.local_loads;
    ev["static.sass_local_stores"] = s.local_stores;
    sev = std::max(sev, 0.1 + 0.9 * clamp01((s.local_loads + s.local_stores) / 128.0));
  }
  if (sev < 0) return std::nullopt;
  if (l.registers) ev["launch.registers"] = *l.registers;
  f.severity = sev;
  f.summary = "registers spill to local memory: each spill is a round trip through L1/L2";
  return f;
}

std::optional<Finding> ruleUncoalesced(Context& c) {
  if (!c.k) return std::nullopt;
  Finding f;
  f.kind = FindingKind::kUncoalescedAccess;
  f.suggestions = {PassName::kRetile, PassName::kMemoryHints};
  auto& ev = f.evidence;
  double worst = 1;  // efficiency: bytes used per byte fetched
  std::string which;
  // A class of access (loads or stores) counts by its share of the global sectors: a
  // program that stores one scalar has a 4-bytes-per-sector store, and it does not matter.
  Opt sectors_ld = c.get(m::kSectorsLd), sectors_st = c.get(m::kSectorsSt);
  double total_sectors = (sectors_ld ? *sectors_ld : 0) + (sectors_st ? *sectors_st : 0);
  for (int store = 0; store < 2; ++store) {
    Opt mine = store ? sectors_st : sectors_ld;
    if (mine && total_sectors > 0 && *mine / total_sectors < 0.05) continue;
    const char* bps_name = store ? m::kBpsSt : m::kBpsLd;
    const char* instr_name = store ? m::kGlobalSt : m::kGlobalLd;
    Opt instr = c.get(instr_name);
    if (instr && *instr <= 0) continue;
    Opt bps = c.get(bps_name);
    double eff = 1;
    if (bps && *bps > 0) {
      note(ev, bps_name, bps);
      eff = *bps / 32.0;
    } else {
      Opt sectors = c.get(store ? m::kSectorsSt : m::kSectorsLd);
      Opt requests = c.get(store ? m::kRequestsSt : m::kRequestsLd);
      if (!sectors || !requests || *requests <= 0) continue;
      note(ev, store ? m::kSectorsSt : m::kSectorsLd, sectors);
      note(ev, store ? m::kRequestsSt : m::kRequestsLd, requests);
      double spr = *sectors / *requests;
      ev[store ? "sectors_per_request_st" : "sectors_per_request_ld"] = round3(spr);
      // A warp's fully coalesced access of W-bit elements touches W/8 sectors of 32 bytes per
      // request (4 for 32-bit, 16 for 128-bit). Without the load width, only more than 16
      // sectors per request is certain to be wasteful (and is then taken as 32-bit accesses).
      int bits = c.in.static_facts ? c.in.static_facts->dominantLoadBits() : 0;
      double ideal = 16.0;
      if (bits > 0) {
        ideal = bits / 8.0;
        ev["static.dominant_load_bits"] = bits;
      }
      if (spr > 1.5 * ideal) eff = (bits > 0 ? ideal : 4.0) / spr;
    }
    if (eff < worst) {
      worst = eff;
      which = store ? "stores" : "loads";
    }
  }
  if (worst >= 0.5) return std::nullopt;
  // A compute-bound kernel loses less to wasted memory traffic.
  double weight = c.sm_pct && c.mem_pct && *c.sm_pct > *c.mem_pct + 15 ? 0.5 : 1.0;
  f.severity = (1 - worst) * weight;
  f.detail = which;
  ev["efficiency"] = round3(worst);
  f.summary = fmt::format("global {} use {:.0f}% of each 32-byte sector they fetch: the innermost tl.arange does not "
                          "run along the contiguous dimension", which, 100 * worst);
  return f;
}

std::optional<Finding> ruleSmallGrid(Context& c) {
  if (!c.grid) return std::nullopt;
  double sms = c.gpu.sms;
  if (*c.grid >= sms) return std::nullopt;
  Finding f;
  f.kind = FindingKind::kSmallGrid;
  f.suggestions = {PassName::kRetile, PassName::kSplitK};
  f.evidence[c.k && c.k->get(m::kGrid) ? m::kGrid : "launch.grid_blocks"] = count(*c.grid);
  f.evidence["sms"] = count(sms);
  f.severity = 1 - *c.grid / sms;
  f.summary = fmt::format("{:.0f} programs for {:.0f} SMs: {:.0f}% of the GPU has nothing to do", *c.grid, sms,
                          100 * f.severity);
  return f;
}

std::optional<Finding> ruleTail(Context& c) {
  Opt waves = c.get(m::kWaves);
  Finding f;
  f.kind = FindingKind::kTailEffect;
  f.suggestions = {PassName::kPersistent, PassName::kRetile, PassName::kLaunch};
  if (waves) {
    f.evidence[m::kWaves] = round3(*waves);
  } else if (c.grid && c.static_occ) {
    waves = wavesOf(static_cast<int64_t>(*c.grid), *c.static_occ, c.gpu);
    f.evidence["launch.grid_blocks"] = count(*c.grid);
    f.evidence["static.blocks_per_sm"] = c.static_occ->blocks_per_sm;
    f.evidence["static.waves"] = round3(*waves);
  }
  if (!waves || *waves < 1) return std::nullopt;
  double full = std::floor(*waves);
  double frac = *waves - full;
  if (frac < 0.01) return std::nullopt;
  double total = full + 1;
  f.severity = (1 - frac) / total;  // the idle share of the SMs' time, if every wave takes as long
  f.summary = fmt::format("{:.2f} waves: the last one fills {:.0f}% of the GPU", *waves, 100 * frac);
  return f;
}

std::optional<Finding> ruleOccupancy(Context& c, const Diagnosis& so_far) {
  Finding f;
  f.kind = FindingKind::kLowOccupancy;
  auto& ev = f.evidence;
  Opt theo;
  Limiter limiter = Limiter::kUnknown;
  if (Opt t = c.get(m::kTheoOcc)) {
    theo = *t / 100;
    note(ev, m::kTheoOcc, t);
    note(ev, m::kAchOcc, c.get(m::kAchOcc));
    std::vector<std::pair<std::string, Opt>> limits = {{"registers", c.get(m::kLimRegs)},
                                                       {"shared_mem", c.get(m::kLimSmem)},
                                                       {"warps", c.get(m::kLimWarps)},
                                                       {"blocks", c.get(m::kLimBlocks)}};
    double best = 1e18;
    for (const auto& [name, v] : limits) {
      if (!v) continue;
      ev[std::string("launch__occupancy_limit_") + name] = *v;
      if (*v < best) {
        best = *v;
        limiter = limiterFromString(name).value_or(Limiter::kUnknown);
      }
    }
    note(ev, m::kRegs, c.get(m::kRegs));
    note(ev, m::kSmemDyn, c.get(m::kSmemDyn));
    note(ev, m::kBlock, c.get(m::kBlock));
  } else if (c.static_occ) {
    theo = c.static_occ->occupancy;
    limiter = c.static_occ->limiter;
    ev["static.occupancy"] = round3(*theo);
    ev["static.blocks_per_sm"] = c.static_occ->blocks_per_sm;
    ev["static.block_limits"] = c.static_occ->toJson()["block_limits"];
    const LaunchFacts& l = c.in.launch;
    if (l.registers) ev["launch.registers"] = *l.registers;
    if (l.shared_bytes) ev["launch.shared_bytes"] = *l.shared_bytes;
    if (l.warps) ev["launch.warps"] = *l.warps;
  }
  if (!theo || *theo >= 0.5) return std::nullopt;
  if (const Finding* g = so_far.find(FindingKind::kSmallGrid); g && g->severity > 0.5) return std::nullopt;
  double busy = c.busy >= 0 ? c.busy : 0.5;
  f.severity = (1 - *theo / 0.5) * (1 - busy);
  f.limiter = limiter;
  ev["limiter"] = toString(limiter);
  if (limiter == Limiter::kRegisters) f.suggestions = {PassName::kRetile, PassName::kLaunch};
  else if (limiter == Limiter::kSharedMemory) f.suggestions = {PassName::kLaunch, PassName::kRetile};
  else f.suggestions = {PassName::kLaunch, PassName::kRowsPerProgram};
  f.summary = fmt::format("theoretical occupancy {:.0f}%, limited by {}", 100 * *theo, toString(limiter));
  return f;
}

std::optional<Finding> ruleTensorCores(Context& c) {
  Finding f;
  f.kind = FindingKind::kNoTensorCores;
  f.suggestions = {PassName::kTensorCores};
  auto& ev = f.evidence;
  const auto* s = c.in.static_facts ? &*c.in.static_facts : nullptr;
  if (s && s->dotOnFma()) {
    ev["static.dots"] = s->dots;
    ev["static.dots_on_fma"] = s->dots_on_fma;
    if (s->mma_instructions >= 0) ev["static.mma_instructions"] = s->mma_instructions;
    if (!s->dot_operand_types.empty()) ev["static.dot_operand_types"] = s->dot_operand_types;
    if (!s->dot_input_precisions.empty()) ev["static.dot_input_precisions"] = s->dot_input_precisions;
    f.severity = 0.8;
    if (c.sm_pct && c.mem_pct && *c.sm_pct > *c.mem_pct) f.severity = 0.9;
    note(ev, m::kFma, c.get(m::kFma));
    f.summary = "tl.dot compiled to FMA instructions, not tensor cores (fp32 operands with input_precision=\"ieee\"?)";
    return f;
  }
  if (!c.k) return std::nullopt;
  if (s && s->dots == 0) return std::nullopt;  // no dot at all: tensor cores do not apply
  auto tensor = c.k->matching("sm__pipe_tensor", ".avg.pct_of_peak_sustained_active");
  auto tensor_inst = c.k->matching("sm__inst_executed_pipe_tensor", ".avg.pct_of_peak_sustained_active");
  tensor.insert(tensor.end(), tensor_inst.begin(), tensor_inst.end());
  Opt fma = c.k->first({m::kFma, m::kFmaInst});
  if (tensor.empty() || !fma || !c.sm_pct) return std::nullopt;
  double tmax = 0;
  for (const auto& [name, v] : tensor) tmax = std::max(tmax, v);
  if (tmax > 1 || *fma < 50 || *c.sm_pct < 50) return std::nullopt;
  ev["tensor_pipes_max_pct"] = round3(tmax);
  ev[c.k->get(m::kFma) ? m::kFma : m::kFmaInst] = round3(*fma);
  note(ev, m::kSm, c.sm_pct);
  f.severity = 0.5;
  f.summary = fmt::format("the FMA pipe is {:.0f}% busy and the tensor pipes idle: if this kernel multiplies "
                          "matrices, its dots do not use tensor cores", *fma);
  return f;
}

std::optional<Finding> ruleBankConflicts(Context& c) {
  if (!c.k) return std::nullopt;
  Finding f;
  f.kind = FindingKind::kSharedBankConflicts;
  f.suggestions = {PassName::kRetile, PassName::kLaunch};
  auto& ev = f.evidence;
  Opt wf = c.get(m::kShWf);
  if (wf) note(ev, m::kShWf, wf);
  else wf = sumOpt(note(ev, m::kShWfLd, c.get(m::kShWfLd)), note(ev, m::kShWfSt, c.get(m::kShWfSt)));
  if (!wf || *wf <= 0) return std::nullopt;
  double ratio = -1;
  if (Opt ex = note(ev, m::kShExcess, c.get(m::kShExcess))) {
    ratio = *ex / *wf;
  } else {
    Opt bank = c.get(m::kBank);
    if (bank) note(ev, m::kBank, bank);
    else bank = sumOpt(note(ev, m::kBankLd, c.get(m::kBankLd)), note(ev, m::kBankSt, c.get(m::kBankSt)));
    // The conflict counter also counts other arbitration stalls: trusted only when large.
    if (bank) ratio = 0.8 * (*bank / *wf);
  }
  if (ratio < 0.2) return std::nullopt;
  f.severity = clamp01(ratio);
  ev["excess_share"] = round3(ratio);
  f.summary = fmt::format("{:.0f}% of shared-memory wavefronts are extra ones caused by bank conflicts", 100 * f.severity);
  return f;
}

std::optional<Finding> ruleL2Reuse(Context& c) {
  if (!c.k) return std::nullopt;
  Finding f;
  f.kind = FindingKind::kPoorL2Reuse;
  f.suggestions = {PassName::kGroupedOrder, PassName::kPersistent, PassName::kRetile};
  auto& ev = f.evidence;
  Opt hit = note(ev, m::kL2Hit, c.get(m::kL2Hit));
  Opt dram = c.get(m::kDramBytes);
  if (dram) note(ev, m::kDramBytes, dram);
  else dram = sumOpt(note(ev, m::kDramRead, c.get(m::kDramRead)), note(ev, m::kDramWrite, c.get(m::kDramWrite)));
  if (c.in.expected_bytes && *c.in.expected_bytes > 0 && dram) {
    double ratio = *dram / *c.in.expected_bytes;
    ev["expected_bytes"] = *c.in.expected_bytes;
    ev["dram_over_expected"] = round3(ratio);
    if (ratio < 1.5) return std::nullopt;
    f.severity = clamp01((ratio - 1) / 3);
    f.summary = fmt::format("DRAM traffic is {:.1f}x the bytes the kernel must move: data is read again after L2 "
                            "evicted it", ratio);
    return f;
  }
  // Without the expected bytes: a matrix kernel (tensor pipes busy) that misses L2 while DRAM is busy.
  Opt dram_pct = c.k->first({m::kDram, m::kDramAlt});
  double tmax = 0;
  for (const auto& [name, v] : c.k->matching("sm__pipe_tensor", ".avg.pct_of_peak_sustained_active")) {
    tmax = std::max(tmax, v);
  }
  if (!hit || !dram_pct || *hit >= 50 || *dram_pct < 50 || tmax < 5) return std::nullopt;
  note(ev, m::kDram, dram_pct);
  ev["tensor_pipes_max_pct"] = round3(tmax);
  f.severity = 0.4;
  f.summary = fmt::format("L2 hit rate {:.0f}% in a matrix kernel whose DRAM is {:.0f}% busy: tiles are fetched "
                          "again rather than reused", *hit, *dram_pct);
  return f;
}

struct StallInfo {
  const char* text;
  std::vector<PassName> suggestions;
};

StallInfo stallInfo(const std::string& reason) {
  static const std::map<std::string, StallInfo> kInfo = {
      {"long_scoreboard", {"waiting for global or local memory (L1TEX) results", {PassName::kMemoryHints, PassName::kLaunch, PassName::kRetile}}},
      {"short_scoreboard", {"waiting for shared memory or MUFU results", {PassName::kRetile, PassName::kLaunch}}},
      {"barrier", {"waiting at a block-wide barrier", {PassName::kLaunch, PassName::kRetile}}},
      {"membar", {"waiting on a memory barrier", {PassName::kLaunch}}},
      {"mio_throttle", {"the memory input/output queue is full (shared memory, special math)", {PassName::kRetile, PassName::kVectorize}}},
      {"lg_throttle", {"the local/global memory queue is full: many narrow loads", {PassName::kVectorize, PassName::kMemoryHints}}},
      {"tex_throttle", {"the texture/L1 queue is full", {PassName::kVectorize, PassName::kMemoryHints}}},
      {"math_pipe_throttle", {"a math pipe is saturated", {PassName::kTensorCores, PassName::kRetile}}},
      {"wait", {"fixed-latency dependencies", {PassName::kMemoryHints, PassName::kLaunch}}},
      {"branch_resolving", {"resolving branch targets", {PassName::kMemoryHints}}},
      {"no_instruction", {"instruction cache misses", {PassName::kRetile}}},
      {"dispatch_stall", {"the dispatcher stalled", {}}},
      {"drain", {"draining memory stores at exit", {PassName::kLaunch}}},
      {"imc_miss", {"constant cache misses", {}}},
      {"sleeping", {"warps sleeping", {}}},
      {"misc", {"miscellaneous hardware reasons", {}}},
  };
  auto it = kInfo.find(reason);
  if (it != kInfo.end()) return it->second;
  return {"", {PassName::kLaunch}};
}

std::optional<Finding> ruleStalls(Context& c) {
  if (!c.k) return std::nullopt;
  Finding f;
  f.kind = FindingKind::kLongStalls;
  auto& ev = f.evidence;
  std::vector<std::pair<std::string, double>> reasons;
  for (auto& [name, v] : c.k->matching(m::kStallPrefix, m::kStallSuffix)) {
    if (name == "selected" || name == "not_selected") continue;  // issuing, or ready: not stalls
    reasons.emplace_back(name, v);
  }
  std::string source = "warp-state";
  if (reasons.empty()) {
    source = "pc-sampling";
    for (auto& [name, v] : c.k->matching(m::kPcStallPrefix, "")) {
      if (name.find("not_issued") != std::string::npos || name == "selected" || name == "not_selected") continue;
      reasons.emplace_back(name, v);
    }
  }
  if (reasons.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& r : reasons) sum += r.second;
  if (sum <= 0) return std::nullopt;
  auto top = std::max_element(reasons.begin(), reasons.end(),
                              [](const auto& a, const auto& b) { return a.second < b.second; });
  double total = sum;
  if (source == "warp-state") {
    if (Opt lat = note(ev, m::kWarpLatency, c.get(m::kWarpLatency)); lat && *lat > 0) total = std::max(*lat, sum);
    ev[std::string(m::kStallPrefix) + top->first + m::kStallSuffix] = round3(top->second);
  } else {
    ev[std::string(m::kPcStallPrefix) + top->first] = round3(top->second);
  }
  double share = top->second / total;
  Opt issue = note(ev, m::kIssueActive, c.get(m::kIssueActive));
  double idle = issue ? 1 - clamp01(*issue / 100) : 1;
  double busy = c.busy >= 0 ? c.busy : 0;
  ev["share"] = round3(share);
  ev["source"] = source;
  if (share < 0.3) return std::nullopt;
  f.severity = share * idle * (1 - busy);
  f.detail = top->first;
  StallInfo info = stallInfo(top->first);
  f.suggestions = info.suggestions;
  ev["reason"] = top->first;
  f.summary = fmt::format("warps spend {:.0f}% of their stall time on '{}'{}{}", 100 * share, top->first,
                          *info.text ? ": " : "", info.text);
  return f;
}

void summarizeMetrics(const Context& c, Diagnosis& d) {
  auto& j = d.metrics;
  if (c.k) {
    if (Opt t = c.get(m::kDuration)) j["duration_us"] = round3(*t * 1e6);
    if (Opt v = c.get(m::kGrid)) j["grid_blocks"] = count(*v);
    if (Opt v = c.get(m::kBlock)) j["block_threads"] = count(*v);
    if (Opt v = c.get(m::kRegs)) j["registers"] = count(*v);
    if (Opt v = c.get(m::kWaves)) j["waves"] = round3(*v);
    if (Opt v = c.get(m::kTheoOcc)) j["theoretical_occupancy_pct"] = round3(*v);
    if (Opt v = c.get(m::kAchOcc)) j["achieved_occupancy_pct"] = round3(*v);
    if (c.sm_pct) j["sm_throughput_pct"] = round3(*c.sm_pct);
    if (c.mem_pct) j["memory_throughput_pct"] = round3(*c.mem_pct);
    if (Opt v = c.k->first({m::kDram, m::kDramAlt})) j["dram_throughput_pct"] = round3(*v);
    if (Opt v = c.get(m::kL2Hit)) j["l2_hit_rate_pct"] = round3(*v);
  }
  const LaunchFacts& l = c.in.launch;
  if (!j.contains("grid_blocks") && l.grid_blocks) j["grid_blocks"] = *l.grid_blocks;
  if (!j.contains("registers") && l.registers) j["registers"] = *l.registers;
  if (l.warps) j["warps"] = *l.warps;
  if (l.shared_bytes) j["shared_bytes"] = *l.shared_bytes;
  if (c.static_occ && !j.contains("theoretical_occupancy_pct")) {
    j["theoretical_occupancy_pct"] = round3(100 * c.static_occ->occupancy);
  }
}

}  // namespace

LaunchFacts LaunchFacts::fromKernelJson(const nlohmann::json& k) {
  LaunchFacts l;
  if (!k.is_object()) return l;
  auto num = [&](const char* key) -> std::optional<double> {
    if (k.contains(key) && k[key].is_number()) return k[key].get<double>();
    return std::nullopt;
  };
  if (k.contains("grid") && k["grid"].is_array() && !k["grid"].empty()) {
    int64_t g = 1;
    bool ok = true;
    for (const auto& d : k["grid"]) {
      if (!d.is_number_integer()) ok = false;
      else g *= d.get<int64_t>();
    }
    if (ok) l.grid_blocks = g;
  }
  if (auto v = num("num_warps")) l.warps = static_cast<int>(*v);
  if (auto v = num("registers")) l.registers = static_cast<int>(*v);
  if (auto v = num("shared_bytes")) l.shared_bytes = static_cast<int64_t>(*v);
  if (auto v = num("spills")) l.spills = static_cast<int>(*v);
  return l;
}

Diagnosis diagnose(const DiagnosisInput& in) {
  Context c(in, in.ncu);
  Diagnosis d;
  d.kernel = in.kernel;
  if (in.gpu) {
    c.gpu = *in.gpu;
  }
  if (c.k) {
    d.sources.push_back("ncu");
    if (Opt sms = c.k->first({m::kSms, m::kSmsAlt}); sms && *sms > 0 && !in.gpu) c.gpu.sms = static_cast<int>(*sms);
    c.sm_pct = c.get(m::kSm);
    c.mem_pct = c.get(m::kMem);
    if (c.sm_pct && c.mem_pct) c.busy = clamp01(std::max(*c.sm_pct, *c.mem_pct) / 100);
    c.grid = c.get(m::kGrid);
  }
  if (in.static_facts) d.sources.push_back("static");
  const LaunchFacts& l = in.launch;
  if (l.grid_blocks || l.warps || l.registers) d.sources.push_back("launch");
  if (in.roofline) {
    d.sources.push_back("roofline");
    if (c.busy < 0) c.busy = clamp01(in.roofline->fraction);
  }
  if (!c.grid && l.grid_blocks) c.grid = static_cast<double>(*l.grid_blocks);
  if (l.warps) {
    c.static_occ = estimateOccupancy(c.gpu, *l.warps, l.registers, l.shared_bytes.value_or(0));
  }

  classify(c, d);
  auto add = [&](std::optional<Finding> f) {
    if (f && f->severity >= kMinSeverity) {
      f->severity = round3(clamp01(f->severity));
      d.findings.push_back(std::move(*f));
    }
  };
  add(ruleSpills(c));
  add(ruleUncoalesced(c));
  add(ruleSmallGrid(c));
  add(ruleTail(c));
  add(ruleOccupancy(c, d));
  add(ruleTensorCores(c));
  add(ruleBankConflicts(c));
  add(ruleL2Reuse(c));
  add(ruleStalls(c));
  std::stable_sort(d.findings.begin(), d.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });

  if (!c.k) {
    d.notes.push_back("no Nsight Compute metrics: uncoalesced-access, shared-bank-conflicts, poor-l2-reuse and "
                      "long-stalls cannot be judged");
  } else {
    if (!c.sm_pct || !c.mem_pct) d.notes.push_back("no SpeedOfLight throughput metrics (section SpeedOfLight)");
    if (c.k->matching(m::kStallPrefix, m::kStallSuffix).empty() && c.k->matching(m::kPcStallPrefix, "").empty()) {
      d.notes.push_back("no stall metrics (section WarpStateStats)");
    }
    if (!c.k->has(m::kTheoOcc)) d.notes.push_back("no occupancy metrics (section Occupancy)");
  }
  if (!in.static_facts) d.notes.push_back("no compiled texts: whether tl.dot uses tensor cores is judged from counters only");
  summarizeMetrics(c, d);
  return d;
}

}  // namespace tf
