#include "cli/progress.h"

#include "report/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace tf {
namespace {

class Quiet final : public OptimizeProgress {
 public:
  void status(const std::string&) override {}
  void candidate(const CandidateRecord&, const CandidateRecord*, int, double) override {}
  void finish() override {}
};

class Terminal final : public OptimizeProgress {
 public:
  Terminal(bool tty, int verbose, double budget_s) : tty_(tty), verbose_(verbose), budget_s_(budget_s) {}

  void status(const std::string& line) override {
    clear();
    std::fprintf(stderr, "%s\n", line.c_str());
  }

  void candidate(const CandidateRecord& c, const CandidateRecord* best, int tried, double elapsed) override {
    if (c.status == CandidateStatus::kOk) ++ok_;
    // Pruned and never-measured candidates (the budget ran out, or a pass won before them)
    // did not fail; the summary counts them the same way.
    else if (c.status != CandidateStatus::kPruned && c.status != CandidateStatus::kNotRun) ++failed_;
    std::string best_text = best && best->objective
                                ? fmt::format("best {:.2f}x ({})", 1.0 / *best->objective, best->config_text)
                                : "best: as written";
    std::string line = progressLine(elapsed, budget_s_, tried, ok_, failed_, best_text);
    bool improved = best && best->id == c.id && c.id != 0;
    if (verbose_ > 0 || (!tty_ && improved)) {
      clear();
      std::string what = c.status == CandidateStatus::kOk && c.objective
                             ? fmt::format("{:.3f}x", 1.0 / *c.objective)
                             : std::string(toString(c.status)) + (c.message.empty() ? "" : ": " + c.message);
      std::fprintf(stderr, "  #%d %s: %s\n", c.id, c.config_text.c_str(), what.substr(0, 200).c_str());
    }
    if (tty_) {
      if (line.size() > 150) line = line.substr(0, 147) + "...";  // ASCII only: bytes are columns
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      std::fflush(stderr);
      dirty_ = true;
    } else if (tried % 25 == 0) {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

  void finish() override { clear(); }

 private:
  void clear() {
    if (dirty_) {
      std::fprintf(stderr, "\r\033[K");
      dirty_ = false;
    }
  }
  bool tty_;
  int verbose_;
  double budget_s_;
  bool dirty_ = false;
  int ok_ = 0, failed_ = 0;
};

}  // namespace

std::unique_ptr<OptimizeProgress> makeProgress(bool quiet, int verbose, double budget_s) {
  if (quiet) return std::make_unique<Quiet>();
  return std::make_unique<Terminal>(isatty(STDERR_FILENO) != 0, verbose, budget_s);
}

}  // namespace tf
