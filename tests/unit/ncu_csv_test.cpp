// Nsight Compute raw-page CSV: parsing (quotes, thousands separators, the units row, ncu's
// own log lines) and every kind of bad file giving one clear UserError that names the file.
// The CSVs here are hand-written after the documented format (tests/data/ncu/handmade/README.md),
// not recordings.
#include <gtest/gtest.h>

#include "measure/ncu_csv.h"
#include "measure/ncu_metrics.h"
#include "support/test_support.h"
#include "util/error.h"

namespace tf {
namespace {

std::filesystem::path handmade(const char* name) { return test::sourceDir() / "tests/data/ncu/handmade" / name; }

// The message of the UserError that parsing `text` throws ("" when none).
std::string parseError(const std::string& text, const std::string& label = "r.csv") {
  try {
    parseNcuRawCsv(text, label);
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    EXPECT_EQ(m.rfind(label + ": ", 0), 0u) << "names the file first: " << m;
    return m;
  }
  return "";
}

TEST(NcuNumber, ThousandsSeparatorsAndPlainNumbers) {
  EXPECT_EQ(parseNcuNumber("65,536"), 65536.0);
  EXPECT_EQ(parseNcuNumber("1,234,567.5"), 1234567.5);
  EXPECT_EQ(parseNcuNumber("-1,000"), -1000.0);
  EXPECT_EQ(parseNcuNumber("12.75"), 12.75);
  EXPECT_EQ(parseNcuNumber("3.2e+05"), 320000.0);
  EXPECT_EQ(parseNcuNumber(" 7 "), 7.0);
  EXPECT_FALSE(parseNcuNumber("n/a"));
  EXPECT_FALSE(parseNcuNumber(""));
  EXPECT_FALSE(parseNcuNumber("(256, 1, 1)"));
  EXPECT_FALSE(parseNcuNumber("1,23"));       // not groups of three
  EXPECT_FALSE(parseNcuNumber("12,3456"));
  EXPECT_FALSE(parseNcuNumber("nan"));
  EXPECT_FALSE(parseNcuNumber("NVIDIA H200"));
}

TEST(NcuUnits, ScaledUnitsConvertToBase) {
  EXPECT_DOUBLE_EQ(ncuUnitScale("usecond"), 1e-6);
  EXPECT_DOUBLE_EQ(ncuUnitScale("nsecond"), 1e-9);
  EXPECT_DOUBLE_EQ(ncuUnitScale("msecond"), 1e-3);
  EXPECT_DOUBLE_EQ(ncuUnitScale("second"), 1.0);
  EXPECT_DOUBLE_EQ(ncuUnitScale("Kbyte"), 1e3);
  EXPECT_DOUBLE_EQ(ncuUnitScale("Mbyte"), 1e6);
  EXPECT_DOUBLE_EQ(ncuUnitScale("Tbyte/second"), 1e12);
  EXPECT_DOUBLE_EQ(ncuUnitScale("cycle/nsecond"), 1e9);
  EXPECT_DOUBLE_EQ(ncuUnitScale("Ghz"), 1e9);
  EXPECT_DOUBLE_EQ(ncuUnitScale("%"), 1.0);
  EXPECT_DOUBLE_EQ(ncuUnitScale("register/thread"), 1.0);
  EXPECT_DOUBLE_EQ(ncuUnitScale(""), 1.0);
}

TEST(NcuCsv, ParsesTheRawPageWithUnitsRow) {
  NcuTable t = readNcuRawCsv(handmade("two_kernels.csv"));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.columns.size(), 21u);
  EXPECT_EQ(t.units[t.columnIndex("gpu__time_duration.sum")], "usecond");
  EXPECT_EQ(t.row_lines[0], 5);  // two ==PROF== lines, header, units
  auto ks = kernelMetricsFromTable(t);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "softmax_rows");
  EXPECT_EQ(ks[1].name, "matmul_kernel");
  EXPECT_EQ(ks[1].id, "1");
  EXPECT_EQ(ks[0].text("Block Size"), "(128, 1, 1)");       // a quoted comma stays in its field
  EXPECT_EQ(ks[1].text("Grid Size"), "(128, 128, 1)");
  EXPECT_DOUBLE_EQ(*ks[0].get("launch__grid_size"), 32768.0);  // "32,768"
  EXPECT_DOUBLE_EQ(*ks[1].get("dram__bytes_read.sum"), 1234.5e6);  // "1,234.5" Mbyte
  EXPECT_NEAR(*ks[0].get("gpu__time_duration.sum"), 131.04e-6, 1e-15);
  EXPECT_NEAR(*ks[1].get("launch__shared_mem_per_block_dynamic"), 98300.0, 1e-9);
  EXPECT_NEAR(*ks[0].get("lts__t_bytes.sum.per_second"), 6.61e12, 1e3);
  EXPECT_DOUBLE_EQ(*ks[1].get("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 88.7);
  EXPECT_FALSE(ks[0].get("no__such_metric"));
  EXPECT_FALSE(ks[0].get("Device"));  // text, not a number
  EXPECT_EQ(*ks[0].first({"missing__x", "launch__registers_per_thread"}), 40.0);
}

TEST(NcuCsv, MatchingFindsMetricFamilies) {
  std::string csv =
      "\"ID\",\"Kernel Name\",\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\","
      "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\",\"smsp__other\"\n"
      "\"\",\"\",\"\",\"\",\"\"\n"
      "\"0\",\"k\",\"1.5\",\"20.25\",\"3\"\n";
  auto ks = kernelMetricsFromTable(parseNcuRawCsv(csv, "s.csv"));
  auto m = ks[0].matching("smsp__average_warps_issue_stalled_", "_per_issue_active.ratio");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].first, "barrier");
  EXPECT_DOUBLE_EQ(m[0].second, 1.5);
  EXPECT_EQ(m[1].first, "long_scoreboard");
  EXPECT_DOUBLE_EQ(m[1].second, 20.25);
}

