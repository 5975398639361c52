#include "diagnose/vocabulary.h"

#include <utility>

namespace tf {
namespace {

template <typename E>
std::optional<E> parse(std::string_view text, const std::vector<E>& all) {
  for (E e : all) {
    if (text == toString(e)) return e;
  }
  return std::nullopt;
}

}  // namespace

const char* toString(FindingKind k) {
  switch (k) {
    case FindingKind::kRegisterSpills: return "register-spills";
    case FindingKind::kUncoalescedAccess: return "uncoalesced-access";
    case FindingKind::kSmallGrid: return "small-grid";
    case FindingKind::kTailEffect: return "tail-effect";
    case FindingKind::kLowOccupancy: return "low-occupancy";
    case FindingKind::kNoTensorCores: return "no-tensor-cores";
    case FindingKind::kSharedBankConflicts: return "shared-bank-conflicts";
    case FindingKind::kPoorL2Reuse: return "poor-l2-reuse";
    case FindingKind::kLongStalls: return "long-stalls";
    case FindingKind::kNarrowRows: return "narrow-rows";
    case FindingKind::kMemoryBound: return "memory-bound";
    case FindingKind::kComputeBound: return "compute-bound";
    case FindingKind::kLatencyBound: return "latency-bound";
  }
  return "?";
}

const char* toString(Limiter l) {
  switch (l) {
    case Limiter::kRegisters: return "registers";
    case Limiter::kSharedMemory: return "shared-memory";
    case Limiter::kBlockSize: return "block-size";
    case Limiter::kNone: return "none";
    case Limiter::kUnknown: return "unknown";
  }
  return "?";
}

const char* toString(PassName p) {
  switch (p) {
    case PassName::kRetile: return "retile";
    case PassName::kLaunch: return "launch";
    case PassName::kAutotune: return "autotune";
    case PassName::kGroupedOrder: return "grouped-order";
    case PassName::kRowsPerProgram: return "rows-per-program";
    case PassName::kColumnLoop: return "column-loop";
    case PassName::kSplitK: return "split-k";
    case PassName::kPersistent: return "persistent";
    case PassName::kTensorCores: return "tensor-cores";
    case PassName::kMemoryHints: return "memory-hints";
    case PassName::kVectorize: return "vectorize";
    case PassName::kExp2: return "exp2";
    case PassName::kOnlineSoftmax: return "online-softmax";
    case PassName::kCausalSplit: return "causal-split";
    case PassName::kFlattenLoops: return "flatten-loops";
    case PassName::kRelayout: return "relayout";
    case PassName::kEvictionHints: return "eviction-hints";
    case PassName::kTailSplit: return "tail-split";
    case PassName::kImplicitGemm: return "implicit-gemm";
    case PassName::kSplitRows: return "split-rows";
  }
  return "?";
}

const std::vector<FindingKind>& allFindingKinds() {
  static const std::vector<FindingKind> all = {
      FindingKind::kRegisterSpills, FindingKind::kUncoalescedAccess,   FindingKind::kSmallGrid,
      FindingKind::kTailEffect,     FindingKind::kLowOccupancy,        FindingKind::kNoTensorCores,
      FindingKind::kSharedBankConflicts, FindingKind::kPoorL2Reuse,    FindingKind::kLongStalls,    FindingKind::kNarrowRows,
      FindingKind::kMemoryBound,    FindingKind::kComputeBound,        FindingKind::kLatencyBound};
  return all;
}

const std::vector<PassName>& allPassNames() {
  static const std::vector<PassName> all = {
      PassName::kRetile,     PassName::kLaunch,     PassName::kAutotune,    PassName::kGroupedOrder,
      PassName::kRowsPerProgram, PassName::kColumnLoop, PassName::kSplitK, PassName::kPersistent,
      PassName::kTensorCores, PassName::kMemoryHints, PassName::kVectorize, PassName::kExp2,
      PassName::kOnlineSoftmax, PassName::kCausalSplit,
      PassName::kFlattenLoops, PassName::kRelayout, PassName::kEvictionHints, PassName::kTailSplit,
      PassName::kImplicitGemm, PassName::kSplitRows};
  return all;
}

const std::vector<Limiter>& allLimiters() {
  static const std::vector<Limiter> all = {Limiter::kRegisters, Limiter::kSharedMemory, Limiter::kBlockSize,
                                           Limiter::kNone, Limiter::kUnknown};
  return all;
}

std::optional<FindingKind> findingKindFromString(std::string_view text) { return parse(text, allFindingKinds()); }

std::optional<PassName> passNameFromString(std::string_view text) { return parse(text, allPassNames()); }

std::optional<Limiter> limiterFromString(std::string_view text) {
  if (auto l = parse(text, allLimiters())) return l;
  static const std::pair<std::string_view, Limiter> kOther[] = {
      {"shared memory", Limiter::kSharedMemory}, {"shared_mem", Limiter::kSharedMemory},
      {"smem", Limiter::kSharedMemory},          {"block size", Limiter::kBlockSize},
      {"warps", Limiter::kBlockSize},            {"blocks", Limiter::kBlockSize}};
  for (const auto& [spelling, l] : kOther) {
    if (text == spelling) return l;
  }
  return std::nullopt;
}

bool isBottleneck(FindingKind k) {
  return k == FindingKind::kMemoryBound || k == FindingKind::kComputeBound || k == FindingKind::kLatencyBound;
}

}  // namespace tf
