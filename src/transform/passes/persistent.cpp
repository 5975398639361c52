#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {
class PersistentPass : public Pass {
 public:
  PersistentPass() { info_.name = "persistent"; info_.summary = "TODO"; }
  const PassInfo& info() const override { return info_; }
  PassOutcome run(const PassContext&, const PassArgs&) const override { return refuse("not written yet"); }
 private:
  PassInfo info_;
};
}  // namespace
std::unique_ptr<Pass> makePersistentPass() { return std::make_unique<PersistentPass>(); }
}  // namespace tf
