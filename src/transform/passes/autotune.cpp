#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {
class AutotunePass : public Pass {
 public:
  AutotunePass() { info_.name = "autotune"; info_.summary = "TODO"; }
  const PassInfo& info() const override { return info_; }
  PassOutcome run(const PassContext&, const PassArgs&) const override { return refuse("not written yet"); }
 private:
  PassInfo info_;
};
}  // namespace
std::unique_ptr<Pass> makeAutotunePass() { return std::make_unique<AutotunePass>(); }
}  // namespace tf
