#include "worker/worker_process.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "util/error.h"
#include "util/text.h"

namespace tf {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kStderrKeep = 256 * 1024;
constexpr int kMaxGarbageLines = 200;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

const char* toString(WorkerReply::Status status) {
  switch (status) {
    case WorkerReply::Status::kOk: return "ok";
    case WorkerReply::Status::kFailed: return "failed";
    case WorkerReply::Status::kTimeout: return "timeout";
    case WorkerReply::Status::kCrashed: return "crash";
    case WorkerReply::Status::kProtocolError: return "protocol-error";
    case WorkerReply::Status::kStartFailed: return "start-failed";
  }
  return "unknown";
}

std::string summarizeStderr(const std::string& text, size_t max_len) {
  std::istringstream in(text);
  std::string line, last_nonempty, last_exception;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    last_nonempty = line.substr(first);
    // An exception line starts at column 0 with a dotted name, then ':' (or is the name alone).
    if (first == 0) {
      size_t i = 0;
      while (i < line.size() && (isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == '.')) ++i;
      bool named = i > 0 && (i == line.size() || line[i] == ':');
      std::string name = line.substr(0, i);
      if (named && (name.find("Error") != std::string::npos || name.find("Exception") != std::string::npos ||
                    name.find("Interrupt") != std::string::npos || name == "SystemExit")) {
        last_exception = line;
      }
    }
  }
  // Stderr is any bytes (a kernel's printf, a progress bar's carriage returns), and the summary
  // goes into messages and the results database's JSON.
  std::string pick = oneLine(toValidUtf8(!last_exception.empty() ? last_exception : last_nonempty));
  if (pick.size() > max_len) pick = cutUtf8(pick, max_len) + "...";
  return pick;
}

ReplyLine parseReplyLine(std::string_view line, uint64_t id) {
  ReplyLine out;
  nlohmann::json reply = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded() || !reply.is_object() || !reply.contains("id")) return out;
  if (!reply["id"].is_number_unsigned() || reply["id"].get<uint64_t>() != id) {
    out.kind = ReplyLine::Kind::kOtherId;
    return out;
  }
  out.kind = ReplyLine::Kind::kReply;
  WorkerReply& r = out.reply;
  // A field of the wrong type counts as absent (json::value would throw for it).
  auto flag = [](const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
  };
  if (flag(reply, "ok")) {
    r.status = WorkerReply::Status::kOk;
    r.result = reply.contains("result") ? reply["result"] : nlohmann::json::object();
    return out;
  }
  const auto& err = reply.contains("error") && reply["error"].is_object() ? reply["error"] : nlohmann::json::object();
  auto text = [&](const char* key, const char* fallback) {
    auto it = err.find(key);
    return it != err.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
  };
  r.status = WorkerReply::Status::kFailed;
  r.error_type = firstLine(text("type", "Error"), 200);
  r.message = firstLine(text("message", "unknown error"), 1000);
  r.detail = text("traceback", "");
  if (err.contains("data")) r.result = err["data"];
  out.fatal = flag(err, "fatal");
  return out;
}

int helloProtocolVersion(const nlohmann::json& hello_result) {
  // Not json::value: it throws for a result that is no object or a protocol that is no number.
  if (!hello_result.is_object()) return -1;
  auto it = hello_result.find("protocol");
  if (it == hello_result.end() || !it->is_number_integer()) return -1;
  int64_t v = it->get<int64_t>();
  return v >= 0 && v <= std::numeric_limits<int>::max() ? static_cast<int>(v) : -1;
}

WorkerOptions compileWorkerOptions(WorkerOptions measuring) {
  measuring.name = "compile worker";
  measuring.env["TRITONFORGE_WORKER_NICE"] = "10";
  return measuring;
}

std::string choosePython(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("TRITONFORGE_PYTHON"); env && *env) return env;
  return "python3";
}

WorkerProcess::WorkerProcess(WorkerOptions options) : options_(std::move(options)) {
  if (options_.module_args.empty()) options_.module_args = {"-m", "tritonforge_worker"};
}

