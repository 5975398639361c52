#include "report/html_report.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "util/fs.h"
#include "util/subprocess.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

std::string escapeHtml(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fallbackPage(const std::string& why, const std::string& sources) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tritonforge report</title>"
      "<link rel=\"icon\" href=\"data:,\"></head><body style=\"font-family: sans-serif; margin: 24px\">"
      "<h1>tritonforge report</h1><p>The HTML report could not be rendered: {}.</p>"
      "<p>The same results are in {}.</p></body></html>\n",
      escapeHtml(why), sources);
}

}  // namespace

namespace {

HtmlReportOutcome render(const std::vector<std::string>& args, const fs::path& out, const std::string& python,
                         const fs::path& package_dir, const std::string& fallback_sources) {
  HtmlReportOutcome outcome;
  SpawnOptions spawn;
  spawn.argv = {python, "-m", "tritonforge_worker.html_report"};
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.argv.insert(spawn.argv.end(), {"-o", out.string()});
  std::string pythonpath = package_dir.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
  spawn.env_set["PYTHONPATH"] = pythonpath;
  spawn.env_set["MPLBACKEND"] = "Agg";  // no display is needed, nor looked for
  try {
    // The first import of matplotlib builds its font cache (seconds); a minute is plenty.
    CommandResult r = runCommand(spawn, std::chrono::seconds(90));
    if (r.ok() && fs::exists(out)) {
      outcome.rendered = true;
      return outcome;
    }
    std::string err = r.err;
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    size_t nl = err.rfind('\n');
    std::string last = nl == std::string::npos ? err : err.substr(nl + 1);
    outcome.why = r.timed_out ? "python did not finish within 90 s"
                              : fmt::format("{} -m tritonforge_worker.html_report: {}{}", python,
                                            describeWaitStatus(r.status), last.empty() ? "" : ": " + last);
  } catch (const std::exception& e) {
    outcome.why = fmt::format("cannot run {}: {}", python, e.what());
  }
  try {
    writeFileAtomic(out, fallbackPage(outcome.why, fallback_sources));
  } catch (const std::exception& e) {
    outcome.why += fmt::format("; writing {} failed too: {}", out.string(), e.what());
  }
  return outcome;
}

}  // namespace

HtmlReportOutcome writeHtmlReport(const fs::path& dir, const std::string& python, const fs::path& package_dir) {
  return render({"optimize", (dir / "result.json").string(), "--diff", (dir / "changes.diff").string()},
                dir / "report.html", python, package_dir,
                "<a href=\"report.md\">report.md</a> and <a href=\"result.json\">result.json</a>");
}

HtmlReportOutcome writeCaptureHtml(const fs::path& dir, const std::string& python, const fs::path& package_dir) {
  return render({"capture", (dir / "capture.json").string()}, dir / "report.html", python, package_dir,
                "<a href=\"capture.json\">capture.json</a>");
}

}  // namespace tf
