// `optimize` as a function, for the commands that run it: `optimize` itself and
// `check --retune` (a warm start from the recorded best).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "variant/config.h"

namespace tf {

struct OptimizeFlags {
  std::string task;
  double budget = 60;
  std::string out = "tritonforge-out";
  bool json = false;
  bool progress = false;  // with --json: progress on stderr all the same (the Python API reads it)
  std::string strategy = "auto";
  uint64_t seed = 0;
  int jobs = 0;
  int max_candidates = 0;
  int stall_rounds = 3;
  int batch = 0;
  double timing_ms = 250;
  bool keep_work = false;
  double compile_timeout = 180;
  double run_timeout = 120;
  std::string db;
  bool no_db = false;
  bool fresh = false;
  std::string engine = "rules";
  std::string llm_endpoint;            // default: $TRITONFORGE_LLM_ENDPOINT
  int llm_max_requests = 8;
  double llm_timeout = 60;
  bool dry_run = false;
  std::vector<std::string> only;
  std::vector<std::string> no_pass;
  bool no_passes = false;
  bool no_diagnosis = false;
  double within_roofline = -1;
  std::string save_baseline;
  // --effort quick|default|full: a preset of the flags above; a flag given on the command
  // line (named in `given`, e.g. "--budget") keeps its value. See applyEffort.
  std::string effort = "default";
  std::set<std::string> given;
  // Not flags: what `check --retune` sets.
  std::vector<Config> start_configs;   // a warm start (OptimizeOptions::start_configs)
  bool summary_to_stderr = false;      // the human summary on stderr (stdout holds check's report)
};

// Sets the flags of the effort preset that were not given on the command line. Throws
// UserError for an unknown effort.
//   quick    --budget 12 --stall-rounds 1 --timing-ms 100 --strategy local --no-passes, and
//            warm-started from the results database
//   default  today's settings, unchanged
//   full     --budget 300 --stall-rounds 0 (never), wider parameter domains, every pass tried
void applyEffort(OptimizeFlags& f);

// Runs optimize as the command line asks; returns its exit code (0, or 3 without a GPU).
int runOptimize(const OptimizeFlags& f, const GlobalOptions& global);

}  // namespace tf
