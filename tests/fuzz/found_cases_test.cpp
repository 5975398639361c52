// What the code now makes of the inputs the fuzz harness found (tests/data/fuzz/*/found/),
// value by value: the replay in fuzz_test.cpp checks only that each ends in a value or one
// clear error.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "compile/asm_facts.h"
#include "compile/compiled_facts.h"
#include "measure/ncu_csv.h"
#include "measure/ncu_metrics.h"
#include "store/results_db.h"
#include "support/test_support.h"
#include "task/task.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/text.h"
#include "worker/measurement.h"
#include "worker/protocol.h"
#include "worker/target.h"
#include "worker/worker_client.h"

namespace tf {
namespace {

namespace fs = std::filesystem;

const std::string kReplacement = "\xEF\xBF\xBD";

WorkerReply replyOf(const std::string& line) {
  ReplyLine r = parseReplyLine(line, 7);
  EXPECT_EQ(r.kind, ReplyLine::Kind::kReply) << line;
  return r.reply;
}

TEST(FoundWorkerReplies, FieldsOfTheWrongTypeCountAsAbsent) {
  WorkerReply ok_null = replyOf(R"({"v": 1, "id": 7, "ok": null, "result": {"protocol": 1}})");
  EXPECT_EQ(ok_null.status, WorkerReply::Status::kFailed);
  EXPECT_EQ(ok_null.error_type, "Error");
  EXPECT_EQ(ok_null.message, "unknown error");

  ReplyLine fatal = parseReplyLine(R"({"v": 1, "id": 7, "ok": false, "error": {"type": 7, "message": ["x"], "fatal": 1}})", 7);
  EXPECT_FALSE(fatal.fatal);
  EXPECT_EQ(fatal.reply.error_type, "Error");
  EXPECT_EQ(fatal.reply.message, "unknown error");
  EXPECT_TRUE(parseReplyLine(R"({"id": 7, "ok": false, "error": {"fatal": true}})", 7).fatal);

  EXPECT_EQ(parseReplyLine(R"({"id": 6, "ok": true})", 7).kind, ReplyLine::Kind::kOtherId);
  EXPECT_EQ(parseReplyLine("[1, 2]", 7).kind, ReplyLine::Kind::kGarbage);
}

TEST(FoundWorkerReplies, MessagesAreOneLineOfValidUtf8) {
  WorkerReply two = replyOf(R"({"id": 7, "ok": false, "error": {"type": "TaskEr\n  File", "message": "a\r\nb"}})");
  EXPECT_EQ(two.error_type, "TaskEr");
  EXPECT_EQ(two.message, "a\\r");

  std::string euros;
  for (int i = 0; i < 400; ++i) euros += "\\u20ac";
  WorkerReply cut = replyOf(R"({"id": 7, "ok": false, "error": {"message": ")" + euros + "\"}}");
  // 333 characters of 3 bytes fit in 1000 bytes, then "...".
  EXPECT_EQ(cut.message.size(), 999u + 3u);
  EXPECT_TRUE(isValidUtf8(cut.message));

