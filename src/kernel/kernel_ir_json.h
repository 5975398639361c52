// JSON of the Kernel IR, its derived facts and per-configuration estimates, as
// `tritonforge analyze --json` prints them (schema tritonforge.analyze/2, docs/analyze.md).
// Expressions are printed as text (kernel/sym_expr.h's str()); unknown values are null.
#pragma once

#include <nlohmann/json.hpp>

#include "kernel/kernel_cost.h"
#include "kernel/kernel_ir.h"

namespace tf {

nlohmann::json exprJson(const sym::Expr& e);   // text, or null
nlohmann::json kernelIRJson(const KernelIR& ir, const KernelStaticFacts& facts);
nlohmann::json estimateJson(const KernelIR& ir, const KernelStaticFacts& facts, const CostEstimate& est);

}  // namespace tf