TEST(NcuCsv, BaseNamesOfKernels) {
  EXPECT_EQ(ncuBaseName("softmax_rows"), "softmax_rows");
  EXPECT_EQ(ncuBaseName("bank_conflicts_kernel(const float *, float *, int)"), "bank_conflicts_kernel");
  EXPECT_EQ(ncuBaseName("void ns::gemm<float, 128>(float *, int)"), "gemm<float, 128>");
  EXPECT_EQ(ncuBaseName("void f(int)"), "f");
}

TEST(NcuCsv, WithoutUnitsRowAndWithCrlf) {
  std::string csv = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\r\n\"0\",\"k\",\"1,500\"\r\n";
  NcuTable t = parseNcuRawCsv(csv, "c.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.units[2], "");
  EXPECT_DOUBLE_EQ(*kernelMetricsFromTable(t)[0].get("gpu__time_duration.sum"), 1500.0);
}

TEST(NcuCsv, DoubledQuotesAndEmbeddedNewlines) {
  auto recs = splitCsvRecords("a,\"b \"\"q\"\"\",\"c\nd\"\n1,2,3\n\n", "x");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0][1], "b \"q\"");
  EXPECT_EQ(recs[0][2], "c\nd");
  EXPECT_EQ(recs[1][2], "3");
}

TEST(NcuCsvErrors, TruncatedInsideAQuotedField) {
  std::string m;
  try {
    readNcuRawCsv(handmade("truncated.csv"));
  } catch (const UserError& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("truncated.csv: a quoted field opened on line 6 is never closed (a truncated file?)"),
            std::string::npos) << m;
}

TEST(NcuCsvErrors, TruncatedAtAFieldBoundary) {
  std::string text = test::readFile(handmade("two_kernels.csv"));
  size_t cut = text.rfind("\"16,384\"");
  std::string m = parseError(text.substr(0, cut - 1) + "\n");
  EXPECT_NE(m.find("line 6 has 16 fields where the header has 21 (a truncated file?)"), std::string::npos) << m;
}

TEST(NcuCsvErrors, TooManyFields) {
  std::string m = parseError("\"ID\",\"Kernel Name\",\"a__b\"\n\"0\",\"k\",\"1\",\"2\"\n");
  EXPECT_NE(m.find("line 2 has 4 fields where the header has 3"), std::string::npos) << m;
}

TEST(NcuCsvErrors, NotACsv) {
  EXPECT_NE(parseError("hello world\nthis is prose\n").find("not a CSV file (line 1 has no comma-separated columns"),
            std::string::npos);
  EXPECT_NE(parseError(std::string("NCU\0REP\x01\x02", 9)).find("not a CSV file (it holds binary data"),
            std::string::npos);
  EXPECT_NE(parseError("{\"a\": 1, \"b\": 2}\n").find("not an Nsight Compute raw CSV"), std::string::npos);
  EXPECT_NE(parseError("").find("empty file"), std::string::npos);
  EXPECT_NE(parseError("==PROF== Connected\n==PROF== Disconnected\n").find("empty file"), std::string::npos);
  EXPECT_NE(parseError("a,b\n\xff\xfe,x\n").find("not valid UTF-8"), std::string::npos);
}

TEST(NcuCsvErrors, MissingColumns) {
  EXPECT_NE(parseError("\"ID\",\"gpu__time_duration.sum\"\n\"0\",\"5\"\n").find("missing column 'Kernel Name'"),
            std::string::npos);
  EXPECT_NE(parseError("\"ID\",\"Kernel Name\",\"Device\"\n\"0\",\"k\",\"H200\"\n").find("no metric columns"),
            std::string::npos);
}

TEST(NcuCsvErrors, HeaderButNoKernelRows) {
  std::string m = parseError("\"ID\",\"Kernel Name\",\"a__b\"\n\"\",\"\",\"byte\"\n");
  EXPECT_NE(m.find("no kernel rows"), std::string::npos) << m;
}

TEST(NcuCsvErrors, DetailsPageIsRecognized) {
  std::string m;
  try {
    readNcuRawCsv(handmade("details_page.csv"));
  } catch (const UserError& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("details page"), std::string::npos) << m;
  EXPECT_NE(m.find("--page raw"), std::string::npos) << m;
}

TEST(NcuCsvErrors, MissingFileAndDirectory) {
  EXPECT_THROW(readNcuRawCsv(handmade("no_such.csv")), UserError);
  EXPECT_THROW(readNcuRawCsv(handmade("")), UserError);
}

}  // namespace
}  // namespace tf