  EXPECT_EQ(summarizeStderr("\xf0"), kReplacement);
  EXPECT_EQ(summarizeStderr("progress 50%\rValueError: bad\n"), "progress 50%\\rValueError: bad");
}

TEST(FoundWorkerReplies, TypedResultsOfOddReplies) {
  EXPECT_EQ(helloProtocolVersion(nlohmann::json(5)), -1);
  EXPECT_EQ(helloProtocolVersion(nlohmann::json(true)), -1);
  EXPECT_EQ(helloProtocolVersion({{"protocol", "1"}}), -1);
  EXPECT_EQ(helloProtocolVersion({{"protocol", 4294967297ll}}), -1);
  EXPECT_EQ(helloProtocolVersion({{"protocol", 1}}), 1);

  WorkerReply warm = replyOf(R"({"id": 7, "ok": true, "result": {"status": 0.0001, "message": "at 3:4:\nCompilationError"}})");
  CompileOutcome w = warmOutcomeFrom(warm, std::chrono::milliseconds(1000));
  EXPECT_EQ(w.status, CandidateStatus::kRuntimeError);
  EXPECT_EQ(w.message, "at 3:4:");

  CaseMeasurement m = measurementFromReply(
      replyOf(R"({"id": 7, "ok": true, "result": {"status": "runtime-error", "message": "CUDA error\n  File"}})"));
  EXPECT_EQ(m.status, CandidateStatus::kRuntimeError);
  EXPECT_EQ(m.message, "CUDA error");
  CaseMeasurement wrong = measurementFromReply(replyOf(
      R"({"id": 7, "ok": true, "result": {"status": "wrong-result", "verify": {"reason": "output 0 differs\nat [3, 7]"}}})"));
  EXPECT_EQ(wrong.message, "output 0 differs");

  GpuLimits g = GpuLimits::fromHello({{"cc", {214748364, 9}}, {"sms", 132}});
  EXPECT_EQ(g.name, "sm_90");
  EXPECT_EQ(GpuLimits::fromHello({{"cc", {8, 9}}}).name, "sm_89");
  GpuLimits tiny = GpuLimits::fromHello({{"cc", {9, 0}}, {"shared_per_sm", 7}, {"shared_per_block_optin", 232448}});
  EXPECT_EQ(tiny.sharedPerBlock(), kSm90SharedPerBlock);
}

TEST(FoundWorkerReplies, ASassErrorThatIsNoStringIsNoReason) {
  CompiledFacts f = parseCompiled(compileReplyFrom(replyOf(R"({"id": 7, "ok": true, "result": {"sass_error": 5}})")));
  EXPECT_EQ(f.status, "ok");
  EXPECT_EQ(f.sass_missing, "no SASS in the reply");
  f = parseCompiled(compileReplyFrom(replyOf(R"({"id": 7, "ok": true, "result": {"sass_error": "cuobjdump exited with 1"}})")));
  EXPECT_EQ(f.sass_missing, "cuobjdump exited with 1");
  EXPECT_FALSE(parseCompiled(compileReplyFrom(replyOf(R"({"id": 7, "ok": true, "result": {"shared_bytes": 1e308}})")))
                   .shared_bytes.has_value());
  EXPECT_EQ(*parseCompiled(compileReplyFrom(replyOf(R"({"id": 7, "ok": true, "result": {"shared_bytes": 49152}})")))
                 .shared_bytes,
            49152);
}

TEST(FoundPtx, OddWidthsAndLonePredicatesAreSkipped) {
  InstructionFacts f = factsFromPtx(
      "\t@%p1   \n\tld.global.b16 { %rs1 }, [ %rd1 + 0 ];\n\tst.global.b2147483648 [ %rd6 + 0 ], { %r12 };\n");
  EXPECT_EQ(f.instructions, 2);
  EXPECT_EQ(f.global_loads.at(16), 1);
  EXPECT_EQ(f.global_stores.count(16), 0u);
}

TEST(FoundText, StrictUtf8) {
  EXPECT_FALSE(isValidUtf8("k\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(isValidUtf8("\xE0\x80\xAF"));       // an overlong '/'
  EXPECT_FALSE(isValidUtf8("\xF4\x90\x80\x80"));   // beyond U+10FFFF
  EXPECT_TRUE(isValidUtf8("\xE2\x82\xAC \xF0\x9F\x98\x80 \xED\x9F\xBF"));
  EXPECT_EQ(toValidUtf8("a\xFF" "b\xED\xA0\x80"), "a" + kReplacement + "b" + kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(oneLine("a\nb\x1a\tc"), "a\\nb\\x1a\tc");
  EXPECT_EQ(cutUtf8("\xE2\x82\xAC\xE2\x82\xAC", 4), "\xE2\x82\xAC");
}

TEST(FoundTask, AQuotedNewlineStaysOneLine) {
  fs::path dir = test::tempDir("found-task");
  test::writeFile(dir / "k.py", "def launch(x):\n    return x\n");
  test::writeFile(dir / "h.py", "def make_inputs(case, seed):\n    return ()\n");
  test::writeFile(dir / "task.toml",
                  "name = \"m\"\nsource = \"k.py\"\nlauncher = \"la\\nch\"\nharness = \"h.py\"\ncases = [ { N = 1 } ]\n");
  try {
    loadTask(dir / "task.toml");
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "task.toml").string() + ": key 'launcher' must be a Python name (a function, or Class.apply), not 'la\\nch'");
  }
}

TEST(FoundTask, ACaseLabelIsOneLine) {
  fs::path dir = test::tempDir("found-task-label");
  test::writeFile(dir / "k.py", "def launch(x):\n    return x\n");
  test::writeFile(dir / "h.py", "def make_inputs(case, seed):\n    return ()\n");
  test::writeFile(dir / "task.toml", "name = \"m\"\nsource = \"k.py\"\nlauncher = \"launch\"\nharness = \"h.py\"\n"
                                     "cases = [ { M = 1, \"a\\nb\" = 2, dtype = \"fp\\r16\" } ]\n");
  Task t = loadTask(dir / "task.toml");
  EXPECT_EQ(t.cases[0]["a\nb"], 2);
  EXPECT_EQ(t.caseLabel(0), "M=1,a\\nb=2,dtype=fp\\r16");
}

TEST(FoundTask, NonAsciiOutsideStringsIsRefusedBeforeTomlPlusPlusSeesIt) {
  fs::path dir = test::tempDir("found-task-utf8");
  test::writeFile(dir / "k.py", "def launch(x):\n    return x\n");
  test::writeFile(dir / "h.py", "def make_inputs(case, seed):\n    return ()\n");
  const std::string head = "\xEF\xBB\xBFname = \"m\"  # caf\xC3\xA9\nsource = \"k.py\"\nlauncher = \"launch\"\nharness = \"h.py\"\n";
  test::writeFile(dir / "task.toml", head + "cases = [ { s = \"\xD0\x8B\", t = '\xC2\xA7', u = \"\"\"\xC2\xA7\"\"\" } ]\n");
  Task t = loadTask(dir / "task.toml");
  EXPECT_EQ(t.cases[0]["s"], "\xD0\x8B");
  EXPECT_EQ(t.cases[0]["u"], "\xC2\xA7");
  test::writeFile(dir / "task.toml", head + "cases = [ { N = 1 } ]\nkernels = [ \xD0\x8B ]\n");
  try {
    loadTask(dir / "task.toml");
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "task.toml").string() +
                                         ":6: not valid TOML: a non-ASCII character outside a string or comment (or "
                                         "right after a backslash)");
  }
}

