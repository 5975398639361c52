// The pass census (docs/census.md): every transformation pass tried on every @triton.jit
// kernel of a set of sources, each outcome recorded (applied, or refused with its reason) with
// the kernel's analysis facts that explain refusals, and the reasons grouped into classes.
//
// Each file is parsed once by the worker; every trial runs through a PassApplier (the one
// wrapper every pass runs through, variant/pass_applier.h) on a module IR built from that
// parse, as `tritonforge transform --no-compile` would run it, so that a census of thousands
// of trials needs one worker and one parse per file. An applied result is parsed again
// (a pass that writes Python that does not parse is a bug, counted as "broken").
//
// Entry points: censusProbe (the arguments a pass is tried with), reasonClass (a reason's
// class), runCensus, censusJson, censusSummaryText.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tf {

class WorkerProcess;
struct PassContext;

inline constexpr const char* kCensusSchema = "tritonforge.census/1";

// What became of one pass on one kernel.
struct CensusTrial {
  enum class Status {
    kApplied,   // the rewrite parses
    kRefused,   // a precondition failed (reason), or the census had nothing to try it with
    kBroken,    // the rewrite does not parse: a bug of the pass
    kCrashed,   // the pass threw (an internal error on this kernel): a bug of the pass
  };
  std::string pass;
  std::string spec;        // "retile:BLOCK=256": what was tried
  Status status = Status::kRefused;
  std::string reason;      // the pass's own text (refused, broken, crashed)
  std::string reason_class;  // reasonClass(reason)
  std::string family;      // reasonFamily(reason_class)
  double seconds = 0;
};

struct CensusKernel {
  std::string name;
  int line = 0;
  nlohmann::json facts = nlohmann::json::object();  // what explains refusals
  std::vector<CensusTrial> trials;
  std::set<std::string> names;  // what its reasons may name (reasonClass)
};

struct CensusFile {
  std::string path;  // as given
  std::vector<CensusKernel> kernels;
  double parse_seconds = 0;
};

struct CensusOptions {
  std::set<std::string> passes;        // empty: every pass
  std::set<std::string> switched_off;  // --no-pass (validated)
  bool check = true;                   // parse applied results again
};

const char* toString(CensusTrial::Status status);

// The pass spec the census tries `pass` with on the kernel of `ctx`: the pass's defaults, and
// for the passes that do nothing without arguments a value that changes something (retile:
// the first constexpr tile size at twice its written value; launch: num_warps=8, or 4 where 8
// is written; tensor-cores: loads=descriptor; memory-hints: offsets=1). "" with `why` set when
// there is nothing to try (no constexpr tile size to retile).
std::string censusProbe(const std::string& pass, const PassContext& ctx, std::string* why);

// A reason with what varies between kernels replaced: quoted text ('x', `x`) by '<v>' and
// `<e>`, the identifiers of `names` (kernel, parameter, local and function names of the
// module) by <name>, numbers by N, a list of names by "<name>, ...". "no launch of _attn_fwd
// in this file" and the same of another kernel share one class. A name is ambiguous with the
// reason's own words: in the sentence a few English words ("a", "mask", "row") are never
// names; inside parentheses, where the reasons show code ("P * T + tl.arange(0, T)"), only
// names with an underscore, a digit or mixed case, and names the sentence had, are replaced.
std::string reasonClass(std::string_view reason, const std::set<std::string>& names);
// The identifiers of a reason that could be names (not attributes, not in quotes).
std::set<std::string> reasonWords(std::string_view reason);
// Sets each refusal's class and family. A kernel's names are those of CensusKernel::names but
// the reasons' own words: the identifiers some reason prints for a kernel without such a name
// ("BLOCK" of tl.arange(0, BLOCK), "scale" of E * scale), found over all of `files`; so a
// class depends on the census it is part of, not on one kernel's spelling.
void classifyReasons(std::vector<CensusFile>& files);

// The coarse family of a class: "needs-task" (no launch of the kernel in its file, so only a
// task naming the launcher elsewhere gives the launch; or parameter types, tolerances),
// "launch-form" (launched at module level, through *args / **kwargs), "absent" (the kernel
// lacks the construct the pass rewrites: no dot, no exp, no loop; the refusal is right),
// "census" (nothing to try the pass with), "crash", "broken", else "precondition".
std::string reasonFamily(std::string_view reason_class, CensusTrial::Status status);

// Runs the census over `paths` with one worker. Throws UserError for a file that is missing,
// not UTF-8 or not Python (a syntax error), before anything is printed.
std::vector<CensusFile> runCensus(WorkerProcess& worker, const std::vector<std::filesystem::path>& paths,
                                  const CensusOptions& options);

// The census as JSON (schema tritonforge.census/1): the files with their kernels, facts and
// trials, and the counts of censusCounts.
nlohmann::json censusJson(const std::vector<CensusFile>& files, const CensusOptions& options);
// Counts: per pass applied / refused / broken / crashed; per reason class the kernels and
// files it blocks, the passes it stops and one example (file:kernel).
nlohmann::json censusCounts(const std::vector<CensusFile>& files);
// The counts as text (the command's default output).
std::string censusSummaryText(const nlohmann::json& counts);

}  // namespace tf
