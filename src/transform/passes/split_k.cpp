#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {
class SplitKPass : public Pass {
 public:
  SplitKPass() { info_.name = "split-k"; info_.summary = "TODO"; }
  const PassInfo& info() const override { return info_; }
  PassOutcome run(const PassContext&, const PassArgs&) const override { return refuse("not written yet"); }
 private:
  PassInfo info_;
};
}  // namespace
std::unique_ptr<Pass> makeSplitKPass() { return std::make_unique<SplitKPass>(); }
}  // namespace tf
