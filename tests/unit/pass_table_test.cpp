// The pass table (TF_PASS_TABLE, diagnose/vocabulary.h): the vocabulary, the registry of
// passes and the parameter moves all come from the one table.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "diagnose/vocabulary.h"
#include "transform/pass.h"

namespace tf {
namespace {

TEST(PassTable, TheRegistryIsTheTableInItsOrder) {
  const auto& names = allPassNames();
  ASSERT_EQ(allPasses().size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(allPasses()[i]->info().name, toString(names[i])) << i;
  EXPECT_EQ(std::string(toString(names.front())), "retile");
  EXPECT_EQ(std::string(toString(names.back())), "split-rows");
  EXPECT_EQ(names.size(), 20u);
}

TEST(PassTable, OnlyRetileLaunchAndAutotuneAreParameterMoves) {
  std::set<std::string> moves;
  for (PassName p : allPassNames()) {
    if (isParameterMove(p)) moves.insert(toString(p));
    EXPECT_EQ(roleOf(p) == PassRole::kParameterMove, isParameterMove(p));
  }
  EXPECT_EQ(moves, (std::set<std::string>{"autotune", "launch", "retile"}));
}

}  // namespace
}  // namespace tf
