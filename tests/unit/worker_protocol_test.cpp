// The worker protocol against a worker that hangs, crashes, prints garbage or speaks
// another protocol version: every failure is a status value, and the next request gets
// a fresh worker.
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "worker/worker_pool.h"
#include "worker/worker_process.h"

namespace tf {
namespace {

using std::chrono::milliseconds;

WorkerOptions fake(const std::string& mode) {
  WorkerOptions w = test::workerOptions();
  w.module_args = {(test::sourceDir() / "tests/worker_fakes/fake_worker.py").string(), mode};
  w.name = "fake worker";
  w.start_timeout = milliseconds(20000);
  return w;
}

TEST(WorkerProtocol, AnswersAnEcho) {
  WorkerProcess w(fake("ok"));
  WorkerReply r = w.call("echo", {{"x", 1}}, milliseconds(10000));
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.result["echo"]["x"], 1);
  EXPECT_EQ(w.starts(), 1);
}

TEST(WorkerProtocol, HangIsATimeoutAndTheWorkerIsReplaced) {
  WorkerOptions o = fake("hang");
  WorkerProcess w(o);
  WorkerReply r = w.call("run", nlohmann::json::object(), milliseconds(800));
  EXPECT_EQ(r.status, WorkerReply::Status::kTimeout);
  EXPECT_NE(r.message.find("within 0.8 s"), std::string::npos) << r.message;
  EXPECT_FALSE(w.running());
  // The next request starts a new process (which hangs again).
  WorkerReply r2 = w.call("run", nlohmann::json::object(), milliseconds(500));
  EXPECT_EQ(r2.status, WorkerReply::Status::kTimeout);
  EXPECT_EQ(w.starts(), 2);
}

TEST(WorkerProtocol, CrashIsReportedWithTheSignal) {
  WorkerProcess w(fake("crash"));
  WorkerReply r = w.call("run", nlohmann::json::object(), milliseconds(10000));
  EXPECT_EQ(r.status, WorkerReply::Status::kCrashed);
  EXPECT_NE(r.message.find("SIGSEGV"), std::string::npos) << r.message;
  EXPECT_EQ(r.detail, "about to crash");
  EXPECT_FALSE(w.running());
}

TEST(WorkerProtocol, ExitSummarizesThePythonTraceback) {
  WorkerProcess w(fake("exit"));
  WorkerReply r = w.call("run", nlohmann::json::object(), milliseconds(10000));
  EXPECT_EQ(r.status, WorkerReply::Status::kCrashed);
  EXPECT_NE(r.message.find("exit code 7"), std::string::npos) << r.message;
  EXPECT_EQ(r.detail, "RuntimeError: CUDA error: an illegal memory access was encountered");
}

TEST(WorkerProtocol, EndlessGarbageIsAProtocolError) {
  WorkerProcess w(fake("garbage"));
  WorkerReply r = w.call("run", nlohmann::json::object(), milliseconds(10000));
  EXPECT_EQ(r.status, WorkerReply::Status::kProtocolError);
  EXPECT_NE(r.message.find("this is not json"), std::string::npos) << r.message;
  EXPECT_FALSE(w.running());
}

TEST(WorkerProtocol, AFewStrayLinesAreSkipped) {
  WorkerProcess w(fake("noisy-ok"));
  WorkerReply r = w.call("echo", {{"y", 2}}, milliseconds(10000));
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.result["echo"]["y"], 2);
}

TEST(WorkerProtocol, StaleRepliesAreIgnored) {
  WorkerProcess w(fake("stale-id"));
  WorkerReply r = w.call("echo", {{"z", 3}}, milliseconds(10000));
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.result["echo"]["z"], 3);
}

TEST(WorkerProtocol, AnotherProtocolVersionDoesNotStart) {
  WorkerProcess w(fake("bad-version"));
  WorkerReply r = w.call("echo", nlohmann::json::object(), milliseconds(10000));
  EXPECT_EQ(r.status, WorkerReply::Status::kStartFailed);
  EXPECT_NE(r.message.find("protocol 99"), std::string::npos) << r.message;
}

TEST(WorkerProtocol, MissingInterpreterIsAStartFailure) {
  WorkerOptions o = fake("ok");
  o.python = "/nonexistent/python3";
  WorkerProcess w(o);
  WorkerReply r = w.call("echo", nlohmann::json::object(), milliseconds(10000));
  EXPECT_EQ(r.status, WorkerReply::Status::kStartFailed);
  EXPECT_NE(r.message.find("/nonexistent/python3"), std::string::npos) << r.message;
}

TEST(WorkerProtocol, FatalErrorReplacesTheWorker) {
  WorkerProcess w(fake("fatal"));
  WorkerReply r = w.call("run", nlohmann::json::object(), milliseconds(10000));
  EXPECT_EQ(r.status, WorkerReply::Status::kFailed);
  EXPECT_EQ(r.result["status"], "crash");
  EXPECT_FALSE(w.running());
}

TEST(WorkerProtocol, RealWorkerParsesAndReportsSyntaxErrors) {
  WorkerProcess w(test::workerOptions());
  WorkerReply ok = w.call("parse", {{"text", "x = 1\n"}}, milliseconds(30000));
  ASSERT_TRUE(ok.ok()) << ok.message << ok.detail;
  EXPECT_EQ(ok.result["ast"]["_t"], "Module");
  WorkerReply bad = w.call("parse", {{"text", "def f(:\n  pass\n"}}, milliseconds(30000));
  EXPECT_EQ(bad.status, WorkerReply::Status::kFailed);
  EXPECT_EQ(bad.result["line"], 1);
  // The worker survives a failed op.
  EXPECT_TRUE(w.running());
  WorkerReply unknown = w.call("no-such-op", nlohmann::json::object(), milliseconds(30000));
  EXPECT_EQ(unknown.status, WorkerReply::Status::kFailed);
  EXPECT_NE(unknown.message.find("unknown op"), std::string::npos);
}

TEST(WorkerPool, RunsJobsOnEveryWorker) {
  WorkerPool pool(fake("ok"), 3);
  auto started = pool.startAll();
  ASSERT_EQ(started.size(), 3u);
  for (const auto& s : started) EXPECT_TRUE(s.ok()) << s.message;
  std::vector<std::future<int>> futures;
  for (int i = 0; i < 12; ++i) {
    futures.push_back(pool.submit([i](WorkerProcess& w) {
      WorkerReply r = w.call("echo", {{"i", i}}, milliseconds(10000));
      return r.ok() ? r.result["echo"]["i"].get<int>() : -1;
    }));
  }
  for (int i = 0; i < 12; ++i) EXPECT_EQ(futures[static_cast<size_t>(i)].get(), i);
}

TEST(StderrSummary, PicksTheExceptionLine) {
  EXPECT_EQ(summarizeStderr("Traceback (most recent call last):\n  File \"x\", line 1\nValueError: bad\n"),
            "ValueError: bad");
  EXPECT_EQ(summarizeStderr("warning one\nlast words\n\n"), "last words");
  EXPECT_EQ(summarizeStderr("triton.compiler.errors.CompilationError: at 3:4\n  more\n"),
            "triton.compiler.errors.CompilationError: at 3:4");
}

}  // namespace
}  // namespace tf
