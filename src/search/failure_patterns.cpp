#include "search/failure_patterns.h"

#include <algorithm>
#include <cctype>

namespace tf {
namespace {

std::set<std::string> changedDims(const Config& c, const Config& baseline) {
  std::set<std::string> out;
  for (const auto& [id, v] : c) {
    auto it = baseline.find(id);
    if (v != kKeep && (it == baseline.end() || it->second != v)) out.insert(id);
  }
  return out;
}

}  // namespace

std::string FailurePatterns::signature(const CandidateRecord& rec) {
  switch (rec.status) {
    case CandidateStatus::kWrongResult:
    case CandidateStatus::kRuntimeError:
    case CandidateStatus::kCompileError:
      break;
    default:
      return "";
  }
  std::string msg = rec.message;
  // "case M=4096,N=8: ..." names the case: the same error on another case is the same error.
  if (msg.rfind("case ", 0) == 0) {
    size_t colon = msg.find(": ");
    if (colon != std::string::npos) msg = msg.substr(colon + 2);
  }
  std::string out = std::string(toString(rec.status)) + ": ";
  bool in_number = false;
  for (char ch : msg.substr(0, 400)) {
    if (std::isdigit(static_cast<unsigned char>(ch)) || (in_number && (ch == '.' || ch == 'e' || ch == '-'))) {
      if (!in_number) out += '#';
      in_number = true;
      continue;
    }
    in_number = false;
    out += ch;
  }
  return out;
}

FailurePatterns::Learned FailurePatterns::observe(const CandidateRecord& rec, const Config& baseline) {
  Learned out;
  std::set<std::string> changed = changedDims(rec.config, baseline);
  if (rec.status == CandidateStatus::kOk) {
    verified_changed_.insert(changed.begin(), changed.end());
    return out;
  }
  std::string sig = signature(rec);
  if (sig.empty() || changed.empty()) return out;
  auto [it, fresh] = patterns_.emplace(sig, Pattern{});
  Pattern& p = it->second;
  if (fresh) {
    p.changed = changed;
  } else {
    std::set<std::string> both;
    std::set_intersection(p.changed.begin(), p.changed.end(), changed.begin(), changed.end(),
                          std::inserter(both, both.begin()));
    p.changed = std::move(both);
  }
  p.candidates.push_back(rec.id);
  p.failed.push_back(rec.config);
  if (p.candidates.size() < 2) return out;
  std::vector<std::string> suspects;
  for (const auto& d : p.changed) {
    if (!verified_changed_.count(d) && !frozen_.count(d)) suspects.push_back(d);
  }
  if (suspects.empty()) return out;
  if (suspects.size() > 1 && !p.probed) {
    // Which of them? Changing each alone says (a verified probe clears its dimension).
    p.probed = true;
    for (const auto& d : suspects) {
      Probe probe{d, {}, sig};
      for (const auto& c : p.failed) {
        int64_t v = c.at(d);
        if (std::find(probe.values.begin(), probe.values.end(), v) == probe.values.end()) probe.values.push_back(v);
      }
      out.probes.push_back(std::move(probe));
    }
    return out;
  }
  Freeze f;
  f.signature = sig;
  f.candidates = p.candidates;
  for (const auto& d : suspects) {
    f.tunables.push_back(d);
    frozen_.insert(d);
  }
  out.freezes.push_back(std::move(f));
  return out;
}

bool FailurePatterns::observePass(const PassId& pass, const CandidateRecord& rec) {
  if (dropped_.count(pass)) return false;
  std::string sig = signature(rec);
  if (sig.empty()) return false;
  if (++pass_failures_[pass][sig] < 2) return false;
  dropped_.insert(pass);
  return true;
}

void FailurePatterns::newBase() {
  patterns_.clear();
  verified_changed_.clear();
  frozen_.clear();
}

}  // namespace tf
