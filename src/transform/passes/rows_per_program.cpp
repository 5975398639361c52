#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {
class RowsPerProgramPass : public Pass {
 public:
  RowsPerProgramPass() { info_.name = "rows-per-program"; info_.summary = "TODO"; }
  const PassInfo& info() const override { return info_; }
  PassOutcome run(const PassContext&, const PassArgs&) const override { return refuse("not written yet"); }
 private:
  PassInfo info_;
};
}  // namespace
std::unique_ptr<Pass> makeRowsPerProgramPass() { return std::make_unique<RowsPerProgramPass>(); }
}  // namespace tf
