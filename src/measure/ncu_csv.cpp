#include "measure/ncu_csv.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/fs.h"
#include "util/text.h"

namespace tf {
namespace {

constexpr std::string_view kExportHint = "export it with `ncu --import R.ncu-rep --csv --page raw > FILE`";

// Offset of the first line that is neither blank nor an ncu message ("==PROF== ...").
size_t tableStart(std::string_view text, int* line) {
  size_t pos = 0;
  *line = 1;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ' || l.back() == '\t')) l.remove_suffix(1);
    if (!l.empty() && l.rfind("==", 0) != 0) return pos;
    pos = end + 1;
    ++*line;
  }
  return text.size();
}

// A field quoted in a message: one line (every control character a blank), cut at a
// character boundary.
std::string shortText(std::string_view s, size_t n = 40) {
  std::string out = cutUtf8(s, n);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return s.size() > n ? out + "..." : out;
}

}  // namespace

int NcuTable::columnIndex(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::vector<std::string>> splitCsvRecords(std::string_view text, const std::string& label,
                                                      std::vector<int>* lines, int first_line) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false;
  bool field_started = false;   // something (even "") was read into this field
  int line = first_line;
  int record_line = first_line;
  int quote_line = 0;
  auto endField = [&] {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto endRecord = [&] {
    endField();
    // A blank line is no record.
    if (!(record.size() == 1 && record[0].empty())) {
      records.push_back(std::move(record));
      if (lines) lines->push_back(record_line);
    }
    record.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    switch (c) {
      case '"':
        if (!field_started && field.empty()) {
          in_quotes = true;
          quote_line = line;
          field_started = true;
        } else {
          field.push_back(c);  // a stray quote inside an unquoted field: keep it
        }
        break;
      case ',':
        endField();
        break;
      case '\r':
        if (i + 1 < text.size() && text[i + 1] == '\n') break;  // \r\n: the \n ends the record
        field.push_back(c);
        break;
      case '\n':
        endRecord();
        ++line;
        record_line = line;
        break;
      default:
        field.push_back(c);
        field_started = true;
    }
  }
  if (in_quotes) {
    throw UserError(fmt::format("{}: a quoted field opened on line {} is never closed (a truncated file?)", label,
                                quote_line));
  }
  if (!field.empty() || field_started || !record.empty()) endRecord();
  return records;
}

NcuTable parseNcuRawCsv(std::string_view text, const std::string& label) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  if (text.find('\0') != std::string_view::npos) {
    throw UserError(fmt::format("{}: not a CSV file (it holds binary data; an .ncu-rep report must be exported: {})",
                                label, kExportHint));
  }
  int first_line = 1;
  size_t start = tableStart(text, &first_line);
  if (start >= text.size()) throw UserError(fmt::format("{}: empty file, expected Nsight Compute's raw CSV", label));
  if (!isValidUtf8(text)) throw UserError(fmt::format("{}: not a CSV file (not valid UTF-8 text)", label));

  std::vector<int> lines;
  auto records = splitCsvRecords(text.substr(start), label, &lines, first_line);
  if (records.empty()) throw UserError(fmt::format("{}: empty file, expected Nsight Compute's raw CSV", label));

  NcuTable t;
  t.label = label;
  t.columns = records[0];
  if (t.columns.size() < 2) {
    throw UserError(fmt::format("{}: not a CSV file (line {} has no comma-separated columns: '{}')", label, lines[0],
                                shortText(t.columns.empty() ? "" : t.columns[0])));
  }
  if (t.columnIndex("Metric Name") >= 0 && t.columnIndex("Metric Value") >= 0) {
    throw UserError(fmt::format("{}: this is Nsight Compute's details page (one metric per line); "
                                "the raw page is needed: {}", label, kExportHint));
  }
  if (t.columnIndex("Kernel Name") < 0) {
    bool looks_ncu = t.columnIndex("ID") >= 0;
    for (const auto& c : t.columns) looks_ncu = looks_ncu || c.find("__") != std::string::npos;
    if (looks_ncu) throw UserError(fmt::format("{}: missing column 'Kernel Name' in the header", label));
    throw UserError(fmt::format("{}: not an Nsight Compute raw CSV (the header '{}' has no 'Kernel Name' column)",
                                label, shortText(t.columns[0] + "," + t.columns[1])));
  }
  bool any_metric = false;
  for (const auto& c : t.columns) any_metric = any_metric || c.find("__") != std::string::npos;
  if (!any_metric) {
    throw UserError(fmt::format("{}: no metric columns (names like 'gpu__time_duration.sum'); {}", label,
                                kExportHint));
  }

  const size_t n = t.columns.size();
  size_t first_row = 1;
  const int name_col = t.columnIndex("Kernel Name");
  const int id_col = t.columnIndex("ID");
  // The units row: the kernel's own columns (ID, Kernel Name) are empty there.
  if (records.size() > 1 && records[1].size() == n && records[1][name_col].empty() &&
      (id_col < 0 || records[1][id_col].empty())) {
    t.units = records[1];
    first_row = 2;
  } else {
    t.units.assign(n, "");
  }
  for (size_t r = first_row; r < records.size(); ++r) {
    auto& rec = records[r];
    if (rec.size() < n) {
      throw UserError(fmt::format("{}: line {} has {} fields where the header has {} (a truncated file?)", label,
                                  lines[r], rec.size(), n));
    }
    if (rec.size() > n) {
      throw UserError(fmt::format("{}: line {} has {} fields where the header has {}", label, lines[r], rec.size(), n));
    }
    t.rows.push_back(std::move(rec));
    t.row_lines.push_back(lines[r]);
  }
  if (t.rows.empty()) {
    throw UserError(fmt::format("{}: no kernel rows (the header{} is there, but ncu profiled no kernel; check "
                                "--kernel-name and --launch-skip)", label, first_row == 2 ? " and units" : ""));
  }
  return t;
}

NcuTable readNcuRawCsv(const std::filesystem::path& path) {
  std::string text = readTextFile(path, "Nsight Compute CSV");
  return parseNcuRawCsv(text, path.string());
}

}  // namespace tf
