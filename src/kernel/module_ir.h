// The module-level IR of a Triton source: its imports, its @triton.jit kernels (with their
// parameters and @triton.autotune / @triton.heuristics decorators), its other functions,
// and every launch site `kernel[grid](...)`.
//
// Entry point: buildModuleIR(ParsedSource). Node pointers point into the ParsedSource's
// AST, which must outlive the IR. What the builder does not understand it records as
// opaque (a note), never as a guess.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel/ast.h"

namespace tf {

struct Param {
  std::string name;
  int index = 0;
  std::string annotation;        // source text, "" if none
  bool is_constexpr = false;
  const Node* default_value = nullptr;
  std::optional<int64_t> default_int;
};

struct AutotuneConfig {
  std::map<std::string, int64_t> kwargs;   // integer meta-parameters
  std::map<std::string, std::string> other_kwargs;  // non-integer ones, as source text
  std::map<std::string, std::string> hooks;  // pre_hook= / ir_override=, as source text
  std::map<std::string, int64_t> options;  // num_warps, num_stages, num_ctas, maxnreg
  std::string text;
};

struct AutotuneInfo {
  const Node* decorator = nullptr;
  const Node* configs = nullptr;           // the configs= expression
  bool configs_understood = false;         // a literal list of triton.Config(...) calls
  std::vector<AutotuneConfig> configs_list;
  std::vector<std::string> key;
  std::string tuner;                       // the decorator's name when it is not triton.autotune
                                           // (a project's Autotuner subclass: configs= and key=)

  // configs= is a list (or tuple) of triton.Config written at the decorator itself: one that a
  // rewrite can edit in place (not a module-level list that other kernels may share).
  bool configsWrittenHere() const;
};

struct HeuristicEntry {
  std::string param;
  const Node* body = nullptr;              // the lambda's body expression
  const Node* value = nullptr;             // the dict's value as written (a lambda, a function's name)
};

struct ModuleIR;

struct Kernel {
  std::string name;
  const Node* def = nullptr;               // the FunctionDef
  // A kernel imported from another module of the package (`from .kernels import k`): the IR
  // of the module that defines it (its AST, its imports). Null: defined in this module.
  const ModuleIR* home = nullptr;
  std::string home_path;                   // that module's file
  // Set when the module itself is imported (`import pkg.utils as tle`, `from . import utils`):
  // the module's dotted name as this source's imports spell it; the kernel is then reached as
  // `tle.k` (ModuleIR names the copy so). Empty for `from .kernels import k`.
  std::string imported_module;
  std::vector<Param> params;
  std::optional<AutotuneInfo> autotune;
  std::vector<HeuristicEntry> heuristics;
  std::vector<std::string> notes;          // what the builder did not understand

  const Param* param(std::string_view name) const;
};

struct LaunchArg {
  std::string param;                       // kernel parameter or launch option name
  const Node* expr = nullptr;
  bool positional = false;
};

inline bool isLaunchOption(std::string_view name) {
  return name == "num_warps" || name == "num_stages" || name == "num_ctas" || name == "maxnreg" ||
         name == "enable_fp_fusion" || name == "launch_cooperative_grid" || name == "launch_pdl";
}

struct LaunchSite {
  std::string kernel;
  std::string function;                    // enclosing top-level function ("" at module level)
  const Node* call = nullptr;              // the Call node
  const Node* grid = nullptr;              // the subscript expression
  std::vector<LaunchArg> args;             // kernel parameters, in source order
  std::map<std::string, LaunchArg> options;  // num_warps, num_stages, ...
  bool has_starred = false;                // *args / **kwargs: mapping incomplete
  bool star_args = false;                  // *args: the positions after it are unknown

  const LaunchArg* arg(std::string_view param) const;
};

// One assignment to a local name inside a function.
struct Assignment {
  const Node* stmt = nullptr;              // the Assign / AugAssign / AnnAssign
  const Node* value = nullptr;             // the value bound to the name (tuple element if unpacked)
  bool augmented = false;                  // x += ...
  bool conditional = false;                // inside an if / loop / with / try
};

struct FunctionInfo {
  std::string name;
  const Node* def = nullptr;
  std::map<std::string, std::vector<Assignment>> assignments;  // in source order
  std::vector<std::string> params;
};

// Statements that analyses of a module's kernels may still interpret inside inlined
// @triton.jit helpers, shared by every kernel built from the module (and by copies of the
// ModuleIR). Helpers that call helpers several times multiply the work at every level, and a
// file of many kernels calling such a chain multiplies it again (issue 11): past the budget,
// calls are not inlined and the IR says so. The largest real kernels inline under 100.
struct InlineBudget {
  static constexpr int64_t kStatements = 50000;
  int64_t statements_left = kStatements;
};

struct ModuleIR {
  const ParsedSource* source = nullptr;
  std::shared_ptr<InlineBudget> inline_budget = std::make_shared<InlineBudget>();
  std::map<std::string, std::string> aliases;   // local name -> qualified ("tl" -> "triton.language")
  std::vector<Kernel> kernels;
  std::map<std::string, FunctionInfo> functions;  // top-level non-kernel functions
  std::vector<LaunchSite> launches;
  std::map<std::string, const Node*> module_assignments;  // top-level NAME = value (last one)

