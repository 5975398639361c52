#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {
class VectorizePass : public Pass {
 public:
  VectorizePass() { info_.name = "vectorize"; info_.summary = "TODO"; }
  const PassInfo& info() const override { return info_; }
  PassOutcome run(const PassContext&, const PassArgs&) const override { return refuse("not written yet"); }
 private:
  PassInfo info_;
};
}  // namespace
std::unique_ptr<Pass> makeVectorizePass() { return std::make_unique<VectorizePass>(); }
}  // namespace tf
