#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {
class GroupedOrderPass : public Pass {
 public:
  GroupedOrderPass() { info_.name = "grouped-order"; info_.summary = "TODO"; }
  const PassInfo& info() const override { return info_; }
  PassOutcome run(const PassContext&, const PassArgs&) const override { return refuse("not written yet"); }
 private:
  PassInfo info_;
};
}  // namespace
std::unique_ptr<Pass> makeGroupedOrderPass() { return std::make_unique<GroupedOrderPass>(); }
}  // namespace tf