  const Kernel* kernel(std::string_view name) const;
  // The functions a launcher name stands for: a function or method of this module, an alias
  // of one (`layer_norm = LayerNorm.apply`), or an autograd Function's `Class.apply` (its
  // forward). Empty, with `why` naming the construct and its line, when it cannot be followed.
  std::vector<std::string> entryFunctions(const std::string& launcher, std::string* why = nullptr) const;
  // A call's callee as a function of this module, seen from inside `caller` ("" when none):
  // a function, an alias of one, `Class.apply`, or `self.method` / `cls.method` in a class.
  std::string calleeOf(const Node& call, const std::string& caller) const;
  // The kernels a value names: a kernel's name, `TABLE["key"]` of a module-level dict literal
  // of kernels, `a if c else b` (both); empty when any part names no kernel.
  std::vector<const Kernel*> kernelsBoundBy(const Node& value, int depth = 0) const;
  // Expands the first component of a dotted name through the import aliases:
  // "tl.arange" -> "triton.language.arange".
  std::string qualify(const std::string& dotted) const;
  std::string qualifiedName(const Node& n) const { return qualify(dottedName(n)); }
  // How the module spells `triton` for new code ("triton", or its alias); "" if not imported.
  std::string tritonSpelling() const;
};

// `imported`: kernels of other modules that this one imports (their `home` set), so that
// launches of them are found too.
ModuleIR buildModuleIR(const ParsedSource& source, const std::vector<Kernel>* imported = nullptr);

// Does `node` come after the statement `stmt` inside the statement list of function `fn` that
// holds `stmt` (later in that block, or nested in a later statement of it)? A value assigned
// in a branch, a loop or a `with` then reaches it. False when `stmt` is in no list of `fn`.
bool followsInItsBlock(const SourceText& text, const Node& fn, const Node& stmt, const Node& node);

// The assignment of `name` in function `fn` whose value `node` reads on every path: a plain
// or augmented one that `node` follows in its block (followsInItsBlock), with no other
// assignment of the name between them, none whose statement holds `node` (a loop's target, a
// `with ... as`), and none inside a loop that holds `node` but not that assignment (it would
// reach `node` on the next iteration). Null when no one assignment does.
const Assignment* reachingAssignment(const SourceText& text, const FunctionInfo& fn, const std::string& name,
                                     const Node& node);

// Where a name assigned in several places (`BLOCK = 1024` then `if n < 4096: BLOCK = ...`)
// takes one value on every path to `node`: just after the last statement, in a block that
// holds `node`, that assigns it (an `if`, a loop, a `try`, a `with` around the assignments),
// before anything after it reads the name. An assignment written there reaches `node` and
// every read between. None when no compound statement is that last one (a plain assignment
// is reachingAssignment's), when one holds `node` or sits in a loop around `node` after it,
// or when any assignment before `node` unpacks a value (a shape).
struct JoinPoint {
  size_t at = 0;      // byte offset of the line after that statement
  int indent = 0;     // that statement's column
};
std::optional<JoinPoint> joinPoint(const SourceText& text, const FunctionInfo& fn, const std::string& name,
                                   const Node& node);

// The keys the launching function writes literally into the dicts a launch unpacks
// (`K[grid](..., **kernel_args)`): `kernel_args = {"num_warps": w}`, `kernel_args["k"] = v`,
// `kernel_args.update({"k": v})` or `.update(k=v)`, `.setdefault("k", v)`, and the keys of a dict
// literal unpacked in the call itself. `opaque` (when given): some unpacked value is neither a
// local name nor a dict literal, or a key is not a string literal, so the keys are not all read.
// A function the dict is passed to (Liger's set_large_grf_mode on XPU) may add keys unseen.
std::set<std::string> unpackedKeys(const ModuleIR& ir, const LaunchSite& site, bool* opaque = nullptr);

// Does the launch hide which parameters of `kernel` its arguments bind? `*args` (the positions
// after it are unknown), or a `**dict` whose keys are not all read or name a parameter of the
// kernel (a dict of launch options, num_warps and the like, hides none). `why` says which.
bool hidesArguments(const ModuleIR& ir, const LaunchSite& site, const Kernel& kernel, std::string* why = nullptr);

}  // namespace tf
