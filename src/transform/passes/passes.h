// Factories of the catalogue's passes, one per file in this folder (loop_split.h: what the two
// loop splitters, causal-split and tail-split, share).
#pragma once

#include <memory>

#include "transform/pass.h"

namespace tf {

std::unique_ptr<Pass> makeRetilePass();
std::unique_ptr<Pass> makeLaunchPass();
std::unique_ptr<Pass> makeAutotunePass();
std::unique_ptr<Pass> makeGroupedOrderPass();
std::unique_ptr<Pass> makeRowsPerProgramPass();
std::unique_ptr<Pass> makeColumnLoopPass();
std::unique_ptr<Pass> makeSplitKPass();
std::unique_ptr<Pass> makePersistentPass();
std::unique_ptr<Pass> makeTensorCoresPass();
std::unique_ptr<Pass> makeMemoryHintsPass();
std::unique_ptr<Pass> makeVectorizePass();
std::unique_ptr<Pass> makeExp2Pass();
std::unique_ptr<Pass> makeOnlineSoftmaxPass();
std::unique_ptr<Pass> makeCausalSplitPass();
std::unique_ptr<Pass> makeTailSplitPass();
std::unique_ptr<Pass> makeImplicitGemmPass();
std::unique_ptr<Pass> makeSplitRowsPass();
std::unique_ptr<Pass> makeFlattenLoopsPass();
std::unique_ptr<Pass> makeRelayoutPass();
std::unique_ptr<Pass> makeEvictionHintsPass();

}  // namespace tf
