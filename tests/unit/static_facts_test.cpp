// Static facts read from compiled texts: the texts in tests/data/asm/ were compiled ahead of
// time for sm_90 by Triton 3.6 (tests/data/asm/generate.py), so they are what a real
// compilation gives.
#include <gtest/gtest.h>

#include "diagnose/static_facts.h"
#include "support/test_support.h"

namespace tf {
namespace {

CompiledTexts texts(const std::string& name, bool ttgir, bool ptx, bool sass) {
  auto dir = test::sourceDir() / "tests/data/asm";
  CompiledTexts t;
  if (ttgir) t.ttgir = test::readFile(dir / (name + ".ttgir"));
  if (ptx) t.ptx = test::readFile(dir / (name + ".ptx"));
  if (sass) t.sass = test::readFile(dir / (name + ".sass"));
  return t;
}

TEST(StaticFacts, Fp16DotBecomesWgmma) {
  StaticFacts f = staticFactsFromTexts(texts("dot_f16_wgmma", true, true, false));
  EXPECT_EQ(f.sources, (std::vector<std::string>{"ttgir", "ptx"}));
  EXPECT_EQ(f.dots, 1);
  EXPECT_EQ(f.dots_on_tensor_cores, 1);
  EXPECT_EQ(f.dots_on_fma, 0);
  EXPECT_EQ(f.dot_operand_types, std::vector<std::string>{"f16"});
  EXPECT_EQ(f.mma_instructions, 8);
  EXPECT_EQ(f.mma_kind, "wgmma");
  EXPECT_EQ(f.mma_input_types, std::vector<std::string>{"f16"});
  EXPECT_FALSE(f.dotOnFma());
  EXPECT_EQ(computeClassOf(f), "fp16");
}

TEST(StaticFacts, SmallFp16DotBecomesMmaSync) {
  StaticFacts f = staticFactsFromTexts(texts("dot_f16_mma", true, true, false));
  EXPECT_EQ(f.dots_on_tensor_cores, 1);
  EXPECT_EQ(f.dot_input_precisions, std::vector<std::string>{"tf32"});
  EXPECT_EQ(f.mma_instructions, 1);
  EXPECT_EQ(f.mma_kind, "mma.sync");
  EXPECT_EQ(f.mma_input_types, std::vector<std::string>{"f16"});
  EXPECT_FALSE(f.dotOnFma());
}

TEST(StaticFacts, Fp32IeeeDotBecomesFma) {
  StaticFacts f = staticFactsFromTexts(texts("dot_f32_ieee", true, true, false));
  EXPECT_EQ(f.dots, 1);
  EXPECT_EQ(f.dots_on_fma, 1);
  EXPECT_EQ(f.dots_on_tensor_cores, 0);
  EXPECT_EQ(f.dot_operand_types, std::vector<std::string>{"f32"});
  EXPECT_EQ(f.mma_instructions, 0);
  EXPECT_TRUE(f.dotOnFma());
  EXPECT_EQ(computeClassOf(f), "fp32");
  // The PTX alone (no TTGIR) cannot tell a dot from no dot.
  StaticFacts ptx_only = staticFactsFromTexts(texts("dot_f32_ieee", false, true, false));
  EXPECT_FALSE(ptx_only.dotOnFma());
  // The TTGIR alone says it.
  EXPECT_TRUE(staticFactsFromTexts(texts("dot_f32_ieee", true, false, false)).dotOnFma());
}

TEST(StaticFacts, Fp32Tf32DotUsesTensorCores) {
  StaticFacts f = staticFactsFromTexts(texts("dot_f32_tf32", true, true, false));
  EXPECT_EQ(f.dots_on_tensor_cores, 1);
  EXPECT_EQ(f.dot_input_precisions, std::vector<std::string>{"tf32"});  // warp_group_dot's enum 0
  EXPECT_EQ(f.mma_input_types, std::vector<std::string>{"tf32"});
  EXPECT_EQ(computeClassOf(f), "tf32");
}

TEST(StaticFacts, SpillsAreLocalLoadsAndStoresInTheSass) {
  StaticFacts f = staticFactsFromTexts(texts("softmax_spills", false, false, true));
  EXPECT_EQ(f.sources, std::vector<std::string>{"sass"});
  EXPECT_EQ(f.local_loads, 52);
  EXPECT_EQ(f.local_stores, 41);
  EXPECT_EQ(f.mma_instructions, 0);   // SASS stands in for PTX here
  EXPECT_EQ(f.dots, -1);              // no TTGIR: unknown
  EXPECT_FALSE(f.hasDotInfo() && f.dotOnFma());
  EXPECT_EQ(f.dominantLoadBits(), 32);
}

TEST(StaticFacts, LoadWidthsFromPtxAndSass) {
  StaticFacts f = staticFactsFromTexts(texts("add_vec128", false, true, true));
  EXPECT_EQ(f.global_loads_by_bits, (std::map<int, int>{{128, 4}}));
  EXPECT_EQ(f.dominantLoadBits(), 128);
  EXPECT_EQ(f.local_loads, 0);
  StaticFacts sass = staticFactsFromTexts(texts("add_vec128", false, false, true));
  EXPECT_EQ(sass.global_loads_by_bits, (std::map<int, int>{{128, 4}}));
}

TEST(StaticFacts, EmptyTextsGiveNothing) {
  StaticFacts f = staticFactsFromTexts(CompiledTexts{});
  EXPECT_TRUE(f.sources.empty());
  EXPECT_FALSE(f.hasDotInfo());
  EXPECT_EQ(f.dominantLoadBits(), 0);
  EXPECT_EQ(computeClassOf(f), "fp32");
  EXPECT_EQ(f.toJson(), (nlohmann::json{{"sources", nlohmann::json::array()}}));
}

TEST(StaticFacts, Int8AndFp8DotsAreTheirOwnComputeClass) {
  // The roofline of an int8 or fp8 GEMM is their own rate (twice fp16's on Hopper), not fp16's.
  StaticFacts wgmma;
  wgmma.mma_instructions = 8;
  wgmma.mma_input_types = {"s8"};
  EXPECT_EQ(computeClassOf(wgmma), "int8");
  wgmma.mma_input_types = {"e4m3"};
  EXPECT_EQ(computeClassOf(wgmma), "fp8");
  StaticFacts ttgir_only;
  ttgir_only.dots_on_tensor_cores = 1;
  ttgir_only.dot_operand_types = {"i8"};
  EXPECT_EQ(computeClassOf(ttgir_only), "int8");
  ttgir_only.dot_operand_types = {"f8E4M3FN"};
  EXPECT_EQ(computeClassOf(ttgir_only), "fp8");
}

}  // namespace
}  // namespace tf
