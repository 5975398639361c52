#include "variant/pass_applier.h"

#include <algorithm>
#include <chrono>

namespace tf {

const char* toString(PassApplication::Status s) {
  switch (s) {
    case PassApplication::Status::kApplied: return "applied";
    case PassApplication::Status::kRefused: return "refused";
    case PassApplication::Status::kSwitchedOff: return "switched-off";
    case PassApplication::Status::kUnknownPass: return "unknown-pass";
    case PassApplication::Status::kBroken: return "broken";
    case PassApplication::Status::kDoesNotCompile: return "does-not-compile";
  }
  return "?";
}

std::vector<std::string> PassApplier::enabled() const {
  std::vector<std::string> out;
  for (auto& p : known()) {
    if (!switchedOff(p)) out.push_back(std::move(p));
  }
  return out;
}

PassApplication PassApplier::apply(const PassRequest& request) {
  PassApplication out;
  std::vector<std::string> names = known();
  if (std::find(names.begin(), names.end(), request.pass) == names.end()) {
    out.status = PassApplication::Status::kUnknownPass;
    out.message = "no such pass";
    return out;
  }
  if (switchedOff(request.pass)) {
    out.status = PassApplication::Status::kSwitchedOff;
    out.message = "switched off with --no-pass";
    return out;
  }
  auto t0 = std::chrono::steady_clock::now();
  out = rewrite(request);
  if (out.applied()) out = check(request, std::move(out));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace tf
