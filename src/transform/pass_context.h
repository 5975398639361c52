// What a pass sees: the parsed source, its module IR, the kernel, the kernel's static facts,
// its launch sites, and what the user told about the task (tolerances, parameter types);
// plus the facts the passes need beyond src/kernel/ (program-id variables, grids, the
// kernel parameter a grid axis spans) and the text helpers every pass uses (spelling of
// `tl`, fresh names, indentation, adding a kernel parameter or a launch keyword).
//
// Entry points: PassContext::make, gridOf, axisExtent, addKernelParam, addLaunchKeyword.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/kernel_analysis.h"
#include "kernel/module_ir.h"
#include "transform/source_editor.h"

namespace tf {

// `pid_m = tl.program_id(0)` at the top level of the kernel body.
struct PidVar {
  std::string name;
  int axis = 0;
  const Node* stmt = nullptr;
};

struct PassContext {
  const ParsedSource* src = nullptr;
  const ModuleIR* ir = nullptr;
  const Kernel* kernel = nullptr;
  KernelFacts facts;
  std::vector<const LaunchSite*> sites;             // every launch of the kernel in the module
  std::optional<double> rtol, atol;                 // the task's tolerances, when known
  std::map<std::string, nlohmann::json> signature;  // param -> "*fp16" | "i32" | constexpr value

  static PassContext make(const ModuleIR& ir, const Kernel& kernel);

  const SourceText& text() const { return src->source; }
  std::string slice(const Node& n) const { return src->source.slice(n); }
  Range range(const Node& n) const;  // the node must have a position
  const Node& body() const { return kernel->def->at("body"); }

  // How the module spells triton.language ("tl") and triton ("triton") for new code.
  std::string tl() const;
  std::string triton() const;
  std::string constexprAnnotation() const;  // "tl.constexpr", as the kernel writes it
  // Indentation of the kernel body's statements, and one level of indentation.
  std::string bodyIndent() const;
  std::string indentUnit() const;

  // The triton.language function a call calls ("load", "dot"), "" for anything else.
  std::string tlFunction(const Node& call) const;
  bool isTlCall(const Node& n, std::string_view fn) const;

  // Every identifier the kernel mentions (parameters, locals, globals it reads).
  const std::set<std::string>& kernelNames() const;
  // `base`, or `base_2`, ... : a name the kernel does not use yet.
  std::string freshName(const std::string& base) const;

  // Program-id variables bound at the top level of the body, in source order.
  std::vector<PidVar> pidVars() const;
  // How many tl.program_id / tl.num_programs calls the kernel makes.
  int programIdCalls() const;
  int numProgramsCalls() const;
  // The index of `stmt` in the body's top-level statements, or -1.
  int bodyIndex(const Node* stmt) const;

  // The whole lines a statement spans (from the start of its first line to after the
  // newline of its last).
  Range lineRange(const Node& stmt) const;
  Range lineRange(int first_line, int last_line) const;
  // Names bound anywhere in the body from expressions that use `name` (transitively).
  std::set<std::string> derivedFrom(const std::string& name) const;
  // Does the body contain a `return` (outside nested functions)? `except_trailing`: a bare
  // `return` as the body's last statement (a no-op) does not count.
  bool hasReturn(bool except_trailing = false) const;
  // The body's last statement when it is a bare `return`, else nullptr.
  const Node* trailingBareReturn() const;

