#include "compile/asm_facts.h"

#include <algorithm>
#include <cctype>
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

bool isTypeName(const std::string& p) {
  static const char* const kTypes[] = {"f16", "bf16", "f32", "f64", "tf32", "e4m3", "e5m2", "e2m1",
                                       "e3m2", "e2m3", "s8",  "u8",  "s4",   "u4",   "b1"};
  for (const char* t : kTypes) {
    if (p == t) return true;
  }
  return false;
}

// "m64n128k16.f32.f16.f16" -> A's type ("f16"): the types after the shape are D's, A's, B's.
void addInputType(InstructionFacts& f, const std::vector<std::string>& parts) {
  std::vector<std::string> types;
  bool after_shape = false;
  for (const auto& part : parts) {
    if (!after_shape) {
      after_shape = part.size() > 1 && part[0] == 'm' && std::isdigit(static_cast<unsigned char>(part[1])) &&
                    part.find('n') != std::string::npos && part.find('k') != std::string::npos;
      continue;
    }
    if (isTypeName(part)) types.push_back(part);
  }
  if (types.size() < 2) return;
  auto& t = f.mma_input_types;
  if (std::find(t.begin(), t.end(), types[1]) == t.end()) t.push_back(types[1]);
}

// Width in bits of a PTX memory instruction: ".v4" x ".b32" -> 128.
int ptxWidth(const std::vector<std::string>& parts) {
  int vec = 1, bits = 0;
  for (const auto& p : parts) {
    if (p == "v2") vec = 2;
    else if (p == "v4") vec = 4;
    else if (p == "v8") vec = 8;
    // At most 3 digits (b8 to b128): a longer run is no PTX type, and stoi would throw.
    else if (p.size() >= 2 && p.size() <= 4 && (p[0] == 'b' || p[0] == 'u' || p[0] == 's' || p[0] == 'f') &&
             std::all_of(p.begin() + 1, p.end(), ::isdigit)) {
      bits = std::stoi(p.substr(1));
    }
  }
  return vec * bits;
}

}  // namespace

InstructionFacts factsFromPtx(std::string_view ptx) {
  InstructionFacts f;
  f.from = "ptx";
  std::istringstream in{std::string(ptx)};
  std::string line;
  while (std::getline(in, line)) {
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos) continue;
    std::string s = line.substr(i);
    if (s[0] == '@') {
      size_t sp = s.find_first_not_of(" \t", s.find_first_of(" \t"));
      if (sp == std::string::npos) continue;  // a predicate and nothing after it
      s = s.substr(sp);
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
      addInputType(f, parts);
    } else if (startsWith(op, "mma.sync")) {
      ++f.mma;
      if (f.tensor_core != "wgmma") f.tensor_core = "mma";
      std::string shape;
      for (size_t k = 3; k < parts.size(); ++k) shape += (shape.empty() ? "" : ".") + parts[k];
      addShape(f, shape);
      addInputType(f, parts);
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

InstructionFacts factsFromSass(std::string_view sass) {
  InstructionFacts f;
  f.from = "sass";
  std::istringstream in{std::string(sass)};
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
    } else if (base == "HMMA" || base == "IMMA" || base == "QGMMA" || base == "IGMMA" || base == "DMMA") {
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

}  // namespace tf
