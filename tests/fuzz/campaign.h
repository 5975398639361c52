// The fuzz harness: a target (one loader of untrusted input, with the checks that say what
// a good outcome is) and a campaign (replay the found cases, check the seeds, then mutate
// for a bounded time). README.md beside this file explains the design.
//
// Entry points: FuzzTarget, Verdict, classify (runs one call of the code under test and
// sorts its outcome), runCampaign, CampaignOptions::fromEnvironment.
//
// Environment (for local runs; CI uses the defaults):
//   TRITONFORGE_FUZZ_SECONDS       mutation time per target (default 15)
//   TRITONFORGE_FUZZ_MUTATIONS     at most this many mutated inputs (default 20000; 0: no cap)
//   TRITONFORGE_FUZZ_SEED          the seed of the mutations (default: fixed per target)
//   TRITONFORGE_FUZZ_HANG_SECONDS  one input running longer is a hang (default 10)
//   TRITONFORGE_FUZZ_SAVE_DIR      where failing inputs go (default: the source tree's
//                                  tests/data/fuzz/<target>/found/, else the build folder)
//   TRITONFORGE_FUZZ_VERBOSE       set: print each new class of outcome
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/mutator.h"

namespace tf::fuzz {

// What one input came to.
struct Verdict {
  enum class Kind {
    kValue,  // the loader returned a value, and the value passed the target's checks
    kError,  // the loader threw one clear UserError (one line, naming the file)
    kBug,    // anything else: another exception, a UserError that is not one clear line,
             // a value that breaks what the loader promises
  };
  Kind kind = Kind::kValue;
  std::string what;       // the error's message, or what went wrong
  std::string signature;  // a coarse class of the outcome: an input with a new one is kept
                          // as a base for more mutations
};

// Runs `call` and sorts what happens. `call` returns "" for a good value, else what is wrong
// with it. A UserError is kError when its message is one line (no control characters) that
// starts with `label` (the file, as the loader names it); with `label` empty, every
// exception is a bug (the worker's replies never throw).
Verdict classify(const std::string& label, const std::function<std::string()>& call);

class FuzzTarget {
 public:
  virtual ~FuzzTarget() = default;
  // The folder under tests/data/fuzz/ (seeds/ and found/), and the file suffix of its inputs.
  virtual std::string name() const = 0;
  virtual std::string suffix() const = 0;
  virtual MutationSpace space() = 0;
  // Runs the code under test on one input. Must be deterministic.
  virtual Verdict run(const std::string& input) = 0;
};

struct CampaignOptions {
  double seconds = 15;
  // A cap on the mutated inputs (0: none), so that a run sees the same inputs on any machine:
  // a slower one stops earlier on the time and sees a prefix of them, never others.
  size_t max_mutations = 20000;
  uint64_t seed = 0;
  double hang_seconds = 10;
  std::filesystem::path data_dir;   // tests/data/fuzz/<target>
  std::filesystem::path save_dir;   // where failing inputs are written
  size_t max_bugs = 10;             // stop after this many classes of failure

  // The defaults above, changed by the environment variables at the top of this file.
  static CampaignOptions fromEnvironment(const FuzzTarget& target, uint64_t default_seed);
};

struct CampaignResult {
  size_t found = 0;                 // found/ inputs replayed
  size_t seeds = 0;
  size_t seed_values = 0;           // seeds that loaded as values
  size_t mutated = 0;               // mutated inputs run
  size_t values = 0, errors = 0;    // among the mutated inputs
  size_t signatures = 0;            // distinct outcome classes seen
  size_t corpus = 0;                // inputs kept as bases at the end
  double slowest_seconds = 0;       // the longest any one input ran
  std::vector<std::string> bugs;    // "where: what", one per class of failure
  size_t repeats = 0;               // further failing inputs of a class already listed
  std::vector<std::string> bad_seeds;  // seeds that did not load as values: "file: what"
  std::string summary() const;
};

// Replays found/, checks seeds/, then mutates until the time is up. A failing input is saved
// (CampaignOptions::save_dir) before the campaign goes on; an input that hangs or crashes the
// process is saved first, by a watchdog thread or a signal handler, so that every failure can
// be replayed.
CampaignResult runCampaign(FuzzTarget& target, const CampaignOptions& options);

// The inputs in a folder, by file name (empty when it does not exist).
std::vector<std::pair<std::string, std::string>> readInputs(const std::filesystem::path& dir);
// FNV-1a of the bytes, 16 hex digits: names a saved input.
std::string contentHash(const std::string& data);

}  // namespace tf::fuzz
