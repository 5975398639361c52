// Nsight Compute's raw page as CSV, as `ncu --import R.ncu-rep --csv --page raw` writes it:
// one header row of column names, one row of units, then one row per profiled kernel launch
// (about 2,200 columns with --set full). Numbers may carry thousands separators ("65,536").
//
// Entry points: parseNcuRawCsv (text) and readNcuRawCsv (a file). Anything that is not such a
// table throws UserError("<file>: <problem>"): not a CSV, the details page instead of the raw
// page, no "Kernel Name" column, no metric columns, no kernel rows, a row cut short (a
// truncated file). Lines ncu itself prints ("==PROF== ...", "==WARNING== ...") before the
// table are skipped.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tf {

struct NcuTable {
  std::string label;                              // the file, for messages
  std::vector<std::string> columns;
  std::vector<std::string> units;                 // one per column; "" where none
  std::vector<std::vector<std::string>> rows;     // one per kernel launch, one field per column
  std::vector<int> row_lines;                     // the line each row starts on (1-based)

  // Index of the column named `name`, or -1.
  int columnIndex(std::string_view name) const;
};

NcuTable parseNcuRawCsv(std::string_view text, const std::string& label);
NcuTable readNcuRawCsv(const std::filesystem::path& path);

// One CSV record per element (RFC 4180: fields in double quotes may hold commas, line
// breaks and doubled quotes). `lines` gets the line each record starts on, counting the
// text's first line as `first_line`. Throws UserError("<label>: ...") for a quote left open
// at the end (a truncated file).
std::vector<std::vector<std::string>> splitCsvRecords(std::string_view text, const std::string& label,
                                                      std::vector<int>* lines = nullptr, int first_line = 1);

}  // namespace tf
