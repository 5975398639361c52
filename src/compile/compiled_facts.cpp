#include "compile/compiled_facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace tf {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

bool startsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

void addShape(InstructionFacts& f, const std::string& shape) {
  if (std::find(f.mma_shapes.begin(), f.mma_shapes.end(), shape) == f.mma_shapes.end()) f.mma_shapes.push_back(shape);
}

// Width in bits of a PTX memory instruction: ".v4" x ".b32" -> 128.
int ptxWidth(const std::vector<std::string>& parts) {
  int vec = 1, bits = 0;
  for (const auto& p : parts) {
    if (p == "v2") vec = 2;
    else if (p == "v4") vec = 4;
    else if (p == "v8") vec = 8;
    else if (p.size() >= 2 && (p[0] == 'b' || p[0] == 'u' || p[0] == 's' || p[0] == 'f') &&
             std::all_of(p.begin() + 1, p.end(), ::isdigit)) {
      bits = std::stoi(p.substr(1));
    }
  }
  return vec * bits;
}

}  // namespace

InstructionFacts factsFromPtx(const std::string& ptx) {
  InstructionFacts f;
  f.from = "ptx";
  std::istringstream in(ptx);
  std::string line;
  while (std::getline(in, line)) {
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos) continue;
    std::string s = line.substr(i);
    if (s[0] == '@') {
      size_t sp = s.find_first_of(" \t");
      if (sp == std::string::npos) continue;
      s = s.substr(s.find_first_not_of(" \t", sp));
    }
    if (s.empty() || s[0] == '.' || s[0] == '/' || s[0] == '{' || s[0] == '}' || s[0] == '$') continue;
    std::string op = s.substr(0, s.find_first_of(" \t;"));
    if (op.empty() || !std::islower(static_cast<unsigned char>(op[0]))) continue;
    ++f.instructions;
    auto parts = split(op, '.');
    if (startsWith(op, "wgmma.mma_async")) {
      ++f.mma;
      f.tensor_core = "wgmma";
      // wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
      std::string shape;
      for (size_t k = 4; k < parts.size(); ++k) shape += (shape.empty() ? "" : ".") + parts[k];
      addShape(f, shape);
    } else if (startsWith(op, "mma.sync")) {
      ++f.mma;
      if (f.tensor_core != "wgmma") f.tensor_core = "mma";
      std::string shape;
      for (size_t k = 3; k < parts.size(); ++k) shape += (shape.empty() ? "" : ".") + parts[k];
      addShape(f, shape);
    } else if (startsWith(op, "fma.") && (op.find(".f32") != std::string::npos)) {
      ++f.fma;
    } else if (startsWith(op, "ld.global")) {
      ++f.global_loads[ptxWidth(parts)];
    } else if (startsWith(op, "st.global")) {
      ++f.global_stores[ptxWidth(parts)];
    } else if (startsWith(op, "atom.global") || startsWith(op, "red.global") || op == "atom" || op == "red") {
      ++f.atomics;
    } else if (startsWith(op, "cp.async.bulk.tensor")) {
      if (op.find(".global.shared") != std::string::npos) ++f.tma_stores;
      else ++f.tma_loads;
    } else if (startsWith(op, "cp.async.cg") || startsWith(op, "cp.async.ca")) {
      ++f.cp_async;
    } else if (startsWith(op, "ld.local")) {
      ++f.local_loads;
    } else if (startsWith(op, "st.local")) {
      ++f.local_stores;
    } else if (startsWith(op, "ld.shared")) {
      ++f.shared_loads;
    } else if (startsWith(op, "ldmatrix")) {
      ++f.ldmatrix;
    }
  }
  if (f.tensor_core.empty()) f.tensor_core = "none";
  return f;
}

