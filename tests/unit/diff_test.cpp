#include <gtest/gtest.h>

#include "report/diff.h"

namespace tf {
namespace {

TEST(UnifiedDiff, EqualTextsGiveNothing) { EXPECT_EQ(unifiedDiff("a\nb\n", "a\nb\n", "x", "x"), ""); }

TEST(UnifiedDiff, OneChangedLineWithContext) {
  std::string a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string b = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  EXPECT_EQ(unifiedDiff(a, b, "f.py", "f.py"),
            "--- a/f.py\n+++ b/f.py\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, SeparateHunksAndInsertions) {
  std::string a = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n";
  std::string b = "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n";
  EXPECT_EQ(unifiedDiff(a, b, "t", "t"),
            "--- a/t\n+++ b/t\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n@@ -10,3 +10,4 @@\n j\n k\n l\n+m\n");
}

}  // namespace
}  // namespace tf
