// The one vocabulary that the diagnosis speaks and the reasoning engines read: what a finding
// is about, what limits occupancy, and which transformation passes exist. Rules, the rule
// engine, the external-engine protocol (docs/engine.md) and the reports all go through these
// enums, so that a spelling can no longer differ between the side that writes and the side
// that reads ("shared memory" against "shared-memory" once kept a rule from ever firing).
//
// Every enum has toString (the stable spelling in JSON and reports) and a parser that
// returns nullopt for a text that is not in the vocabulary. The passes are one table
// (TF_PASS_TABLE); the loop carries a pass as a PassId.
#pragma once

#include <compare>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
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
  kLauncherGlue,      // the launcher's GPU time outside its Triton kernels (torch ops, copies), host syncs
};

// What stops another block from fitting on an SM.
enum class Limiter { kRegisters, kSharedMemory, kBlockSize, kNone, kUnknown };

// The transformation passes of src/transform/passes/, in catalogue order (`transform
// --list`): the one list of them. The PassName enum, toString, allPassNames, isParameterMove
// and the registry of passes (transform/pass.cpp: the pass X is made by makeXPass(), whose
// PassInfo gives its summary, preconditions and parameters) are all made from it.
//   X(Id, "name", role)
// role: kParameterMove for a pass that rewrites only what the search tunes (tiles, warps,
// stages, autotune configs): the search's regions make those moves, so no engine proposes
// them as passes; kStructural for the others.
#define TF_PASS_TABLE(X)                             \
  X(Retile, "retile", kParameterMove)                \
  X(Launch, "launch", kParameterMove)                \
  X(Autotune, "autotune", kParameterMove)            \
  X(GroupedOrder, "grouped-order", kStructural)      \
  X(RowsPerProgram, "rows-per-program", kStructural) \
  X(ColumnLoop, "column-loop", kStructural)          \
  X(SplitK, "split-k", kStructural)                  \
  X(Persistent, "persistent", kStructural)           \
  X(TensorCores, "tensor-cores", kStructural)        \
  X(MemoryHints, "memory-hints", kStructural)        \
  X(Vectorize, "vectorize", kStructural)             \
  X(Exp2, "exp2", kStructural)                       \
  X(OnlineSoftmax, "online-softmax", kStructural)    \
  X(CausalSplit, "causal-split", kStructural)        \
  X(FlattenLoops, "flatten-loops", kStructural)      \
  X(Relayout, "relayout", kStructural)               \
  X(EvictionHints, "eviction-hints", kStructural)    \
  X(TailSplit, "tail-split", kStructural)            \
  X(ImplicitGemm, "implicit-gemm", kStructural)      \
  X(SplitRows, "split-rows", kStructural)          \
  X(WarpSpecialize, "warp-specialize", kStructural)  \
  X(LauncherGlue, "launcher-glue", kStructural)    \
  X(Prefetch, "prefetch", kStructural)              \
  X(FusedSum, "fused-sum", kStructural)              \
  X(FusedCast, "fused-cast", kStructural)            \
  X(GluonGemm, "gluon-gemm", kStructural)           \
  X(GluonAttention, "gluon-attention", kStructural)

// kRetile, kLaunch, ...: one per row of TF_PASS_TABLE, in its order.
enum class PassName {
#define TF_PASS_ENUMERATOR(id, name, role) k##id,
  TF_PASS_TABLE(TF_PASS_ENUMERATOR)
#undef TF_PASS_ENUMERATOR
};

enum class PassRole { kParameterMove, kStructural };

const char* toString(FindingKind kind);    // "register-spills", ... "memory-bound"
const char* toString(Limiter limiter);     // "registers", "shared-memory", "block-size", "none", "unknown"
const char* toString(PassName pass);       // "retile", "split-k", ...
PassRole roleOf(PassName pass);
// retile, launch, autotune: the search's regions make these moves (PassRole::kParameterMove).
bool isParameterMove(PassName pass);

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

// A pass as the loop and the engines carry it, from an engine's proposal through the pass
// trials and the run's ledger to the trace: one of the vocabulary's passes, or a pass that a
// PassApplier knows by name alone (the tests' fake appliers have their own). Text becomes a
// PassId where text comes in (JSON, an applier's catalogue, flags), once; a PassId reads as
// its name where text goes out. Equal when the names are; ordered by name.
class PassId {
 public:
  PassId() = default;
  PassId(PassName pass);                 // NOLINT(google-explicit-constructor): a vocabulary pass is one
  PassId(std::string name);              // NOLINT(google-explicit-constructor): at the edges
  PassId(const char* name) : PassId(std::string(name)) {}  // NOLINT(google-explicit-constructor)
  // A rewrite of the whole module (an engine's rewrite proposal), tried like a pass.
  static PassId rewrite() { return PassId("rewrite"); }

  // The vocabulary's pass, nullopt for one known by name alone.
  std::optional<PassName> known() const { return pass_; }
  bool isParameterMove() const { return pass_ && tf::isParameterMove(*pass_); }
  const std::string& name() const { return name_; }
  bool empty() const { return name_.empty(); }
  operator const std::string&() const { return name_; }  // NOLINT(google-explicit-constructor): text out

  friend bool operator==(const PassId& a, const PassId& b) { return a.name_ == b.name_; }
  friend std::strong_ordering operator<=>(const PassId& a, const PassId& b) { return a.name_ <=> b.name_; }
  friend bool operator==(const PassId& a, PassName b) { return a.pass_ == b; }
  friend bool operator==(const PassId& a, const char* b) { return a.name_ == b; }
  friend bool operator==(const PassId& a, const std::string& b) { return a.name_ == b; }

 private:
  std::optional<PassName> pass_;
  std::string name_;
};

// As JSON and text: the name.
void to_json(nlohmann::json& j, const PassId& pass);
std::ostream& operator<<(std::ostream& os, const PassId& pass);

}  // namespace tf
