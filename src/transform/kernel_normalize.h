// Forms of a kernel body that mean the same as the forms the passes read, rewritten once into
// those forms, so that no pass has to widen its own pattern for them:
//   * program ids: every `tl.program_id(a)` of the kernel (a a literal axis) reads one name
//     per axis, bound by `NAME = tl.program_id(a)` at the top level of the body. A binding of
//     several ids in one tuple (`i_v, i_k = tl.program_id(0), tl.program_id(1)`) becomes one
//     statement each; a cast (`pid = tl.program_id(0).to(tl.int64)`), an id read inside an
//     expression, a loop or a branch, or read again after its binding reads the name instead,
//     bound at the top of the body when the kernel has no plain binding that comes first. A
//     program's id is the same wherever it is read, so none of this changes what the kernel
//     computes.
//   * a multi-line string standing alone as a statement (a docstring, a commented-out block)
//     is dropped (`pass` where it was its block's only statement): it does nothing, and a pass
//     that indents the body would change its text.
//   * an early exit `if C: return` at the top level of the body (a bounds guard: `if row >=
//     n_rows: return`) becomes `if not (C):` over the rest of the body: the program ends the
//     same way, and a pass that wraps the body in a loop (over rows, over tiles) no longer
//     ends the whole program at the first row or tile the guard stops. The first such guard.
// Positions of the rewritten source differ from the original's, so it is parsed again
// before a pass runs on it.
//
// Entry points: normalizeKernel (the rewrite), retryNormalized (a pass that refused the
// kernel as written tried again on its normal form: every pass applier runs passes so),
// NormalFormRunner (the appliers' second try: parse, kernel, context, run).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel/module_ir.h"

#include "kernel/ast.h"
#include "transform/pass.h"
#include "transform/pass_context.h"

namespace tf {

class WorkerProcess;

struct NormalizedKernel {
  std::string source;                // the whole module, the kernel's body rewritten
  std::vector<std::string> changes;  // what was rewritten, one line each
};

// The axis of a `tl.program_id(a)` call: a literal 0..2 (positional or `axis=`), else -1
// (computed, or absent).
int programIdAxis(const Node& call);

// The module with ctx's kernel in normal form, or nullopt when it already is (or the kernel
// is defined in another module, or a form cannot be rewritten safely: then it is left).
std::optional<NormalizedKernel> normalizeKernel(const PassContext& ctx);

// `as_written` is the pass's outcome on the kernel as written. When it refused and the kernel
// has forms to normalize, `rerun` runs the pass on the normalized source (parsing it again)
// and its outcome is the answer: applied (with a note saying what was normalized), or the
// refusal on the normal form when it differs from the one as written beyond its numbers (a
// line number the rewrite shifted). Otherwise `as_written`.
PassOutcome retryNormalized(PassOutcome as_written, const PassContext& ctx,
                            const std::function<PassOutcome(const std::string& normalized_source)>& rerun);

// The context a kernel's normal form is read in when the source imports kernels or @triton.jit
// helpers from its package's other modules: ctx's kernel in a module IR that holds them too,
// so that a program id read through an imported helper (FlagGems' `tle.program_id(0)`) is
// seen. The passes themselves keep the context without them. Null when nothing is imported
// or the kernel is not the source's own.
struct ImportsContext {
  ModuleIR ir;
  PassContext ctx;
};
std::unique_ptr<ImportsContext> contextWithImports(const ParsedSource& src, const PassContext& ctx,
                                                   const std::vector<Kernel>* imported);

class NormalFormRunner;
// A pass run by an applier: on the kernel as written (`ctx`), then, where it refuses, on its
// normal form read with the helpers `imported` (contextWithImports) by `runner`, with
// `rerun_imported` for the normal form's own module IR (the launcher-only passes' imports).
PassOutcome runWithNormalForm(const Pass& pass, const PassArgs& args, const PassContext& ctx,
                              const ParsedSource& src, const std::vector<Kernel>* imported, NormalFormRunner& runner,
                              const std::filesystem::path& path, const std::vector<Kernel>* rerun_imported = nullptr);

// What a pass applier's `rerun` does: parses a normal form (the last one parsed is kept: the
// passes tried on one kernel share its parse) and runs a pass on its kernel, with the types
// and tolerances of the context as written.
class NormalFormRunner {
 public:
  explicit NormalFormRunner(WorkerProcess& worker) : worker_(worker) {}
  // `imported`: kernels of the package's other modules, for a pass that edits the launch only.
  PassOutcome run(const Pass& pass, const PassArgs& args, const PassContext& as_written, const std::string& text,
                  const std::filesystem::path& path, const std::vector<Kernel>* imported = nullptr);

 private:
  WorkerProcess& worker_;
  std::string text_;
  std::optional<ParsedSource> parsed_;
};

}  // namespace tf
