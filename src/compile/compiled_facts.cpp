#include "compile/compiled_facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace tf {

CompileRequest compileRequest(const std::string& path, const std::string& kernel,
                              const std::vector<std::string>& param_order,
                              const std::map<std::string, std::string>& types,
                              const std::map<std::string, int64_t>& values,
                              const std::vector<std::string>& constexpr_names,
                              const std::map<std::string, int64_t>& options, std::string* missing) {
  CompileRequest req;
  req.path = path;
  req.kernel = kernel;
  req.options = options;
  req.want = {"ptx", "sass", "spills"};
  auto& signature = req.signature;
  auto& constexprs = req.constexprs;
  auto& attrs = req.divisibility;
  std::set<std::string> cx(constexpr_names.begin(), constexpr_names.end());
  std::vector<std::string> lacking;
  for (const auto& p : param_order) {
    auto v = values.find(p);
    if (cx.count(p)) {
      if (v == values.end()) lacking.push_back(p);
      else constexprs[p] = v->second;
      continue;
    }
    auto t = types.find(p);
    std::string ty = t == types.end() ? "" : t->second;
    if (ty == "constexpr") {
      // The JIT turns an integer equal to 1 (and None) into a constant.
      if (v != values.end()) constexprs[p] = v->second;
      else constexprs[p] = nullptr;
      continue;
    }
    if (ty.empty()) {
      lacking.push_back(p);
      continue;
    }
    signature[p] = ty;
    if (v != values.end() && (ty == "i32" || ty == "i64") && v->second % 16 == 0) attrs[p] = 16;
  }
  if (missing) {
    missing->clear();
    for (const auto& l : lacking) *missing += (missing->empty() ? "" : ", ") + l;
  }
  return req;
}

CompiledFacts parseCompiled(const CompileReply& reply) {
  CompiledFacts f;
  if (!reply.answered()) {
    f.status = "compile-error";
    f.reason = "the worker did not answer: " + reply.message;
    return f;
  }
  if (!reply.ok()) {
    f.status = reply.status;
    f.reason = reply.message;
    return f;
  }
  const nlohmann::json& result = reply.result;
  f.status = "ok";
  auto optI = [&](const nlohmann::json& j, const char* k) -> std::optional<int> {
    if (j.is_object() && j.contains(k) && j[k].is_number_integer()) return j[k].get<int>();
    return std::nullopt;
  };
  // An integer only: converting a float beyond int64 (1e308) is undefined behaviour.
  if (result.contains("shared_bytes") && result["shared_bytes"].is_number_integer()) f.shared_bytes = result["shared_bytes"].get<int64_t>();
  f.num_warps = optI(result, "num_warps");
  f.num_stages = optI(result, "num_stages");
  if (result.contains("compile_seconds") && result["compile_seconds"].is_number()) f.compile_seconds = result["compile_seconds"].get<double>();
  const nlohmann::json& cubin = result.contains("cubin") ? result["cubin"] : nlohmann::json();
  f.registers = optI(cubin, "registers");
  f.stack_bytes = optI(cubin, "stack_bytes");
  f.local_bytes = optI(cubin, "local_bytes");
  if (result.contains("spills") && result["spills"].is_object()) {
    f.spill_store_bytes = optI(result["spills"], "spill_store_bytes");
    f.spill_load_bytes = optI(result["spills"], "spill_load_bytes");
  }
  if (result.contains("sass") && result["sass"].is_string() && !result["sass"].get<std::string>().empty()) {
    f.instructions = factsFromSass(result["sass"].get<std::string>());
    if (f.instructions->instructions == 0) {
      f.sass_missing = "the SASS dump held no instructions";
      f.instructions.reset();
    }
  } else {
    // Not json::value: it throws for a sass_error that is no string.
    const bool has_error = result.contains("sass_error") && result["sass_error"].is_string();
    std::string why = cubin.is_object() && cubin.contains("tool_missing") ? "cuobjdump was not found"
                      : has_error ? result["sass_error"].get<std::string>()
                                  : std::string("no SASS in the reply");
    f.sass_missing = why;
  }
  if (!f.instructions && result.contains("ptx") && result["ptx"].is_string()) {
    f.instructions = factsFromPtx(result["ptx"].get<std::string>());
    f.notes.push_back("instruction facts come from PTX (" + f.sass_missing + ")");
  }
  if (!f.registers) f.notes.push_back("registers per thread unknown (no cubin resource usage)");
  if (result.contains("torch_stubbed") && result["torch_stubbed"] == true) f.notes.push_back("torch was missing: a stand-in was used to import the source");
  return f;
}

nlohmann::json compiledFactsJson(const CompiledFacts& f) {
  using nlohmann::json;
  auto oi = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  json j = {{"status", f.status}};
  if (!f.reason.empty()) j["reason"] = f.reason;
  if (f.status != "ok") return j;
  j["shared_bytes"] = oi(f.shared_bytes);
  j["registers"] = oi(f.registers);
  j["stack_bytes"] = oi(f.stack_bytes);
  j["local_bytes"] = oi(f.local_bytes);
  j["spill_store_bytes"] = oi(f.spill_store_bytes);
  j["spill_load_bytes"] = oi(f.spill_load_bytes);
  j["num_warps"] = oi(f.num_warps);
  j["num_stages"] = oi(f.num_stages);
  j["compile_seconds"] = oi(f.compile_seconds);
  j["sass_missing"] = f.sass_missing.empty() ? json(nullptr) : json(f.sass_missing);
  if (f.instructions) {
    const auto& i = *f.instructions;
    json loads = json::object(), stores = json::object();
    for (const auto& [w, c] : i.global_loads) loads[std::to_string(w)] = c;
    for (const auto& [w, c] : i.global_stores) stores[std::to_string(w)] = c;
    int max_load = i.global_loads.empty() ? 0 : i.global_loads.rbegin()->first;
    int max_store = i.global_stores.empty() ? 0 : i.global_stores.rbegin()->first;
    j["instructions"] = {{"from", i.from},
                         {"tensor_core", i.tensor_core},
                         {"mma_shapes", i.mma_shapes},
                         {"mma", i.mma},
                         {"fma", i.fma},
                         {"global_load_bits", loads},
                         {"global_store_bits", stores},
                         {"widest_global_load_bits", max_load ? json(max_load) : json(nullptr)},
                         {"widest_global_store_bits", max_store ? json(max_store) : json(nullptr)},
                         {"atomics", i.atomics},
                         {"cp_async", i.cp_async},
                         {"tma_loads", i.tma_loads},
                         {"tma_stores", i.tma_stores},
                         {"local_loads", i.local_loads},
                         {"local_stores", i.local_stores},
                         {"shared_loads", i.shared_loads},
                         {"ldmatrix", i.ldmatrix},
                         {"count", i.instructions}};
  } else {
    j["instructions"] = nullptr;
  }
  j["notes"] = f.notes;
  return j;
}

}  // namespace tf
