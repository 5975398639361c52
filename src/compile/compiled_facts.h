// Facts from what Triton compiled (the worker's `compile` op; no GPU needed): registers,
// spills, shared memory, and from SASS (or PTX where cuobjdump is missing) the instructions
// that matter: which tensor-core instructions a dot became (wgmma / HGMMA, mma / HMMA, or
// plain FMA), the widths of global loads and stores, asynchronous copies (cp.async / LDGSTS,
// TMA), local-memory traffic.
//
// Entry points: compileRequest (the op's arguments for one kernel x configuration, with the
// JIT's specialization: integers equal to 1 become constexprs, multiples of 16 get a
// divisibility hint), parseCompiled (the op's reply -> CompiledFacts), factsFromPtx /
// factsFromSass (text -> instruction facts), compiledFactsJson.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compile/asm_facts.h"
#include "worker/worker_client.h"

namespace tf {

struct CompiledFacts {
  std::string status;                     // "ok", "compile-error", "out-of-resources", "skipped"
  std::string reason;                     // for failures / skips
  std::optional<int64_t> shared_bytes;
  std::optional<int> registers, stack_bytes, local_bytes, spill_store_bytes, spill_load_bytes;
  std::optional<int> num_warps, num_stages;
  std::optional<double> compile_seconds;
  std::optional<InstructionFacts> instructions;
  std::string sass_missing;               // why SASS was not read ("" when it was)
  std::vector<std::string> notes;
};

// `values`: integer arguments (scalars and constexprs) of this configuration; `types`: Triton
// types of non-constexpr parameters ("*fp16", "i32", "fp32"); `constexpr_names`: parameters
// annotated tl.constexpr; `options`: num_warps / num_stages / ...
CompileRequest compileRequest(const std::string& path, const std::string& kernel,
                              const std::vector<std::string>& param_order,
                              const std::map<std::string, std::string>& types,
                              const std::map<std::string, int64_t>& values,
                              const std::vector<std::string>& constexpr_names,
                              const std::map<std::string, int64_t>& options, std::string* missing);

// The `compile` op's reply: ok with its result, or a failure with its status and message.
CompiledFacts parseCompiled(const CompileReply& reply);

nlohmann::json compiledFactsJson(const CompiledFacts& f);

}  // namespace tf
