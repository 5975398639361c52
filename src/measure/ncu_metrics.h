// The metrics of one profiled kernel launch, from Nsight Compute's raw page (ncu_csv.h).
//
// Values are kept as printed (text, unit) and as numbers in the unit's base: ncu scales units
// for display ("usecond", "Kbyte", "Gbyte/second", "cycle/nsecond"), so every number is
// converted to seconds, bytes, bytes/second, hertz, cycles... (SI prefixes, powers of 1000),
// and rules never depend on how ncu chose to print a figure.
//
// Entry points: kernelMetricsFromTable, KernelMetrics::get / first / matching.
#pragma once

#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "measure/ncu_csv.h"

namespace tf {

// "65,536" -> 65536, "1,234.5" -> 1234.5, "3.2e+05" -> 320000; "n/a", "" or text -> nullopt.
std::optional<double> parseNcuNumber(std::string_view text);
// The factor from `unit` to its base: "usecond" -> 1e-6, "Kbyte" -> 1e3, "cycle/nsecond" -> 1e9,
// "%" -> 1. Units it does not know have factor 1.
double ncuUnitScale(std::string_view unit);

struct MetricValue {
  std::string text;                 // as printed
  std::string unit;                 // as printed ("" where none)
  std::optional<double> number;     // the printed number, separators removed
  std::optional<double> base;       // number * ncuUnitScale(unit), when finite
};

class KernelMetrics {
 public:
  std::string name;         // "Kernel Name"
  std::string id;           // "ID" (ncu's launch index), or the row's position
  int source_line = 0;      // the CSV line of its row

  // The value of a metric in its base unit, or nullopt when the column is missing or not a number.
  std::optional<double> get(std::string_view metric) const;
  // The first of several names that is present (names differ between ncu versions).
  std::optional<double> first(std::initializer_list<std::string_view> metrics) const;
  // The text of a column ("Block Size" -> "(128, 1, 1)"), "" when missing.
  std::string text(std::string_view column) const;
  const MetricValue* find(std::string_view metric) const;
  bool has(std::string_view metric) const { return find(metric) != nullptr; }
  // Every numeric metric named prefix + X + suffix, as (X, base value), in name order.
  std::vector<std::pair<std::string, double>> matching(std::string_view prefix, std::string_view suffix) const;
  size_t size() const { return values_.size(); }

  void set(const std::string& column, MetricValue v) { values_[column] = std::move(v); }

 private:
  std::map<std::string, MetricValue, std::less<>> values_;
};

// The function's own name in ncu's "Kernel Name": "void ns::f<int>(float *, int)" -> "f<int>";
// a Triton kernel's name ("softmax_rows") is returned as it is.
std::string ncuBaseName(const std::string& kernel_name);

// One KernelMetrics per row of the table, in row order.
std::vector<KernelMetrics> kernelMetricsFromTable(const NcuTable& table);

}  // namespace tf
