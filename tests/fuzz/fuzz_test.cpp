// Fuzzing of the loaders of untrusted input (issue 11; README.md beside this file): every
// input ends in a value or one clear UserError, never another exception, a crash, a hang or
// a sanitizer report.
//
// For each target: the found cases (every input that once failed) and the seeds replay
// first; then seeded mutations run for TRITONFORGE_FUZZ_SECONDS (15 by default).
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "fuzz/campaign.h"
#include "fuzz/targets.h"
#include "store/results_db.h"
#include "support/test_support.h"
#include "util/error.h"

namespace tf::fuzz {
namespace {

namespace fs = std::filesystem;

// A fixed seed per target: the same inputs in the same order on every run.
uint64_t defaultSeed(const std::string& name) { return 20261201 + std::hash<std::string>{}(name) % 1000; }

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "\n  " + l;
  return out;
}

class Fuzz : public ::testing::TestWithParam<std::string> {
 protected:
  CampaignResult campaign(double seconds) {
    auto target = makeTarget(GetParam(), test::tempDir("fuzz-" + GetParam()));
    EXPECT_NE(target, nullptr);
    CampaignOptions o = CampaignOptions::fromEnvironment(*target, defaultSeed(GetParam()));
    if (seconds >= 0) o.seconds = seconds;
    return runCampaign(*target, o);
  }
};

// The seeds are valid inputs, and every input that once failed now ends well.
TEST_P(Fuzz, SeedsLoadAndFoundCasesEndInAValueOrOneError) {
  CampaignResult r = campaign(0);
  EXPECT_GE(r.seeds, 3u) << "tests/data/fuzz/" << GetParam() << "/seeds/ must hold the seeds";
  EXPECT_EQ(r.seed_values, r.seeds) << "seeds that do not load:" << joined(r.bad_seeds);
  EXPECT_TRUE(r.bugs.empty()) << "found cases that fail again:" << joined(r.bugs);
  EXPECT_EQ(r.mutated, 0u);
}

TEST_P(Fuzz, MutatedInputsEndInAValueOrOneError) {
  CampaignResult r = campaign(-1);
  EXPECT_TRUE(r.bugs.empty()) << "failing inputs (saved; the README says how to replay them):" << joined(r.bugs);
  // The campaign did work, and reached both outcomes (the worker's replies never throw).
  EXPECT_GE(r.mutated, 100u);
  EXPECT_GT(r.values, 0u);
  if (GetParam() != "worker") {
    EXPECT_GT(r.errors, 0u);
  }
  EXPECT_GE(r.signatures, 5u) << r.summary();
}

INSTANTIATE_TEST_SUITE_P(Targets, Fuzz, ::testing::ValuesIn(kTargetNames),
                         [](const auto& info) { return info.param; });

// The seeds of results_db are what the code makes today: a fresh one lists the same. With
// TRITONFORGE_FUZZ_WRITE_SEEDS=1 the fresh ones replace them. The schema-2 seeds were made by
// the code of that schema (before tool_commit) and stay, as files to migrate.
TEST(FuzzSeeds, ResultsDbSeedsAreDatabasesTheCodeMakes) {
  struct Kind {
    SeedDb kind;
    const char* file;
    int schema;
    size_t runs, rows;
  };
  const Kind kinds[] = {{SeedDb::kCurrent, "schema3.sqlite", kResultsDbSchema, 2, 3},
                        {SeedDb::kCurrentSmall, "schema3_512b_pages.sqlite", kResultsDbSchema, 2, 3},
                        {SeedDb::kSchema1, "schema1.sqlite", 1, 1, 1}};
  fs::path seeds = test::sourceDir() / "tests/data/fuzz/results_db/seeds";
  fs::path dir = test::tempDir("fuzz-seeds");
  const char* write = std::getenv("TRITONFORGE_FUZZ_WRITE_SEEDS");
  for (const auto& k : kinds) {
    fs::path fresh = dir / k.file;
    makeSeedDatabase(fresh, k.kind);
    if (write && std::string(write) == "1") fs::copy_file(fresh, seeds / k.file, fs::copy_options::overwrite_existing);
    for (const fs::path& p : {fresh, seeds / k.file}) {
      SCOPED_TRACE(p.string());
      auto db = ResultsDb::open(p, DbAccess::kReadOnly);
      EXPECT_EQ(db->schema(), k.schema);
      EXPECT_EQ(db->runs().size(), k.runs);
      EXPECT_EQ(db->measurementsOfRun(0).size(), k.rows);
      EXPECT_FALSE(db->trace(1).empty());
    }
  }
  for (const char* file : {"schema2.sqlite", "schema2_512b_pages.sqlite"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(ResultsDb::open(seeds / file, DbAccess::kReadOnly)->schema(), 2);
    fs::copy_file(seeds / file, dir / file);
    auto db = ResultsDb::open(dir / file);
    EXPECT_EQ(db->schema(), kResultsDbSchema);
    EXPECT_EQ(db->runs().size(), 2u);
    EXPECT_EQ(db->measurementsOfRun(0).size(), 3u);
    EXPECT_EQ(db->runs()[0].tool_commit, "");
  }
}

// The oracle itself: what counts as one clear error, and what as a bug.
TEST(FuzzOracle, SortsOutcomes) {
  auto ok = classify("/t/f", [] { return std::string(); });
  EXPECT_EQ(ok.kind, Verdict::Kind::kValue);
  auto one = classify("/t/f", []() -> std::string { throw UserError("/t/f: missing key 'name'"); });
  EXPECT_EQ(one.kind, Verdict::Kind::kError);
  EXPECT_EQ(one.signature, "error: <file>: missing key ''");
  auto quoted = classify("/t/f", []() -> std::string { throw UserError("/t/f: unknown key 'a'b' (known: x)"); });
  EXPECT_EQ(quoted.signature, "error: <file>: unknown key '' (known: x)");
  auto spaced = classify("/t/f", []() -> std::string {
    throw UserError("/t/f: not a CSV (line 3 has no columns: '==PROF== Connected \"x to pro')");
  });
  EXPECT_EQ(spaced.signature, "error: <file>: not a CSV (line # has no columns: ''");
  auto two = classify("/t/f", []() -> std::string { throw UserError("/t/f: unknown key 'a\nb'"); });
  EXPECT_EQ(two.kind, Verdict::Kind::kBug);
  auto unnamed = classify("/t/f", []() -> std::string { throw UserError("missing key 'name'"); });
  EXPECT_EQ(unnamed.kind, Verdict::Kind::kBug);
  auto other = classify("/t/f", []() -> std::string { throw std::out_of_range("stoi"); });
  EXPECT_EQ(other.kind, Verdict::Kind::kBug);
  EXPECT_EQ(other.what, "threw std::out_of_range: stoi");
  auto bad_value = classify("/t/f", [] { return std::string("no rows"); });
  EXPECT_EQ(bad_value.kind, Verdict::Kind::kBug);
  auto no_error_allowed = classify("", []() -> std::string { throw UserError("x: y"); });
  EXPECT_EQ(no_error_allowed.kind, Verdict::Kind::kBug);
}

// The mutations are a function of the seed alone.
TEST(FuzzMutator, TheSameSeedGivesTheSameInputs) {
  MutationSpace space;
  space.dictionary = {"name", "="};
  std::string base = "name = \"t\"\ncases = [ { M = 4096 } ]\n";
  std::string other = "x = 1\n";
  std::vector<const std::string*> others = {&other};
  Rng a(7), b(7), c(8);
  std::vector<std::string> ia, ib, ic;
  for (int i = 0; i < 200; ++i) {
    ia.push_back(mutate(base, others, space, a));
    ib.push_back(mutate(base, others, space, b));
    ic.push_back(mutate(base, others, space, c));
  }
  EXPECT_EQ(ia, ib);
  EXPECT_NE(ia, ic);
  size_t changed = 0;
  for (const auto& s : ia) changed += s != base;
  EXPECT_GT(changed, 150u);
  for (const auto& s : ia) EXPECT_LE(s.size(), space.max_size);
}

// A target that hangs or crashes on every input but the empty one: the harness must save
// the input and end the process with a message, so that the failure can be replayed.
class BrokenTarget : public FuzzTarget {
 public:
  explicit BrokenTarget(bool hang) : hang_(hang) {}
  std::string name() const override { return "broken"; }
  std::string suffix() const override { return ".txt"; }
  MutationSpace space() override { return MutationSpace{{"!"}, 64}; }
  Verdict run(const std::string& input) override {
    if (input.empty()) return {};
    if (hang_) {
      while (true) ::pause();
    }
    ::raise(SIGSEGV);
    return {};
  }

 private:
  bool hang_;
};

size_t savedFiles(const fs::path& dir, const std::string& prefix) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) n += e.path().filename().string().rfind(prefix, 0) == 0;
  return n;
}

void runBroken(bool hang, const fs::path& save) {
  BrokenTarget t(hang);
  CampaignOptions o;
  o.seconds = 10;
  o.hang_seconds = 0.3;
  o.save_dir = save;
  o.data_dir = save / "no-data";
  runCampaign(t, o);
}

TEST(FuzzHarnessDeathTest, AHangIsSavedAndEndsTheProcess) {
  fs::path save = test::tempDir("fuzz-hang");
  EXPECT_EXIT(runBroken(true, save), ::testing::ExitedWithCode(3), "runs for more than 0.3 s: a hang; saved to");
  EXPECT_EQ(savedFiles(save, "hang-"), 1u);
}

TEST(FuzzHarnessDeathTest, ACrashIsSavedBeforeTheProcessDies) {
  fs::path save = test::tempDir("fuzz-crash");
  EXPECT_DEATH(runBroken(false, save), "the input that crashed the process was saved to");
  EXPECT_EQ(savedFiles(save, "crash-"), 1u);
}

}  // namespace
}  // namespace tf::fuzz
