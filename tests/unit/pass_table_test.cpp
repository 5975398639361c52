// The pass table (TF_PASS_TABLE, diagnose/vocabulary.h) and the PassId the loop carries: the
// vocabulary, the registry of passes and the parameter moves all come from the one table; a
// pass named in JSON becomes a typed value once and is written back as the same name.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "diagnose/vocabulary.h"
#include "search/engine.h"
#include "transform/pass.h"
#include "util/error.h"

namespace tf {
namespace {

TEST(PassTable, TheRegistryIsTheTableInItsOrder) {
  const auto& names = allPassNames();
  ASSERT_EQ(allPasses().size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(allPasses()[i]->info().name, toString(names[i])) << i;
  EXPECT_EQ(std::string(toString(names.front())), "retile");
  EXPECT_EQ(std::string(toString(names.back())), "gluon-attention");
  EXPECT_EQ(names.size(), 27u);
}

TEST(PassTable, OnlyRetileLaunchAndAutotuneAreParameterMoves) {
  std::set<std::string> moves;
  for (PassName p : allPassNames()) {
    if (isParameterMove(p)) moves.insert(toString(p));
    EXPECT_EQ(roleOf(p) == PassRole::kParameterMove, isParameterMove(p));
  }
  EXPECT_EQ(moves, (std::set<std::string>{"autotune", "launch", "retile"}));
}

TEST(PassId, ANameBecomesTheVocabularysPassOnce) {
  PassId split("split-k");
  ASSERT_TRUE(split.known());
  EXPECT_EQ(*split.known(), PassName::kSplitK);
  EXPECT_TRUE(split == PassName::kSplitK);
  EXPECT_FALSE(split == PassName::kSplitRows);
  EXPECT_EQ(split, PassId(PassName::kSplitK));
  EXPECT_EQ(split.name(), "split-k");
  EXPECT_FALSE(split.isParameterMove());
  EXPECT_TRUE(PassId(PassName::kRetile).isParameterMove());
  // A pass an applier knows by name alone (a fake in the tests): a name, no vocabulary pass.
  PassId fake("fast-comment");
  EXPECT_FALSE(fake.known());
  EXPECT_FALSE(fake.isParameterMove());
  EXPECT_NE(fake, split);
  EXPECT_EQ(PassId::rewrite().name(), "rewrite");
  EXPECT_FALSE(PassId::rewrite().known());
  EXPECT_TRUE(PassId().empty());
  // Ordered by name, as the strings were (the ledger's sets iterate in that order).
  EXPECT_LT(PassId("column-loop"), PassId("split-k"));
  EXPECT_LT(PassId(PassName::kExp2), PassId(PassName::kRetile));
}

TEST(PassId, JsonAndTextCarryTheName) {
  nlohmann::json j = {{"pass", PassId(PassName::kOnlineSoftmax)},
                      {"passes", std::vector<PassId>{PassName::kExp2, PassId("fast-comment")}}};
  EXPECT_EQ(j.dump(), R"({"pass":"online-softmax","passes":["exp2","fast-comment"]})");
  std::ostringstream os;
  os << PassId(PassName::kTailSplit);
  EXPECT_EQ(os.str(), "tail-split");
}

TEST(PassId, AnEnginesProposalCarriesATypedPassAndWritesTheSameJson) {
  nlohmann::json in = {{"kind", "pass"}, {"pass", "tensor-cores"}, {"kernel", "mm"},
                       {"params", {{"loads", "descriptor"}}}, {"rationale", "why"}};
  Proposal p = Proposal::fromJson(in, "test");
  EXPECT_TRUE(p.pass == PassName::kTensorCores);
  EXPECT_EQ(p.toJson()["pass"], "tensor-cores");
  EXPECT_EQ(p.toJson().dump(), Proposal::fromJson(p.toJson(), "again").toJson().dump());
  // A name outside the vocabulary is still a pass to the loop (the applier decides).
  in["pass"] = "block-pointers";
  Proposal q = Proposal::fromJson(in, "test");
  EXPECT_FALSE(q.pass.known());
  EXPECT_EQ(q.toJson()["pass"], "block-pointers");
  in["pass"] = "";
  EXPECT_THROW(Proposal::fromJson(in, "test"), UserError);
}

}  // namespace
}  // namespace tf
