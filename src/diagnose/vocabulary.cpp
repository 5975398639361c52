#include "diagnose/vocabulary.h"

#include <nlohmann/json.hpp>
#include <ostream>
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
    case FindingKind::kLauncherGlue: return "launcher-glue";
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
#define TF_PASS_NAME(id, name, role) \
  case PassName::k##id: return name;
    TF_PASS_TABLE(TF_PASS_NAME)
#undef TF_PASS_NAME
  }
  return "?";
}

PassRole roleOf(PassName p) {
  switch (p) {
#define TF_PASS_ROLE(id, name, role) \
  case PassName::k##id: return PassRole::role;
    TF_PASS_TABLE(TF_PASS_ROLE)
#undef TF_PASS_ROLE
  }
  return PassRole::kStructural;
}

bool isParameterMove(PassName p) { return roleOf(p) == PassRole::kParameterMove; }

const std::vector<FindingKind>& allFindingKinds() {
  static const std::vector<FindingKind> all = {
      FindingKind::kRegisterSpills, FindingKind::kUncoalescedAccess,   FindingKind::kSmallGrid,
      FindingKind::kTailEffect,     FindingKind::kLowOccupancy,        FindingKind::kNoTensorCores,
      FindingKind::kSharedBankConflicts, FindingKind::kPoorL2Reuse,    FindingKind::kLongStalls,    FindingKind::kNarrowRows,
      FindingKind::kMemoryBound,    FindingKind::kComputeBound,        FindingKind::kLatencyBound,
      FindingKind::kLauncherGlue};
  return all;
}

const std::vector<PassName>& allPassNames() {
  static const std::vector<PassName> all = {
#define TF_PASS_VALUE(id, name, role) PassName::k##id,
      TF_PASS_TABLE(TF_PASS_VALUE)
#undef TF_PASS_VALUE
  };
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

PassId::PassId(PassName pass) : pass_(pass), name_(toString(pass)) {}

PassId::PassId(std::string name) : pass_(passNameFromString(name)), name_(std::move(name)) {}

void to_json(nlohmann::json& j, const PassId& pass) { j = pass.name(); }

std::ostream& operator<<(std::ostream& os, const PassId& pass) { return os << pass.name(); }

}  // namespace tf
