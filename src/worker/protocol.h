// The worker protocol: one JSON object per line on the worker's stdin and stdout.
//
//   request : {"v": 1, "id": 7, "op": "parse", "args": {...}}
//   reply   : {"v": 1, "id": 7, "ok": true,  "result": {...}}
//           | {"v": 1, "id": 7, "ok": false, "error": {"type": "SyntaxError", "message": "...",
//                                                       "traceback": "..."}}
//
// docs/worker-protocol.md documents every op. The version is stored with every result.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tf {

inline constexpr int kWorkerProtocolVersion = 1;

// What became of one request. Failures of the worker are values, not exceptions.
struct WorkerReply {
  enum class Status {
    kOk,             // the op ran and returned a result
    kFailed,         // the op raised in Python: error_type / message / detail say what
    kTimeout,        // no reply in time: the worker was killed and will be replaced
    kCrashed,        // the worker died (signal, exit, CUDA context lost)
    kProtocolError,  // the worker answered something that is not the protocol
    kStartFailed,    // the worker could not be started
  };
  Status status = Status::kOk;
  nlohmann::json result;
  std::string error_type;  // Python exception class, for kFailed
  std::string message;     // one line, for every failure
  std::string detail;      // traceback / stderr summary, several lines at most
  double seconds = 0;      // wall time of the request

  bool ok() const { return status == Status::kOk; }
};

const char* toString(WorkerReply::Status status);

// One line of the worker's reply channel, read as the reply to request `id`.
struct ReplyLine {
  enum class Kind {
    kGarbage,  // not a protocol reply (not JSON, not an object, no "id"): skipped, but counted
    kOtherId,  // a reply to another request (a stale one): skipped
    kReply,    // the reply: `reply` has status kOk or kFailed (seconds left at 0)
  };
  Kind kind = Kind::kGarbage;
  WorkerReply reply;
  bool fatal = false;  // error.fatal: the worker exits after this reply
};

// A pure function, so that what WorkerProcess makes of a line can be tested (and fuzzed)
// without a process. Never throws: a field of the wrong type counts as absent ("ok" that is
// not true: a failure; "type", "message", "traceback" that are not strings: their
// defaults); error_type and message are one line of valid UTF-8.
ReplyLine parseReplyLine(std::string_view line, uint64_t id);

// The protocol version a `hello` result announces, -1 when it says none.
int helloProtocolVersion(const nlohmann::json& hello_result);

// The last exception line of a Python traceback in `stderr_text` ("RuntimeError: CUDA
// error: an illegal memory access was encountered"), else its last non-empty line, as one
// line of valid UTF-8 (control characters escaped, ill-formed bytes replaced), cut to
// `max_len` bytes at a character boundary.
std::string summarizeStderr(const std::string& stderr_text, size_t max_len = 400);

}  // namespace tf