 private:
  std::set<std::string> names_;
};

// A launch's grid, following one `grid = ...` assignment in the launching function.
struct GridView {
  const Node* expr = nullptr;          // the grid expression (a tuple, a lambda, a call ...)
  const Node* assign_stmt = nullptr;   // the `grid = ...` statement (or `def grid`), when named
  const Node* lambda = nullptr;        // `lambda META: (...)`, or the `def grid(META)`
  std::string lambda_arg;              // "META"
  const Node* tuple = nullptr;         // the Tuple / List node (the lambda's body for a lambda)
  std::vector<const Node*> axes;       // one expression per grid axis
  // A nested `def grid(META): return (...)`: `expr` is the returned tuple, which a new grid
  // replaces as a tuple (gridTextFor), the def binding META.
  bool in_def = false;
};

// Refuses (nullopt + reason) when the grid is something else than a tuple, a list, or a
// lambda returning one, possibly bound to one variable: assigned once in the launching
// function, at its top level, or inside a block (an `if` branch, a loop, a `with`) that the
// launch comes later in (launchFollowsInItsBlock); or defined there as
// `def grid(META): return (...)` (in_def).
std::optional<GridView> gridOf(const PassContext& ctx, const LaunchSite& site, std::string* why);
// Is `site` the kernel's only launch in the function `fn`, after `assign` in the statement list
// that holds `assign`?
bool launchFollowsInItsBlock(const PassContext& ctx, const Node& fn, const Node& assign, const LaunchSite& site);

// The kernel parameter that a grid axis spans (M for `pid_m`): from the launch grids
// (`triton.cdiv(M, ...)` with M passed for the kernel's parameter M), else from the masks
// (`offs < M` with offs computed from the axis's program id). "" when not found.
std::string axisExtent(const PassContext& ctx, int axis);

// The constexpr parameter a grid axis steps by (BLOCK_M for pid_m * BLOCK_M), "" if none or several.
std::string axisTile(const PassContext& ctx, int axis);

// The expression passed at `site` for kernel parameter `param`, or nullptr.
const Node* launchArg(const LaunchSite& site, const std::string& param);

// Adds `name[: annotation][ = default]` to the kernel's parameters (after the last one).
void addKernelParam(const PassContext& ctx, SourceEditor& ed, const std::string& name,
                    const std::string& annotation, const std::string& default_text = "");

// Adds `name=value` to a launch: after the last kernel argument, before launch options
// (num_warps=...), so the call reads in the usual order. A line that would pass 100 columns
// continues on the next, aligned with the first argument: make edits earlier on that line
// (the grid) before calling this.
void addLaunchKeyword(const PassContext& ctx, SourceEditor& ed, const LaunchSite& site, const std::string& name,
                      const std::string& value);

// Adds the keyword text `kw` ("name=value") to a call after its last argument (before launch
// options when `before_launch_options`), wrapping past 100 columns like addLaunchKeyword.
void addCallKeyword(const PassContext& ctx, SourceEditor& ed, const Node& call, const std::string& kw,
                    bool before_launch_options = false);

// Removes a keyword argument (with its comma) from a call.
void removeKeyword(const PassContext& ctx, SourceEditor& ed, const Node& call, const std::string& name);
// The bytes removeKeyword removes: the keyword and the comma before it (after it, when it comes
// first); an empty range when the call has no such keyword. Removals of two keywords of one
// call are adjacent, never overlapping.
Range keywordRemoval(const PassContext& ctx, const Node& call, const std::string& name);

// A call `head(arg, arg, ...)` that starts at output column `column`, its arguments
// wrapped at `limit` columns and aligned after the opening parenthesis.
std::string wrapCall(const std::string& head, const std::vector<std::string>& args, size_t column, size_t limit = 100);

// The Python class of a route that a lowering rebinds a kernel's name to: `K[grid](...)` and
// Triton's Autotuner / Heuristics (which call `run`) go through `launch(grid, *args,
// **kwargs)`, which launches the lowering and returns it, or says False (then the kernel as
// written, `.fn`, runs); `tuned` adds `under(tuner, launch)`, which puts the route under the
// kernel's @triton.autotune / @triton.heuristics. Other attributes are the kernel's.
std::string launchRouteClass(const std::string& cls, const std::string& doc, bool tuned);

// `text` with `prefix` added to every non-empty line after the first.
std::string indentFollowingLines(std::string_view text, const std::string& prefix);

// The Python text of a statement list: each line is `indent` + line.
std::string joinLines(const std::vector<std::string>& lines, const std::string& indent);

// The axis a subscript broadcasts its vector along: `x[:, None]` (a column) 0, `x[None, :]`
// (a row) 1, anything else -1.
int broadcastAxis(const Node& e);

// Walks an expression and calls `fn` on every Name node.
void forEachName(const Node& n, const std::function<void(const Node&)>& fn);
bool mentionsName(const Node& n, const std::string& name);
// How often each name is bound (a Name in Store context) below `n`.
std::map<std::string, int> storeCounts(const Node& n);

// `target = ...` (or +=, or annotated) with one Name target: the name, else "".
std::string assignedName(const Node& stmt);

// The triton.language name `n` spells in `names`' imports ("program_id" for `tl.program_id`,
// "int64" for `tl.int64`), "" for anything else. PassContext::tlFunction reads a call's callee
// so, in the kernel's own module; helpers of other modules are read in theirs.
std::string tlNameIn(const ModuleIR& names, const Node& n);

// `range(...)`, `tl.range(...)` or `tl.static_range(...)`: a loop's iterator over integers.
bool isRangeCall(const PassContext& ctx, const Node& it);

// `e` with positions dropped and the names assigned in `body` before statement `before`
// replaced by what they were assigned (the last plain assignment), so that two loops' values
// or addresses compare equal when they compute the same thing.
nlohmann::json canonicalValue(const Node& e, const Node& body, size_t before, int depth = 0);

}  // namespace tf

