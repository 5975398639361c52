// Markdown and JUnit reports of `tritonforge check` (check_report.h).
#include "report/check_report.h"

#include <fmt/format.h>

namespace tf {

namespace {

std::string timeText(const CaseCheck& c) {
  return c.now ? fmt::format("{:.4f} ms ± {:.1f}%", c.now->time_ms, 100 * c.now->noise) : "-";
}

std::string baselineText(const CaseCheck& c) {
  return c.baseline ? fmt::format("{:.4f} ms ± {:.1f}%", c.baseline->time_ms, 100 * c.baseline->noise) : "-";
}

// One line saying what happened to a case, for both reports.
std::string verdictText(const CaseCheck& c) {
  switch (c.verdict) {
    case CaseVerdict::kFailed: return fmt::format("{}: {}", toString(c.status), c.message);
    case CaseVerdict::kRegressed:
      return fmt::format("regression: {:.1f}% slower than the baseline, beyond the noise band of {:.1f}%",
                         100 * (c.ratio - 1), 100 * c.band);
    case CaseVerdict::kFaster:
      return fmt::format("{:.1f}% faster than the baseline, beyond the noise band of {:.1f}% (update the baseline)",
                         100 * (1 - c.ratio), 100 * c.band);
    case CaseVerdict::kOk:
      return fmt::format("within the noise ({:+.1f}%, band {:.1f}%)", 100 * (c.ratio - 1), 100 * c.band);
    case CaseVerdict::kNoBaseline: return "no baseline for this case: measured, not compared";
  }
  return "";
}

std::string mdCell(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}

}  // namespace

nlohmann::json checkJson(const std::vector<TaskCheck>& tasks, const std::string& baseline_path) {
  nlohmann::json out = {{"schema", "tritonforge.check/1"}, {"baseline", baseline_path}};
  bool failed = false;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : tasks) {
    failed = failed || t.failed();
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : t.cases) {
      nlohmann::json j = {{"index", c.index},           {"label", c.label},
                          {"verdict", toString(c.verdict)}, {"status", toString(c.status)},
                          {"summary", verdictText(c)},  {"seconds", c.seconds}};
      if (!c.message.empty()) j["message"] = c.message;
      if (c.now) j["now"] = {{"time_ms", c.now->time_ms}, {"noise", c.now->noise}, {"medians_ms", c.now->medians}};
      if (c.baseline) j["baseline"] = {{"time_ms", c.baseline->time_ms}, {"noise", c.baseline->noise}};
      if (c.now && c.baseline) {
        j["ratio"] = c.ratio;
        j["band"] = c.band;
      }
      cases.push_back(std::move(j));
    }
    list.push_back({{"name", t.name},
                    {"path", t.path},
                    {"has_baseline", t.has_baseline},
                    {"baseline_config", t.baseline_config_text},
                    {"toolchain_changes", t.toolchain_changes},
                    {"failed", t.failed()},
                    {"cases", std::move(cases)}});
  }
  out["failed"] = failed;
  out["tasks"] = std::move(list);
  return out;
}

std::string xmlEscape(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') break;
        out += static_cast<char>(ch);
    }
  }
  return out;
}

std::string checkMarkdown(const std::vector<TaskCheck>& tasks, const std::string& baseline_path) {
  int regressed = 0, failed = 0, cases = 0;
  for (const auto& t : tasks) {
    for (const auto& c : t.cases) {
      ++cases;
      regressed += c.verdict == CaseVerdict::kRegressed;
      failed += c.verdict == CaseVerdict::kFailed;
    }
  }
  std::string md = "# tritonforge check\n\n";
  md += fmt::format("Baseline: `{}`. {} task(s), {} case(s): {} regressed, {} failed.\n\n", baseline_path,
                    tasks.size(), cases, regressed, failed);
  for (const auto& t : tasks) {
    md += fmt::format("## {} (`{}`)\n\n", t.name, t.path);
    if (!t.has_baseline) md += "The baseline holds no entry for this task: its cases are measured, not compared.\n\n";
    else if (!t.baseline_config_text.empty()) md += fmt::format("Recorded best: {}.\n\n", t.baseline_config_text);
    if (!t.toolchain_changes.empty()) {
      md += "**Toolchain changed since the baseline**: ";
      for (size_t i = 0; i < t.toolchain_changes.size(); ++i) md += (i ? ", " : "") + t.toolchain_changes[i];
      md += ". The recorded best was tuned for the old one: re-tune (`tritonforge check --retune`, or "
            "`tritonforge optimize ... --save-baseline FILE`).\n\n";
    }
    md += "| case | baseline | now | verdict |\n| --- | --- | --- | --- |\n";
    for (const auto& c : t.cases) {
      md += fmt::format("| {} | {} | {} | {} |\n", mdCell(c.label), baselineText(c), timeText(c),
                        mdCell(verdictText(c)));
    }
    md += "\n";
  }
  md += "Noise band per case: max(1%, baseline IQR/median + current noise), the current noise being the larger of "
        "a 95% confidence interval over the interleaved repeats and the within-run IQR/median (docs/ci.md).\n";
  return md;
}

std::string checkJUnit(const std::vector<TaskCheck>& tasks) {
  std::string body;
  int total = 0, failures = 0;
  double seconds = 0;
  for (const auto& t : tasks) {
    for (const auto& c : t.cases) {
      ++total;
      seconds += c.seconds;
      body += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n", xmlEscape(t.name),
                          xmlEscape(c.label), c.seconds);
      if (c.verdict == CaseVerdict::kRegressed || c.verdict == CaseVerdict::kFailed) {
        ++failures;
        const char* type = c.verdict == CaseVerdict::kRegressed ? "regression" : toString(c.status);
        body += fmt::format("      <failure type=\"{}\" message=\"{}\">baseline {}, now {}</failure>\n", type,
                            xmlEscape(verdictText(c)), xmlEscape(baselineText(c)), xmlEscape(timeText(c)));
      }
      std::string out = fmt::format("baseline {}, now {}: {}", baselineText(c), timeText(c), verdictText(c));
      for (const auto& ch : t.toolchain_changes) out += "\ntoolchain changed: " + ch;
      body += fmt::format("      <system-out>{}</system-out>\n", xmlEscape(out));
      body += "    </testcase>\n";
    }
  }
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites name=\"tritonforge check\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n", total,
                     failures, seconds);
  xml += fmt::format("  <testsuite name=\"tritonforge check\" tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"{:.3f}\">\n",
                     total, failures, seconds);
  xml += body;
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

}  // namespace tf
