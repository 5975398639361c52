// Factories of the catalogue's passes, one per file in this folder, one per row of the pass
// table (TF_PASS_TABLE, diagnose/vocabulary.h) (loop_split.h: what the two loop splitters,
// causal-split and tail-split, share).
#pragma once

#include <memory>

#include "diagnose/vocabulary.h"
#include "transform/pass.h"

namespace tf {

// make<Id>Pass() for every row of the pass table (diagnose/vocabulary.h).
#define TF_DECLARE_PASS_FACTORY(id, name, role) std::unique_ptr<Pass> make##id##Pass();
TF_PASS_TABLE(TF_DECLARE_PASS_FACTORY)
#undef TF_DECLARE_PASS_FACTORY

}  // namespace tf
