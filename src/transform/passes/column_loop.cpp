#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {
class ColumnLoopPass : public Pass {
 public:
  ColumnLoopPass() { info_.name = "column-loop"; info_.summary = "TODO"; }
  const PassInfo& info() const override { return info_; }
  PassOutcome run(const PassContext&, const PassArgs&) const override { return refuse("not written yet"); }
 private:
  PassInfo info_;
};
}  // namespace
std::unique_ptr<Pass> makeColumnLoopPass() { return std::make_unique<ColumnLoopPass>(); }
}  // namespace tf
