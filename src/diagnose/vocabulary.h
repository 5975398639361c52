// The one vocabulary that the diagnosis speaks and the reasoning engines read: what a finding
// is about, what limits occupancy, and which transformation passes exist. Rules, the rule
// engine, the external-engine protocol (docs/engine.md) and the reports all go through these
// enums, so that a spelling can no longer differ between the side that writes and the side
// that reads ("shared memory" against "shared-memory" once kept a rule from ever firing).
//
// Every enum has toString (the stable spelling in JSON and reports) and a parser that
// returns nullopt for a text that is not in the vocabulary.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tf {

// What a finding says holds a kernel back. The three bottleneck kinds are findings of the
// whole kernel; the others are findings of one of its resources.
enum class FindingKind {
  kRegisterSpills,
  kUncoalescedAccess,
  kSmallGrid,
  kTailEffect,
  kLowOccupancy,
  kNoTensorCores,
  kSharedBankConflicts,
  kPoorL2Reuse,
  kLongStalls,
  kNarrowRows,        // one short row per program: too little work for a program's warps
  kMemoryBound,
  kComputeBound,
  kLatencyBound,
};

// What stops another block from fitting on an SM.
enum class Limiter { kRegisters, kSharedMemory, kBlockSize, kNone, kUnknown };

// The transformation passes of src/transform/passes/ (transform --list): a test checks that
// every name here is a pass there.
enum class PassName {
  kRetile,
  kLaunch,
  kAutotune,
  kGroupedOrder,
  kRowsPerProgram,
  kColumnLoop,
  kSplitK,
  kPersistent,
  kTensorCores,
  kMemoryHints,
  kVectorize,
  kExp2,
  kOnlineSoftmax,
  kCausalSplit,
  kFlattenLoops,
  kRelayout,
  kEvictionHints,
  kTailSplit,
  kImplicitGemm,
  kSplitRows,
};

const char* toString(FindingKind kind);    // "register-spills", ... "memory-bound"
const char* toString(Limiter limiter);     // "registers", "shared-memory", "block-size", "none", "unknown"
const char* toString(PassName pass);       // "retile", "split-k", ...

std::optional<FindingKind> findingKindFromString(std::string_view text);
// Also reads the spellings older outputs and Nsight Compute use ("shared memory",
// "shared_mem", "block size", "warps", "blocks").
std::optional<Limiter> limiterFromString(std::string_view text);
std::optional<PassName> passNameFromString(std::string_view text);

// Every value, in declaration order (for tests and documentation).
const std::vector<FindingKind>& allFindingKinds();
const std::vector<PassName>& allPassNames();
const std::vector<Limiter>& allLimiters();

// True for the three bottleneck kinds.
bool isBottleneck(FindingKind kind);

}  // namespace tf
