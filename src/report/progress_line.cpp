#include "report/progress_line.h"

#include <fmt/format.h>

#include <algorithm>

namespace tf {

std::string progressLine(double elapsed_s, double budget_s, int tried, int verified, int failed,
                         const std::string& best, int bar) {
  std::string counts = fmt::format("{} candidates, {} verified, {} failed; {}", tried, verified, failed, best);
  if (budget_s <= 0 || bar <= 0) return fmt::format("[{:5.1f}s] {}", elapsed_s, counts);
  double frac = std::clamp(elapsed_s / budget_s, 0.0, 1.0);
  int full = static_cast<int>(frac * bar + 0.5);
  return fmt::format("[{}{}] {:.0f}/{:.0f} s  {}", std::string(full, '#'), std::string(bar - full, '-'), elapsed_s,
                     budget_s, counts);
}

}  // namespace tf
