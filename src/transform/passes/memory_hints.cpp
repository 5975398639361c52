#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {
class MemoryHintsPass : public Pass {
 public:
  MemoryHintsPass() { info_.name = "memory-hints"; info_.summary = "TODO"; }
  const PassInfo& info() const override { return info_; }
  PassOutcome run(const PassContext&, const PassArgs&) const override { return refuse("not written yet"); }
 private:
  PassInfo info_;
};
}  // namespace
std::unique_ptr<Pass> makeMemoryHintsPass() { return std::make_unique<MemoryHintsPass>(); }
}  // namespace tf
