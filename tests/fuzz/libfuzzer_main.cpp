// libFuzzer entry point of one target (TF_FUZZ_TARGET), for coverage-guided runs with
// sanitizers; README.md beside this file says how to build and run it. A bug (the target's
// verdict, or a sanitizer report) aborts, so that libFuzzer saves the input.
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "fuzz/targets.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

tf::fuzz::FuzzTarget& target() {
  static std::unique_ptr<tf::fuzz::FuzzTarget> t = [] {
    char tmpl[] = "/tmp/tf_libfuzzer_XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    return tf::fuzz::makeTarget(TF_FUZZ_TARGET, tmpl);
  }();
  return *t;
}

const tf::fuzz::MutationSpace& space() {
  static tf::fuzz::MutationSpace s = target().space();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  tf::fuzz::Verdict v = target().run(input);
  if (v.kind == tf::fuzz::Verdict::Kind::kBug) {
    std::fprintf(stderr, "fuzz %s: %s\n", TF_FUZZ_TARGET, v.what.c_str());
    std::abort();
  }
  return 0;
}

// Half of the mutations are libFuzzer's own, half the harness's (the format's dictionary,
// numbers at the edges, SQL edits of a database).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  tf::fuzz::Rng rng(seed);
  if (rng.oneIn(2)) return LLVMFuzzerMutate(data, size, max_size);
  tf::fuzz::MutationSpace s = space();
  s.max_size = std::min(s.max_size, max_size);
  std::string out = tf::fuzz::mutate(std::string(reinterpret_cast<const char*>(data), size), {}, s, rng);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
