// The one reader of compiled machine code: PTX (Triton's output) and SASS (cuobjdump or
// nvdisasm of the cubin), to the instructions that matter for performance: which
// tensor-core instructions a dot became (wgmma / HGMMA, mma / HMMA, or plain FMA) and their
// input types, the widths of global loads and stores, asynchronous copies (cp.async /
// LDGSTS, TMA), atomics, local-memory traffic (spills). Static counts, not executed ones.
// The compiled facts of `analyze` and the static facts of the diagnosis both read through it.
//
// Entry points: factsFromPtx, factsFromSass.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tf {

struct InstructionFacts {
  std::string from;                       // "sass" or "ptx"
  std::string tensor_core;                // "wgmma", "mma", "none"
  std::vector<std::string> mma_shapes;    // distinct shapes ("m64n128k16.f32.f16.f16", "HGMMA.64x128x16.F32")
  std::vector<std::string> mma_input_types;  // A's type of each distinct matrix instruction ("f16", "tf32", "e4m3"); PTX only
  int mma = 0;                            // tensor-core instructions (static count)
  int fma = 0;                            // scalar fp32 FMA instructions
  std::map<int, int> global_loads;        // width in bits -> static count
  std::map<int, int> global_stores;
  int atomics = 0;
  int cp_async = 0;                       // cp.async (LDGSTS)
  int tma_loads = 0, tma_stores = 0;      // cp.async.bulk.tensor (UTMALDG / UTMASTG)
  int local_loads = 0, local_stores = 0;  // ld.local / st.local (LDL / STL)
  int shared_loads = 0, ldmatrix = 0;
  int instructions = 0;
};

InstructionFacts factsFromPtx(std::string_view ptx);
InstructionFacts factsFromSass(std::string_view sass);

}  // namespace tf
