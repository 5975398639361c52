// Module-level forms of real Triton code that mean the same as what the analysis reads, put
// into that form in the parsed tree (positions unchanged, so every edit still lands on the
// text as written):
//   * functional decoration: `def k(...)` followed at module level by `k = triton.jit(k)`,
//     `k = triton.heuristics({...})(k)` or `k = triton.autotune(...)(k)` (unsloth's style)
//     becomes decorators of `def k`, outermost first, as Python applies them;
//   * definitions under a module-level `if` (a version gate: `if triton.__version__ >= "2.1":`)
//     or `try:` are seen as module-level ones: the `if` branch's, then those of the `else`
//     branch (or of an `except` handler) that the first did not define.
#pragma once

#include "kernel/ast.h"

namespace tf {

// Rewrites `module` (a Module node) in place; a no-op for modules without these forms.
void normalizeModule(Node& module);

}  // namespace tf
