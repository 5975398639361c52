// The transformation pass interface and the registry of passes.
//
// A pass is a named source-to-source rewrite of one @triton.jit kernel and of the code that
// launches it (grids, keyword arguments). It declares its parameters (validated before it
// runs) and its preconditions (as text for `transform --list`). Run on a PassContext, it
// either refuses with a one-line reason (an expected outcome, a value, never an exception)
// or returns the new source. Everything outside the edited regions stays byte for byte.
//
// Entry points: allPasses(), findPass(name), parsePassSpec("name:k=v,..."),
// validateArgs(pass, spec). The passes themselves live in transform/passes/, one per file,
// behind the factories the pass table names (TF_PASS_TABLE, diagnose/vocabulary.h): the
// registry, allPasses(), is made from that table, in its order.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tf {

struct PassContext;

enum class PassParamKind {
  kInt,     // an integer within [min, max], optionally a power of two
  kChoice,  // one of `choices`
  kNames,   // identifiers separated by '+' or given as [a,b,c]
  kText,    // free text (the pass validates it)
};

struct ParamSpec {
  std::string name;
  PassParamKind kind = PassParamKind::kInt;
  std::string default_value;            // "" : no default (optional unless `required`)
  bool required = false;
  int64_t min = 0, max = 0;             // for kInt
  bool power_of_two = false;            // for kInt
  std::vector<std::string> choices;     // for kChoice
  std::string help;
  // Values the optimization loop tries when a proposal leaves this parameter open (a pass's
  // own parameters are searched, not only its default).
  std::vector<std::string> search = {};
};

struct PassInfo {
  std::string name;
  std::string summary;
  std::vector<std::string> preconditions;  // human text, one line each
  std::vector<ParamSpec> params;
  // Extra keys the pass accepts beyond `params` (retile: any constexpr parameter name);
  // described in `extra_keys_help`.
  bool extra_keys = false;
  std::string extra_keys_help;
  // The pass edits only the launch, never the kernel: it may apply to a kernel the task's
  // source imports from another module of its package (whose file is not rewritten).
  bool launcher_only = false;
};

// "name:k=v,k=v" split up. Values may hold commas inside [...].
struct PassSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> args;  // in the order given
};

// Validated arguments of one pass run: every declared parameter with a default is present.
class PassArgs {
 public:
  PassArgs() = default;
  explicit PassArgs(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  bool has(std::string_view key) const { return values_.count(std::string(key)) > 0; }
  const std::string& text(std::string_view key) const;  // "" when absent
  int64_t integer(std::string_view key) const;          // the pass declared it kInt
  std::vector<std::string> names(std::string_view key) const;
  const std::map<std::string, std::string>& all() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

// What became of a pass run.
// A kernel a pass added beside the one it rewrote (gluon-gemm's @gluon.jit kernel), which the
// compile check compiles too: its parameters are the rewritten kernel's (same names, same
// types and constexpr values) plus `types` ("i32"; "tensordesc<fp16[BLOCK_M, BLOCK_K]>", whose
// block names the kernel's constexprs and whose shared layout the worker takes as Gluon's
// default for it) and `constexprs`. `config` names a function of the module that gives the
// rest from the kernel's constexprs (config_args: constexpr names or integers): a tuple whose
// items set `config_sets` in order (a constexpr, or the option num_warps), or None when the
// launch would not take the companion for those values (then it is not compiled).
struct Companion {
  std::string kernel;
  std::map<std::string, std::string> types;
  std::map<std::string, int64_t> constexprs;
  std::string config;
  std::vector<std::string> config_args, config_sets;
};

struct PassOutcome {
  bool applied = false;
  std::string source;                    // the new source text, when applied
  std::string reason;                    // why it refused, when not applied (one line)
  std::vector<std::string> notes;        // what the reviewer should know
  // Runtime parameters the pass added or whose type it changed, with their Triton type
  // ("i32", "*fp32"): the compile check uses these over the given signature.
  std::map<std::string, std::string> param_types;
  std::vector<Companion> companions;
};

PassOutcome refuse(std::string reason);

class SourceEditor;
// The pass's edits applied: an applied outcome with the new source, or the refusal that names
// `kernel` when two of the edits overlap (forms the pass rewrites sharing a line).
PassOutcome appliedEdits(const SourceEditor& ed, const std::string& kernel);

struct PassContext;
// The source with `block` inserted after the kernel's definition (a lowering's code beside the
// kernel it rebinds), as an applied outcome (pass_context.cpp).
PassOutcome withBlockAfterKernel(const PassContext& ctx, const std::string& block);

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const PassInfo& info() const = 0;
  // Checks the preconditions on the IR and rewrites; refuses (a value) when one fails.
  virtual PassOutcome run(const PassContext& ctx, const PassArgs& args) const = 0;
};

// Every pass, in catalogue order.
const std::vector<std::unique_ptr<Pass>>& allPasses();
const Pass* findPass(std::string_view name);

// Parses "name[:k=v[,k=v]...]". Throws UserError on a malformed spec.
PassSpec parsePassSpec(std::string_view spec);

// Checks `spec` against the pass's declared parameters and fills in defaults. Throws
// UserError("pass 'x': ...") naming the parameter and what is allowed.
PassArgs validateArgs(const Pass& pass, const PassSpec& spec);

// Passes switched off by name (from the CLI: --no-pass a,b). Unknown names are
// errors (a misspelt name must not silently leave a pass on).
class PassFilter {
 public:
  PassFilter() = default;
  // Throws UserError for a name that is not a pass.
  void disable(std::string_view names_comma_separated);
  bool enabled(std::string_view name) const { return !disabled_.count(std::string(name)); }
  const std::set<std::string>& disabled() const { return disabled_; }

 private:
  std::set<std::string> disabled_;
};

// The text of `transform --list`: each pass with its summary, preconditions and parameters.
std::string describePasses(const PassFilter& filter);

}  // namespace tf