InstructionFacts factsFromSass(const std::string& sass) {
  InstructionFacts f;
  f.from = "sass";
  std::istringstream in(sass);
  std::string line;
  while (std::getline(in, line)) {
    // "        /*0a40*/                   @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;"
    size_t a = line.find("/*");
    if (a == std::string::npos) continue;
    size_t b = line.find("*/", a);
    if (b == std::string::npos || b - a < 4) continue;
    std::string addr = line.substr(a + 2, b - a - 2);
    if (!std::all_of(addr.begin(), addr.end(), ::isxdigit)) continue;
    std::istringstream toks(line.substr(b + 2));
    std::string op;
    toks >> op;
    if (!op.empty() && op[0] == '@') toks >> op;
    if (op.empty() || !std::isupper(static_cast<unsigned char>(op[0]))) continue;
    ++f.instructions;
    auto parts = split(op, '.');
    const std::string& base = parts[0];
    if (base == "HGMMA") {
      ++f.mma;
      f.tensor_core = "wgmma";
      addShape(f, op);
    } else if (base == "HMMA" || base == "IMMA" || base == "QGMMA" || base == "IGMMA") {
      ++f.mma;
      if (base == "QGMMA" || base == "IGMMA") f.tensor_core = "wgmma";
      else if (f.tensor_core != "wgmma") f.tensor_core = "mma";
      addShape(f, op);
    } else if (base == "FFMA") {
      ++f.fma;
    } else if (base == "LDG" || base == "STG") {
      int bits = 32;
      for (const auto& p : parts) {
        if (p == "128") bits = 128;
        else if (p == "64") bits = 64;
        else if (p == "U16" || p == "S16") bits = 16;
        else if (p == "U8" || p == "S8") bits = 8;
      }
      ++(base == "LDG" ? f.global_loads : f.global_stores)[bits];
    } else if (base == "RED" || base == "ATOMG" || base == "ATOM" || base == "REDG") {
      ++f.atomics;
    } else if (base == "LDGSTS") {
      ++f.cp_async;
    } else if (base == "UTMALDG") {
      ++f.tma_loads;
    } else if (base == "UTMASTG") {
      ++f.tma_stores;
    } else if (base == "LDL") {
      ++f.local_loads;
    } else if (base == "STL") {
      ++f.local_stores;
    } else if (base == "LDS") {
      ++f.shared_loads;
    } else if (base == "LDSM") {
      ++f.ldmatrix;
    }
  }
  if (f.tensor_core.empty()) f.tensor_core = "none";
  return f;
}

nlohmann::json compileRequest(const std::string& path, const std::string& kernel,
                              const std::vector<std::string>& param_order,
                              const std::map<std::string, std::string>& types,
                              const std::map<std::string, int64_t>& values,
                              const std::vector<std::string>& constexpr_names,
                              const std::map<std::string, int64_t>& options, std::string* missing) {
  nlohmann::json signature = nlohmann::json::object(), constexprs = nlohmann::json::object(),
                 attrs = nlohmann::json::object();
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
  nlohmann::json opts = nlohmann::json::object();
  for (const auto& [k, v] : options) opts[k] = v;
  return {{"path", path},
          {"kernel", kernel},
          {"signature", signature},
          {"constexprs", constexprs},
          {"attrs", attrs},
          {"options", opts},
          {"target", {{"backend", "cuda"}, {"arch", 90}, {"warp_size", 32}}},
          {"want", nlohmann::json::array({"ptx", "sass", "spills"})}};
}

CompiledFacts parseCompiled(bool ok, const nlohmann::json& result, const std::string& message) {
  CompiledFacts f;
  if (!ok) {
    f.status = result.is_object() ? result.value("status", "compile-error") : "compile-error";
    f.reason = message;
    return f;
  }
  f.status = "ok";
  auto optI = [&](const nlohmann::json& j, const char* k) -> std::optional<int> {
    if (j.is_object() && j.contains(k) && j[k].is_number_integer()) return j[k].get<int>();
    return std::nullopt;
  };
  if (result.contains("shared_bytes") && result["shared_bytes"].is_number()) f.shared_bytes = result["shared_bytes"].get<int64_t>();
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
    std::string why = cubin.is_object() && cubin.contains("tool_missing") ? "cuobjdump was not found"
                      : result.value("sass_error", std::string("no SASS in the reply"));
    f.sass_missing = why;
  }
  if (!f.instructions && result.contains("ptx") && result["ptx"].is_string()) {
    f.instructions = factsFromPtx(result["ptx"].get<std::string>());
    f.notes.push_back("instruction facts come from PTX (" + f.sass_missing + ")");
  }
  if (!f.registers) f.notes.push_back("registers per thread unknown (no cubin resource usage)");
  if (result.value("torch_stubbed", false)) f.notes.push_back("torch was missing: a stand-in was used to import the source");
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
