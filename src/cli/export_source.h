// Where `tritonforge export` reads from: an optimize result.json, or a results database, from
// which it builds the same result shape (schema tritonforge.optimize/1: task, tunables,
// candidates) so that one code path (report/config_export) picks the best per shape.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tf {

// True when the file starts with SQLite's header ("SQLite format 3\0").
bool isSqliteFile(const std::filesystem::path& path);

// Every measurement the database holds for the task of one run (`run`: its id; none: the most
// recent run), on the source as written and in that run's environment (GPU, driver, Triton,
// torch, tritonforge, timing settings), earlier runs' rows included: one candidate per
// configuration, its per-case times, status ok only when every case it ran was verified.
// The task's source comes from the run's task file, read again (autotune export needs it).
// Throws UserError naming the file for a database without runs, an unknown run, or a run
// with no measurement of its source as written.
nlohmann::json resultFromDatabase(const std::filesystem::path& db_path, std::optional<int64_t> run);

}  // namespace tf
