// The one way a transformation pass runs, wherever it is asked for (the optimization loop,
// `tritonforge transform`): in the manner of DuckDB's RunOptimizer, apply() checks that the
// pass exists and is not switched off, times the rewrite, and checks its result. Concrete
// appliers (transform/pass_applier.h; fakes in the tests) provide the rewrite and the check;
// they never decide whether a pass may run.
//
// It lives below both the search (which asks for passes) and transform/ (which has them), so
// that neither reaches into the other.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace tf {

struct PassRequest {
  std::string source;                      // the text to rewrite
  std::string kernel;                      // the kernel of `source` the pass applies to
  std::string pass;
  nlohmann::json params = nlohmann::json::object();
};

struct PassApplication {
  enum class Status {
    kApplied,       // `source` is the checked result
    kRefused,       // a precondition failed: an expected outcome (message says which)
    kSwitchedOff,   // the user switched it off (--no-pass)
    kUnknownPass,   // no pass of that name
    kBroken,        // the rewrite does not parse: a bug of the pass
    kDoesNotCompile,  // it parses but does not compile for the target (out of resources, ...)
  };
  Status status = Status::kRefused;
  std::string source;
  std::string message;
  std::vector<std::string> notes;          // what a reviewer of the result should know
  nlohmann::json check = nlohmann::json::object();   // what the check found (compile facts)
  double seconds = 0;                      // the rewrite and its check
  bool applied() const { return status == Status::kApplied; }
};

const char* toString(PassApplication::Status status);

class PassApplier {
 public:
  // `switched_off`: pass names the user switched off (validated by the caller).
  explicit PassApplier(std::set<std::string> switched_off = {}) : switched_off_(std::move(switched_off)) {}
  virtual ~PassApplier() = default;

  PassApplication apply(const PassRequest& request);
  // The passes apply() would run: known and not switched off, in the applier's order.
  std::vector<std::string> enabled() const;
  // The parameter sets worth trying for `pass` when a proposal gives `params`: every
  // combination of the values the pass declares for the parameters left open, at most
  // `limit` of them, `params` itself first (the default: just `params`).
  virtual std::vector<nlohmann::json> paramVariants(const std::string& pass, const nlohmann::json& params,
                                                    size_t limit) const {
    return {params};
  }
  bool switchedOff(const std::string& pass) const { return switched_off_.count(pass) > 0; }

 protected:
  virtual std::vector<std::string> known() const = 0;
  // The rewrite alone: kApplied with the new source, or kRefused with the reason.
  virtual PassApplication rewrite(const PassRequest& request) = 0;
  // Checks an applied rewrite: returns it (with what the check found) or kBroken.
  virtual PassApplication check(const PassRequest& request, PassApplication applied) { return applied; }

 private:
  std::set<std::string> switched_off_;
};

}  // namespace tf