WorkerProcess::~WorkerProcess() { shutdown(); }

std::string WorkerProcess::stderrTail(size_t max_bytes) const {
  if (err_ring_.size() <= max_bytes) return err_ring_;
  return err_ring_.substr(err_ring_.size() - max_bytes);
}

WorkerReply WorkerProcess::failure(WorkerReply::Status status, std::string message, double seconds) {
  WorkerReply r;
  r.status = status;
  r.message = std::move(message);
  r.seconds = seconds;
  std::string recent = err_ring_.size() > err_mark_ ? err_ring_.substr(err_mark_) : std::string();
  r.detail = summarizeStderr(recent);
  return r;
}

void WorkerProcess::interrupt() {
  pid_t pid = pid_.load();
  if (pid > 0) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
}

void WorkerProcess::killProcess() {
  pid_.store(-1);
  if (!proc_) return;
  proc_->killGroup(SIGKILL);
  proc_->waitOrKill(std::chrono::milliseconds(0));
  drainStderr(0);
  proc_.reset();
  out_buf_.clear();
}

WorkerReply WorkerProcess::ensureStarted() {
  if (proc_) return WorkerReply{};
  auto t0 = Clock::now();
  SpawnOptions spawn;
  spawn.argv.push_back(options_.python);
  spawn.argv.push_back("-u");
  for (const auto& a : options_.module_args) spawn.argv.push_back(a);
  std::string pythonpath = options_.package_dir.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
  spawn.env_set["PYTHONPATH"] = pythonpath;
  spawn.env_set["PYTHONUNBUFFERED"] = "1";
  spawn.env_set["PYTHONDONTWRITEBYTECODE"] = "1";
  for (const auto& [k, v] : options_.env) spawn.env_set[k] = v;
  err_mark_ = err_ring_.size();
  try {
    proc_ = std::make_unique<Subprocess>(Subprocess::spawn(spawn));
  } catch (const EnvironmentError& e) {
    return failure(WorkerReply::Status::kStartFailed,
                   fmt::format("{}: cannot start python '{}': {}", options_.name, options_.python, e.what()),
                   secondsSince(t0));
  }
  ++starts_;
  pid_.store(proc_->group());
  WorkerReply hello = roundTrip("hello", options_.hello_args, options_.start_timeout);
  if (!hello.ok()) {
    WorkerReply r = hello;
    r.status = WorkerReply::Status::kStartFailed;
    r.message = fmt::format("{} did not start ({}): {}", options_.name, toString(hello.status),
                            hello.message.empty() ? hello.detail : hello.message);
    killProcess();
    return r;
  }
  int version = helloProtocolVersion(hello.result);
  if (version != kWorkerProtocolVersion) {
    killProcess();
    return failure(WorkerReply::Status::kStartFailed,
                   fmt::format("{} speaks protocol {}, this tritonforge needs {}", options_.name, version,
                               kWorkerProtocolVersion),
                   secondsSince(t0));
  }
  hello_ = hello.result;
  return WorkerReply{};
}

WorkerReply WorkerProcess::call(std::string_view op, const nlohmann::json& args,
                                std::chrono::milliseconds timeout) {
  if (!proc_) {
    WorkerReply started = ensureStarted();
    if (!started.ok()) return started;
  }
  return roundTrip(op, args, timeout);
}

void WorkerProcess::drainStderr(int timeout_ms) {
  if (!proc_ || proc_->stderrFd() < 0) return;
  char buf[16384];
  while (true) {
    pollfd p{proc_->stderrFd(), POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0 || !(p.revents & (POLLIN | POLLHUP))) return;
    ssize_t n = ::read(proc_->stderrFd(), buf, sizeof buf);
    if (n <= 0) return;
    err_ring_.append(buf, static_cast<size_t>(n));
    if (err_ring_.size() > kStderrKeep) {
      size_t cut = err_ring_.size() - kStderrKeep / 2;
      err_ring_.erase(0, cut);
      err_mark_ = err_mark_ > cut ? err_mark_ - cut : 0;
    }
    timeout_ms = 0;
  }
}

