// The four fuzz targets of issue 11: what each loader is given and what it must come to.
//
//   task        loadTask on task.toml in a folder that holds the source and harness files
//   ncu_csv     readNcuRawCsv + kernelMetricsFromTable on raw.csv
//   worker      each line as the worker writes it: parseReplyLine, then every typed result
//               the core makes of a reply (measurementFromReply, compile/warm/parse/ceilings
//               replies, parseCompiled, the hello's protocol, GPU limits and environment)
//   results_db  the bytes of a results database, opened read-only and read-write, listed,
//               looked up and written to
//
// Entry points: makeTarget (by name), kTargetNames, makeSeedDatabase (the seeds of
// results_db are databases the code itself made).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/campaign.h"

namespace tf::fuzz {

inline const std::vector<std::string> kTargetNames = {"task", "ncu_csv", "worker", "results_db"};

// `work_dir`: an empty folder the target may use for its files.
std::unique_ptr<FuzzTarget> makeTarget(const std::string& name, const std::filesystem::path& work_dir);

// What the results_db seeds hold (their lookups use these keys).
enum class SeedDb {
  kCurrent,       // made by ResultsDb as it is: a finished run, a killed run, measurements, trace
  kCurrentSmall,  // the same with 512-byte pages (a denser file for byte mutations)
  kSchema1,       // a schema-1 file as the first tritonforge wrote it (migrated when written)
};
// Writes a fresh database of that kind to `path` (which must not exist).
void makeSeedDatabase(const std::filesystem::path& path, SeedDb kind);

}  // namespace tf::fuzz
