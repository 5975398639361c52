#include "diagnose/static_facts.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string_view>

#include "compile/asm_facts.h"

namespace tf {
namespace {

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

// "tensor<64x32xf32, #..." or "memdesc<128x64xf16, #..." -> "f32" / "f16".
std::string elementTypeAfter(std::string_view s, size_t from) {
  size_t lt = s.find('<', from);
  if (lt == std::string_view::npos) return "";
  size_t end = s.find_first_of(",>", lt);
  if (end == std::string_view::npos) return "";
  std::string_view shape = s.substr(lt + 1, end - lt - 1);
  size_t x = shape.rfind('x');
  return x == std::string_view::npos ? std::string(shape) : std::string(shape.substr(x + 1));
}

void readTtgir(std::string_view text, StaticFacts& f) {
  f.dots = 0;
  for (auto line : splitLines(text)) {
    size_t eq = line.find("= ");
    if (eq == std::string_view::npos) continue;
    std::string_view rhs = line.substr(eq + 2);
    bool wgmma = rhs.rfind("ttng.warp_group_dot ", 0) == 0 || rhs.rfind("triton_nvidia_gpu.warp_group_dot ", 0) == 0;
    bool dot = rhs.rfind("tt.dot ", 0) == 0 || rhs.rfind("tt.dot_scaled ", 0) == 0;
    if (!wgmma && !dot) continue;
    ++f.dots;
    size_t colon = rhs.find(" : ");
    if (colon != std::string_view::npos) {
      std::string ty = elementTypeAfter(rhs, colon);
      if (!ty.empty()) f.dot_operand_types.push_back(ty);
    }
    size_t prec = rhs.find("inputPrecision = ");
    if (prec != std::string_view::npos) {
      std::string_view v = rhs.substr(prec + 17);
      size_t end = v.find_first_of(" ,}:");
      std::string p(v.substr(0, end));
      // warp_group_dot prints the enum's number (0 tf32, 1 tf32x3, 2 ieee).
      if (p == "0") p = "tf32";
      else if (p == "1") p = "tf32x3";
      else if (p == "2") p = "ieee";
      f.dot_input_precisions.push_back(p);
    }
    if (wgmma) {
      ++f.dots_on_tensor_cores;
      continue;
    }
    size_t arrow = rhs.find("->");
    if (arrow == std::string_view::npos) continue;
    size_t hash = rhs.find('#', arrow);
    if (hash == std::string_view::npos) continue;
    std::string_view enc = rhs.substr(hash + 1);
    if (enc.rfind("mma", 0) == 0) ++f.dots_on_tensor_cores;
    else if (enc.rfind("blocked", 0) == 0) ++f.dots_on_fma;
  }
}

// PTX: matrix instructions, their input types, global load widths.
void readPtx(std::string_view text, StaticFacts& f) {
  InstructionFacts i = factsFromPtx(text);
  f.mma_instructions = i.mma;
  f.mma_kind = i.tensor_core == "wgmma" ? "wgmma" : i.tensor_core == "mma" ? "mma.sync" : "";
  std::set<std::string> types(i.mma_input_types.begin(), i.mma_input_types.end());
  f.mma_input_types.assign(types.begin(), types.end());
  for (const auto& [bits, n] : i.global_loads) {
    if (bits > 0) f.global_loads_by_bits[bits] += n;
  }
}

// SASS: local memory (spills); matrix instructions and load widths when there is no PTX.
void readSass(std::string_view text, StaticFacts& f, bool have_ptx) {
  InstructionFacts i = factsFromSass(text);
  f.local_loads = i.local_loads;
  f.local_stores = i.local_stores;
  if (!have_ptx) {
    f.mma_instructions = i.mma;
    f.global_loads_by_bits = i.global_loads;
  }
}

}  // namespace

CompiledTexts CompiledTexts::fromJson(const nlohmann::json& j) {
  CompiledTexts t;
  if (!j.is_object()) return t;
  t.ttgir = j.value("ttgir", std::string());
  t.ptx = j.value("ptx", std::string());
  t.sass = j.value("sass", std::string());
  return t;
}

bool StaticFacts::dotOnFma() const {
  if (dots > 0 && dots_on_fma > 0) return true;
  // No TTGIR verdict: dots in TTGIR but no matrix instruction anywhere.
  return dots > 0 && dots_on_tensor_cores == 0 && mma_instructions == 0;
}

int StaticFacts::dominantLoadBits() const {
  int best = 0, count = 0;
  for (const auto& [bits, n] : global_loads_by_bits) {
    if (n > count) {
      best = bits;
      count = n;
    }
  }
  return best;
}

nlohmann::json StaticFacts::toJson() const {
  nlohmann::json j = {{"sources", sources}};
  if (dots >= 0) {
    j["dots"] = dots;
    j["dots_on_tensor_cores"] = dots_on_tensor_cores;
    j["dots_on_fma"] = dots_on_fma;
    if (!dot_operand_types.empty()) j["dot_operand_types"] = dot_operand_types;
    if (!dot_input_precisions.empty()) j["dot_input_precisions"] = dot_input_precisions;
  }
  if (mma_instructions >= 0) {
    j["mma_instructions"] = mma_instructions;
    if (!mma_kind.empty()) j["mma_kind"] = mma_kind;
    if (!mma_input_types.empty()) j["mma_input_types"] = mma_input_types;
  }
  if (!global_loads_by_bits.empty()) {
    nlohmann::json loads = nlohmann::json::object();
    for (const auto& [bits, n] : global_loads_by_bits) loads[std::to_string(bits)] = n;
    j["global_loads_by_bits"] = loads;
  }
  if (local_loads >= 0) {
    j["local_loads"] = local_loads;
    j["local_stores"] = local_stores;
  }
  return j;
}

StaticFacts staticFactsFromTexts(const CompiledTexts& texts) {
  StaticFacts f;
  if (!texts.ttgir.empty()) {
    f.sources.push_back("ttgir");
    readTtgir(texts.ttgir, f);
  }
  if (!texts.ptx.empty()) {
    f.sources.push_back("ptx");
    readPtx(texts.ptx, f);
  }
  if (!texts.sass.empty()) {
    f.sources.push_back("sass");
    readSass(texts.sass, f, !texts.ptx.empty());
  }
  return f;
}

std::string computeClassOf(const StaticFacts& facts) {
  if (facts.mma_instructions > 0) {
    const auto& t = facts.mma_input_types;
    auto has = [&](const char* s) { return std::find(t.begin(), t.end(), s) != t.end(); };
    if (has("e4m3") || has("e5m2")) return "fp8";
    if (has("s8") || has("u8") || has("s4") || has("u4")) return "int8";
    if (has("bf16")) return "bf16";
    if (has("f16")) return "fp16";
    if (has("tf32")) return "tf32";
    return "fp16";
  }
  if (facts.dots_on_tensor_cores > 0) {
    const auto& t = facts.dot_operand_types;
    for (const auto& type : t) {
      if (type.rfind("f8", 0) == 0) return "fp8";  // f8E4M3FN, f8E5M2
      if (type == "i8" || type == "i4") return "int8";
    }
    if (std::find(t.begin(), t.end(), "bf16") != t.end()) return "bf16";
    if (std::find(t.begin(), t.end(), "f32") != t.end()) return "tf32";
    return "fp16";
  }
  return "fp32";
}

}  // namespace tf