WorkerReply WorkerProcess::roundTrip(std::string_view op, const nlohmann::json& args,
                                     std::chrono::milliseconds timeout) {
  auto t0 = Clock::now();
  drainStderr(0);
  err_mark_ = err_ring_.size();
  uint64_t id = next_id_++;
  nlohmann::json request = {{"v", kWorkerProtocolVersion}, {"id", id}, {"op", op}, {"args", args}};
  std::string line = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (!proc_->writeAll(line)) {
    auto status = proc_->tryWait();
    std::string why = status ? describeWaitStatus(*status) : "its input is closed";
    WorkerReply r = failure(WorkerReply::Status::kCrashed, fmt::format("{} is gone ({})", options_.name, why),
                            secondsSince(t0));
    killProcess();
    return r;
  }
  auto deadline = t0 + timeout;
  int garbage = 0;
  std::string garbage_sample;
  char buf[65536];
  while (true) {
    // A complete line may already be buffered.
    size_t nl;
    while ((nl = out_buf_.find('\n')) != std::string::npos) {
      std::string reply_line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      ReplyLine parsed = parseReplyLine(reply_line, id);
      if (parsed.kind == ReplyLine::Kind::kGarbage) {
        if (garbage_sample.empty()) garbage_sample = firstLine(reply_line, 120);
        if (++garbage > kMaxGarbageLines) {
          WorkerReply r = failure(WorkerReply::Status::kProtocolError,
                                  fmt::format("{} wrote {} lines that are not protocol replies, e.g. '{}'",
                                              options_.name, garbage, garbage_sample),
                                  secondsSince(t0));
          killProcess();
          return r;
        }
        continue;
      }
      if (parsed.kind == ReplyLine::Kind::kOtherId) continue;  // stale reply
      WorkerReply r = std::move(parsed.reply);
      r.seconds = secondsSince(t0);
      // The worker exits after a fatal error (a lost CUDA context): replace it now.
      if (parsed.fatal) killProcess();
      return r;
    }
    auto now = Clock::now();
    if (now >= deadline) {
      drainStderr(0);
      double limit = std::chrono::duration<double>(timeout).count();
      WorkerReply r = failure(WorkerReply::Status::kTimeout,
                              fmt::format("{} gave no answer to '{}' within {:.1f} s; it was killed",
                                          options_.name, op, limit),
                              secondsSince(t0));
      killProcess();
      return r;
    }
    int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1;
    pollfd fds[2] = {{proc_->stdoutFd(), POLLIN, 0}, {proc_->stderrFd(), POLLIN, 0}};
    int pr = poll(fds, 2, std::min(ms, 500));
    if (pr < 0 && errno != EINTR) {
      WorkerReply r = failure(WorkerReply::Status::kCrashed, "poll failed on the worker's pipes", secondsSince(t0));
      killProcess();
      return r;
    }
    if (fds[1].revents & (POLLIN | POLLHUP)) drainStderr(0);
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(proc_->stdoutFd(), buf, sizeof buf);
      if (n > 0) {
        out_buf_.append(buf, static_cast<size_t>(n));
        continue;
      }
      // End of stdout: the worker is gone.
      drainStderr(200);
      int status = proc_->waitOrKill(std::chrono::milliseconds(2000));
      WorkerReply r = failure(WorkerReply::Status::kCrashed,
                              fmt::format("{} died during '{}' ({})", options_.name, op, describeWaitStatus(status)),
                              secondsSince(t0));
      killProcess();
      return r;
    }
  }
}

void WorkerProcess::shutdown() {
  pid_.store(-1);
  if (!proc_) return;
  nlohmann::json request = {{"v", kWorkerProtocolVersion}, {"id", next_id_++}, {"op", "shutdown"}, {"args", {}}};
  proc_->writeAll(request.dump() + "\n");
  proc_->closeStdin();
  proc_->waitOrKill(std::chrono::milliseconds(1000));
  drainStderr(0);
  proc_.reset();
  out_buf_.clear();
}

}  // namespace tf
