#include "measure/ncu_metrics.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace tf {
namespace {

bool allDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "1,234,567" (the integer part of a number): groups of three after the first.
bool validThousands(std::string_view s) {
  size_t first = s.find(',');
  if (first == std::string_view::npos) return allDigits(s);
  if (first == 0 || first > 3 || !allDigits(s.substr(0, first))) return false;
  size_t pos = first;
  while (pos < s.size()) {
    if (s[pos] != ',' || pos + 4 > s.size() || !allDigits(s.substr(pos + 1, 3))) return false;
    pos += 4;
  }
  return true;
}

double prefixFactor(char c) {
  switch (c) {
    case 'n': return 1e-9;
    case 'u': return 1e-6;
    case 'm': return 1e-3;
    case 'K': return 1e3;
    case 'M': return 1e6;
    case 'G': return 1e9;
    case 'T': return 1e12;
    case 'P': return 1e15;
    default: return 0;
  }
}

double tokenScale(std::string_view tok) {
  static constexpr std::string_view kBases[] = {"second", "byte",  "hz",      "cycle",  "inst",  "sector",
                                                "request", "warp", "thread", "block", "wavefront", "transaction"};
  for (auto b : kBases) {
    if (tok == b) return 1;
  }
  if (tok.size() > 1) {
    double f = prefixFactor(tok[0]);
    if (f != 0) {
      for (auto b : kBases) {
        if (tok.substr(1) == b) return f;
      }
    }
  }
  return 1;
}

}  // namespace

std::optional<double> parseNcuNumber(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  std::string clean(s);
  if (s.find(',') != std::string_view::npos) {
    std::string_view body = s;
    if (body.front() == '-' || body.front() == '+') body.remove_prefix(1);
    size_t dot = body.find('.');
    std::string_view int_part = body.substr(0, dot);
    if (!validThousands(int_part)) return std::nullopt;
    if (dot != std::string_view::npos && body.substr(dot + 1).find(',') != std::string_view::npos) return std::nullopt;
    clean.clear();
    for (char c : s) {
      if (c != ',') clean.push_back(c);
    }
  }
  const char* begin = clean.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  // strtod accepts "inf", "nan", hex floats: only plain decimal numbers are metric values.
  for (char c : clean) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
      return std::nullopt;
    }
  }
  return v;
}

double ncuUnitScale(std::string_view unit) {
  size_t slash = unit.find('/');
  if (slash == std::string_view::npos) return tokenScale(unit);
  double num = tokenScale(unit.substr(0, slash));
  double den = ncuUnitScale(unit.substr(slash + 1));
  return den == 0 ? num : num / den;
}

const MetricValue* KernelMetrics::find(std::string_view metric) const {
  auto it = values_.find(metric);
  return it == values_.end() ? nullptr : &it->second;
}

std::optional<double> KernelMetrics::get(std::string_view metric) const {
  const MetricValue* v = find(metric);
  if (!v) return std::nullopt;
  return v->base;
}

std::optional<double> KernelMetrics::first(std::initializer_list<std::string_view> metrics) const {
  for (auto m : metrics) {
    if (auto v = get(m)) return v;
  }
  return std::nullopt;
}

std::string KernelMetrics::text(std::string_view column) const {
  const MetricValue* v = find(column);
  return v ? v->text : std::string();
}

std::vector<std::pair<std::string, double>> KernelMetrics::matching(std::string_view prefix,
                                                                    std::string_view suffix) const {
  std::vector<std::pair<std::string, double>> out;
  for (auto it = values_.lower_bound(prefix); it != values_.end(); ++it) {
    const std::string& name = it->first;
    if (name.compare(0, prefix.size(), prefix) != 0) break;
    if (name.size() < prefix.size() + suffix.size()) continue;
    if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (!it->second.base) continue;
    out.emplace_back(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()), *it->second.base);
  }
  return out;
}

std::string ncuBaseName(const std::string& name) {
  std::string s = name.substr(0, name.find('('));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  // Drop a return type ("void f") but not spaces inside template arguments.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (s[i] == ' ' && depth == 0) start = i + 1;
  }
  s = s.substr(start);
  size_t colon = s.rfind("::", s.find('<'));
  if (colon != std::string::npos) s = s.substr(colon + 2);
  return s;
}

std::vector<KernelMetrics> kernelMetricsFromTable(const NcuTable& table) {
  std::vector<KernelMetrics> out;
  const int name_col = table.columnIndex("Kernel Name");
  const int id_col = table.columnIndex("ID");
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    KernelMetrics k;
    k.name = row[name_col];
    k.id = id_col >= 0 ? row[id_col] : std::to_string(r);
    k.source_line = r < table.row_lines.size() ? table.row_lines[r] : 0;
    for (size_t c = 0; c < table.columns.size(); ++c) {
      MetricValue v;
      v.text = row[c];
      v.unit = c < table.units.size() ? table.units[c] : "";
      v.number = parseNcuNumber(v.text);
      if (v.number) {
        // A printed number near the double range in a large unit ("1e308 Tbyte/second")
        // overflows: no figure, like text that is no number.
        double base = *v.number * ncuUnitScale(v.unit);
        if (std::isfinite(base)) v.base = base;
      }
      k.set(table.columns[c], std::move(v));
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace tf
