// report.html beside report.md: rendered by python/tritonforge_worker/html_report.py (figures
// with matplotlib, inlined) from result.json and changes.diff, through the worker's Python.
// The page is never worth failing a run for: when that Python cannot render it (not found,
// crashed, timed out), a plain page is written instead that says why and points to report.md.
#pragma once

#include <filesystem>
#include <string>

namespace tf {

struct HtmlReportOutcome {
  bool rendered = false;   // by the Python module (with or without figures)
  std::string why;         // when not: what went wrong (also on the fallback page)
};

// Writes DIR/report.html from DIR/result.json and DIR/changes.diff with `python` (the
// worker's interpreter), `package_dir` on its PYTHONPATH.
HtmlReportOutcome writeHtmlReport(const std::filesystem::path& dir, const std::string& python,
                                  const std::filesystem::path& package_dir);

// Writes DIR/report.html of a capture from DIR/capture.json (the kernels' table, the tasks).
HtmlReportOutcome writeCaptureHtml(const std::filesystem::path& dir, const std::string& python,
                                   const std::filesystem::path& package_dir);

}  // namespace tf
