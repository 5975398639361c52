// One drop-in source that carries a per-shape dispatch: the kernel as written, byte for byte,
// then each variant (a verified candidate's whole module) with every name it binds at module
// level renamed by a suffix (`matmul_kernel` -> `matmul_kernel_tfv1`), then a launcher under
// the original's name that picks a variant by one shape feature of its arguments and runs the
// kernel as written for a shape outside every bucket. Everything the original module exports
// is still there under its name; the picking costs a Python call and a few comparisons.
//
// Renaming follows Python's scopes (from the ast): a name is renamed where it refers to the
// module's binding, not where a function's parameter or local shadows it, and never as a
// keyword argument's name or an attribute. What the renaming cannot follow is refused with a
// reason (a name bound both by import and by assignment; a launcher that is neither a
// module-level name nor one attribute of one); the merged source is verified and measured like any candidate before it is
// handed back, so a module whose import has side effects that cannot run twice fails there.
#pragma once

#include <string>
#include <vector>

#include "kernel/ast.h"

namespace tf {

struct DispatchRoute {
  int64_t lo = 0, hi = 0;            // the feature's values, both included
  int variant = 0;                   // index into the variants given to mergeDispatch
  std::string note;                  // a comment: what it is and which measured cases it serves
};

struct DispatchSourceSpec {
  std::string launcher;              // what the task calls: a module-level name ("add", an alias
                                     // "f = _F.apply") or one attribute of one ("_F.apply", which
                                     // the dispatch replaces on the class as written)
  int arg_index = 0;                 // the feature: positional argument `arg_index` ...
  std::string arg_name;              // ... or keyword `arg_name` ("" : positional only)
  int dim = -1;                      // its dimension `dim` when a tensor; -1: its int value
  std::vector<DispatchRoute> routes; // in increasing order of the feature
  std::vector<std::string> variant_notes;  // one comment line per variant
  std::string header_note;           // a comment line at the dispatch's head (where measured)
};

struct MergedSource {
  std::string text;                  // empty when refused
  std::string refused;               // why, in one line
};

// The source with the variants after the kernel as written and the dispatching launcher.
MergedSource mergeDispatch(const ParsedSource& as_written, const std::vector<const ParsedSource*>& variants,
                           const DispatchSourceSpec& spec);

// The module's top-level names renamed with `suffix` where they refer to the module's own
// bindings (imports excepted); `refused` says why it could not be done. With
// `drop_script_parts`, `if __name__ == "__main__":` and `from __future__` statements become
// `pass` (a section appended to another module).
MergedSource renameModuleNames(const ParsedSource& source, const std::string& suffix, bool drop_script_parts = false);

}  // namespace tf