TEST(FoundNcuCsv, NoFigureBeyondTheDoubleRangeAndStrictUtf8) {
  NcuTable t = parseNcuRawCsv(
      "\"ID\",\"Kernel Name\",\"dram__bytes.sum.per_second\"\n\"\",\"\",\"Tbyte/second\"\n\"0\",\"k\",\"1e308\"\n", "t.csv");
  auto ks = kernelMetricsFromTable(t);
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_DOUBLE_EQ(*ks[0].find("dram__bytes.sum.per_second")->number, 1e308);
  EXPECT_FALSE(ks[0].get("dram__bytes.sum.per_second").has_value());
  try {
    parseNcuRawCsv("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\xED\xA0\x80\",\"1\"\n", "t.csv");
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "t.csv: not a CSV file (not valid UTF-8 text)");
  }
}

TEST(FoundResultsDb, TextThatIsNotUtf8ReadsBackReplaced) {
  fs::path path = test::tempDir("found-db") / "r.sqlite";
  {
    auto db = ResultsDb::open(path);
    RunInfo info;
    info.task_name = "t";
    db->beginRun(info);
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE runs SET task_path = CAST(X'2F74FF' AS TEXT)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  auto db = ResultsDb::open(path, DbAccess::kReadOnly);
  auto runs = db->runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].info.task_path, "/t" + kReplacement);
}

}  // namespace
}  // namespace tf