#include "kernel/tunables.h"

namespace tf {

// The tunables of the kernel as reached from each function that launches it.
std::vector<TunableSet> kernelTunables(const PassContext& ctx);

// Writes `value` for one tunable (its target and the grid literals that mirror it), as
// apply_config does for a whole configuration. The tunable must not be an autotune one.
void setTunable(SourceEditor& ed, const Tunable& t, int64_t value);

}  // namespace tf

namespace tf {

using TextEdits = std::vector<std::pair<Range, std::string>>;

// The source text of `n` with those of `edits` that lie inside it applied (they must not overlap).
std::string sliceWith(const PassContext& ctx, const Node& n, const TextEdits& edits);
// The same for the bytes `whole` (whole lines of the kernel, say).
std::string sliceWith(const PassContext& ctx, Range whole, const TextEdits& edits);

// Replacements that make grid literals repeating the value of `params` at `site` read
// `meta['PARAM']` instead (the grid becomes a lambda, so retiling keeps it consistent).
TextEdits metaMirrors(const PassContext& ctx, const std::vector<TunableSet>& sets, const LaunchSite& site,
                      const std::vector<std::string>& params, const std::string& meta);

// The text of a grid with new axes: "(a, b)" or "lambda META: (a, b)"; a single axis gets
// its trailing comma.
std::string gridText(const std::vector<std::string>& axes, const std::string& lambda_arg);
// The text that replaces `g.expr` with these axes: a lambda over `lambda_arg` when not empty,
// except in a `def grid(META)`, whose return value is a plain tuple.
std::string gridTextFor(const GridView& g, const std::vector<std::string>& axes, const std::string& lambda_arg);

// `text` of `n`, parenthesized when it is not an atom (a name, a call, a subscript ...).
std::string atomText(const PassContext& ctx, const Node& n, const std::string& text);

// The index of `site` in the module's launch list.
int siteIndex(const PassContext& ctx, const LaunchSite& site);

}  // namespace tf

namespace tf {

// Grid axis `axis` written in the kernel's terms, the same at every launch: launcher
// values become the kernel parameters they are passed as, META['P'] and grid literals that
// repeat P's value become P, triton.cdiv becomes tl.cdiv ("tl.cdiv(M, BLOCK_M)"). nullopt
// (and `why`) when some part has no kernel-side meaning.
std::optional<std::string> gridAxisInKernel(const PassContext& ctx, const std::vector<TunableSet>& sets, int axis,
                                            std::string* why);

// Does the kernel body hold a string literal over several lines (indenting it would change it)?
bool hasMultilineString(const PassContext& ctx, const Node& from);

// A pass that wraps the kernel body's statements [from, end) in a loop (over rows, over tiles)
// must start each iteration from the values those statements start from once: a parameter or
// an earlier name they rebind (`X += row * stride`, FlagGems' and Liger's pointer bumps) would
// otherwise carry the last iteration's value into the next. `saved` are the lines that keep
// each such value before the loop (`X_in = X`), `reset` the lines that restore it at the top
// of the loop's body (`X = X_in`), both without indentation; empty when nothing is rebound.
struct LoopEntryValues {
  std::vector<std::string> saved, reset;
};
LoopEntryValues loopEntryValues(const PassContext& ctx, int from);

// The text that gives the GPU's SM count in the launcher ("torch.cuda.get_device_properties(...)...").
std::string smCountExpression(const PassContext& ctx);

// How the module spells torch ("torch", or its `import torch as ...` name); "" when it does
// not import it.
std::string torchAlias(const PassContext& ctx);

}  // namespace tf
