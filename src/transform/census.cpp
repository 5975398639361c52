// The pass census (census.h). Map:
//   CensusPassApplier  the PassApplier of the census: rewrites on a module IR built from the
//                      file's one parse, checks that an applied result parses
//   censusProbe        the spec each pass is tried with
//   reasonClass, reasonFamily   a reason's class and family
//   kernelFacts        the analysis facts recorded beside the trials
//   runCensus          files -> kernels -> passes
//   censusCounts, censusJson, censusSummaryText   the outputs
#include "transform/census.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <chrono>
#include <cmath>
#include <functional>
#include <iterator>
#include <optional>
#include <regex>

#include "kernel/module_ir.h"
#include "task/imported_kernels.h"
#include "task/source_parser.h"
#include "task/task.h"
#include "transform/kernel_normalize.h"
#include "transform/pass.h"
#include "transform/pass_applier.h"
#include "transform/pass_context.h"
#include "util/build_info.h"
#include "util/error.h"
#include "variant/pass_applier.h"
#include "worker/worker_process.h"

namespace tf {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

// Census probes that have nothing to try say so with this prefix (family "census").
constexpr std::string_view kCensusPrefix = "census: ";

// Runs passes on one parsed file. Every trial builds its module IR afresh from the one parse
// (as `transform` builds it from its own parse), so that no trial sees what another consumed
// (the IR's inline budget). A request without params is tried with censusProbe's spec.
class CensusPassApplier final : public PassApplier {
 public:
  // `imported`: the kernels and helpers of the package's other modules the file imports (its
  // normal form reads program ids through them), or null.
  CensusPassApplier(WorkerProcess& worker, const ParsedSource& src, bool check, std::set<std::string> switched_off,
                    const std::vector<Kernel>* imported)
      : PassApplier(std::move(switched_off)), worker_(worker), src_(src), check_(check), imported_(imported) {}

  // What the last request was tried with ("" when the census had nothing to try).
  const std::string& lastSpec() const { return last_spec_; }

 protected:
  std::vector<std::string> known() const override {
    std::vector<std::string> out;
    for (const auto& p : allPasses()) out.push_back(p->info().name);
    return out;
  }

  PassApplication rewrite(const PassRequest& request) override {
    PassApplication out;
    out.status = PassApplication::Status::kRefused;
    last_spec_.clear();
    const Pass* pass = findPass(request.pass);
    ModuleIR ir = buildModuleIR(src_);
    const Kernel* k = ir.kernel(request.kernel);
    assert(k && "the census asks only for kernels of the file");
    PassContext ctx = PassContext::make(ir, *k);
    std::string why;
    std::string spec = request.params.empty() ? censusProbe(request.pass, ctx, &why)
                                              : passSpecText(request.pass, request.params);
    if (spec.empty()) {
      out.message = std::string(kCensusPrefix) + why;
      return out;
    }
    last_spec_ = spec;
    try {
      PassArgs args = validateArgs(*pass, parsePassSpec(spec));
      PassOutcome o = runWithNormalForm(*pass, args, ctx, src_, imported_, normal_form_, src_.path);
      if (!o.applied) {
        out.message = o.reason;
        return out;
      }
      out.status = PassApplication::Status::kApplied;
      out.source = std::move(o.source);
      out.notes = std::move(o.notes);
    } catch (const UserError& e) {
      out.message = e.what();  // as transform: the pass cannot run on this kernel
    }
    return out;
  }

  PassApplication check(const PassRequest& request, PassApplication applied) override {
    if (!check_) return applied;
    try {
      ParsedSource out = parseSource(worker_, src_.path, applied.source);
      if (!buildModuleIR(out).kernel(request.kernel)) {
        applied.status = PassApplication::Status::kBroken;
        applied.message = fmt::format("the rewritten source has no kernel '{}'", request.kernel);
      }
    } catch (const UserError& e) {
      applied.status = PassApplication::Status::kBroken;
      applied.message = fmt::format("the rewritten source does not parse ({})", e.what());
    }
    return applied;
  }

 private:
  WorkerProcess& worker_;
  const ParsedSource& src_;
  NormalFormRunner normal_form_{worker_};
  bool check_;
  const std::vector<Kernel>* imported_;
  std::string last_spec_;
};

bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Words of the reasons' own text that a kernel may also use as a name ("a", "mask", "row"):
// kept where they stand in a reason's sentence, so that the article of one kernel's reason is
// not that kernel's parameter a.
bool sentenceWord(std::string_view word) {
  static const std::set<std::string, std::less<>> kWords = {
      "K", "a", "an", "and", "as", "at", "be", "block", "by", "for", "grid", "if", "in", "is", "it", "kernel",
      "loop", "mask", "no", "not", "of", "on", "one", "or", "row", "rows", "the", "to", "value"};
  return kWords.count(word) > 0;
}

// Names that the reasons' code examples spell (in parentheses): kept there even where the
// kernel uses the same name.
bool exampleWord(std::string_view word) {
  static const std::set<std::string, std::less<>> kWords = {"BLOCK_K", "BLOCK_M", "BLOCK_N", "acc", "offs_m",
                                                             "offs_n", "pid_m",   "pid_n",   "s0",  "s1"};
  return kWords.count(word) > 0;
}

// A name that can only be a name: it has an underscore, a digit, or mixes cases.
bool unmistakable(std::string_view word) {
  bool lower = false, upper = false;
  for (char c : word) {
    if (c == '_' || std::isdigit(static_cast<unsigned char>(c))) return word.size() > 1;
    lower = lower || std::islower(static_cast<unsigned char>(c));
    upper = upper || std::isupper(static_cast<unsigned char>(c));
  }
  return lower && upper;
}

// Quoted text stands as one control character until the end, so that no name inside the
// placeholder is read ("<v>" of a kernel with a local v).
constexpr char kValueMark = '\x01';  // -> '<v>'
constexpr char kCodeMark = '\x02';   // -> `<e>`

// Quoted spans: '...' opened after a non-word character and closed before one (an apostrophe
// inside a word, "kernel's", is no quote), and `...`.
std::string replaceQuoted(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    bool opens = (c == '\'' && (i == 0 || !identChar(s[i - 1]))) || c == '`';
    if (opens) {
      size_t j = i + 1;
      for (; j < s.size(); ++j) {
        if (s[j] != c) continue;
        if (c == '`' || j + 1 == s.size() || !identChar(s[j + 1])) break;
      }
      if (j < s.size() && j > i + 1) {
        out += c == '`' ? kCodeMark : kValueMark;
        i = j + 1;
        continue;
      }
    }
    out += c;
    ++i;
  }
  return out;
}

json kernelFacts(const PassContext& ctx) {
  const Kernel& k = *ctx.kernel;
  int constexprs = 0;
  for (const auto& p : k.params) constexprs += p.is_constexpr ? 1 : 0;
  std::string autotune = "none";
  if (k.autotune) autotune = k.autotune->configs_understood ? "configs" : "computed";
  std::set<std::string> functions;
  int module_level = 0, starred = 0;
  for (const LaunchSite* s : ctx.sites) {
    if (s->function.empty()) ++module_level;
    else functions.insert(s->function);
    if (s->has_starred) ++starred;
  }
  int dots_in_loop = 0, tile_params = 0;
  for (const auto& d : ctx.facts.dots) dots_in_loop += d.in_loop ? 1 : 0;
  for (const auto& [_, u] : ctx.facts.params) tile_params += u.tile_extent ? 1 : 0;
  // A @triton.jit helper that other kernels call is no kernel of its own: the passes that
  // rewrite a launch have none to rewrite.
  int callers = 0;
  for (const auto& other : ctx.ir->kernels) {
    if (other.name == k.name) continue;
    bool calls = false;
    walk(*other.def, [&](const Node& n) {
      if (isType(n, "Call") && isType(n["func"], "Name") && n["func"]["id"] == k.name) calls = true;
      return !calls;
    });
    callers += calls ? 1 : 0;
  }
  // How the program ids are bound, beside the plain `pid = tl.program_id(0)` (pidVars): cast
  // (`tl.program_id(0).to(tl.int64)`), or several in one tuple assignment at the top level.
  int pid_cast = 0, pid_tuple = 0;
  walk(*k.def, [&](const Node& n) {
    if (isType(n, "Call") && isType(n["func"], "Attribute") && n["func"]["attr"] == "to" &&
        ctx.isTlCall(n["func"]["value"], "program_id")) {
      ++pid_cast;
    }
    return true;
  });
  for (const auto& st : ctx.body()) {
    if (!isType(st, "Assign") || !isType(st["value"], "Tuple")) continue;
    for (const auto& e : st["value"]["elts"]) {
      if (ctx.isTlCall(e, "program_id")) {
        ++pid_tuple;
        break;
      }
    }
  }
  std::vector<std::string> notes = k.notes;
  notes.insert(notes.end(), ctx.facts.notes.begin(), ctx.facts.notes.end());
  json j = {{"params", k.params.size()},
            {"constexprs", constexprs},
            {"tile_params", tile_params},
            {"autotune", autotune},
            {"heuristics", k.heuristics.size()},
            {"launches", ctx.sites.size()},
            {"called_by_kernels", callers},
            {"launch_functions", functions.size()},
            {"module_level_launches", module_level},
            {"starred_launches", starred},
            {"program_ids", ctx.programIdCalls()},
            {"pid_vars", ctx.pidVars().size()},
            {"pid_cast", pid_cast},
            {"pid_tuple", pid_tuple},
            {"num_programs", ctx.numProgramsCalls()},
            {"dots", ctx.facts.dots.size()},
            {"dots_in_loop", dots_in_loop},
            {"loops", ctx.facts.loops},
            {"loads", ctx.facts.loads},
            {"stores", ctx.facts.stores},
            {"atomics", ctx.facts.atomics},
            {"reductions", ctx.facts.reductions},
            {"calls_exp", ctx.facts.calls_exp},
            {"returns", ctx.hasReturn(true)},
            {"notes", notes.size()}};
  if (!notes.empty()) j["first_note"] = notes.front();
  return j;
}

// The names a reason may print unquoted: every kernel and function of the module, this
// kernel's parameters and the names it binds (not what it reads from outside: tl, range),
// and the parameters and locals of the functions that launch it.
std::set<std::string> reasonNames(const PassContext& ctx) {
  std::set<std::string> out;
  for (const auto& p : ctx.kernel->params) out.insert(p.name);
  for (const auto& [name, _] : storeCounts(*ctx.kernel->def)) out.insert(name);
  for (const auto& k : ctx.ir->kernels) out.insert(k.name);
  for (const auto& [name, _] : ctx.ir->functions) out.insert(name);
  for (const LaunchSite* site : ctx.sites) {
    auto fn = ctx.ir->functions.find(site->function);
    if (fn == ctx.ir->functions.end()) continue;
    out.insert(fn->second.params.begin(), fn->second.params.end());
    for (const auto& [name, _] : fn->second.assignments) out.insert(name);
  }
  return out;
}

// Calls fn(word, depth, at) for each identifier of a reason (after replaceQuoted) that could
// be a name: not an attribute (tl.dot: the API), not after a hyphen ("1-D"), not the "s" of
// "kernel's". `depth`: the parentheses and brackets around it.
void forEachReasonWord(const std::string& s, const std::function<void(const std::string&, int, size_t, size_t)>& fn) {
  int depth = 0;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    if (!identChar(c)) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && identChar(s[j])) ++j;
    char before = i > 0 ? s[i - 1] : ' ';
    bool contraction = before == '\'' && i > 1 && identChar(s[i - 2]);
    if (identStart(c) && before != '.' && before != '-' && !contraction) fn(s.substr(i, j - i), depth, i, j);
    i = j;
  }
}

}  // namespace

const char* toString(CensusTrial::Status s) {
  switch (s) {
    case CensusTrial::Status::kApplied: return "applied";
    case CensusTrial::Status::kRefused: return "refused";
    case CensusTrial::Status::kBroken: return "broken";
    case CensusTrial::Status::kCrashed: return "crashed";
  }
  return "?";
}

std::string censusProbe(const std::string& pass, const PassContext& ctx, std::string* why) {
  if (pass == "launch") {
    // num_warps=8 unless the kernel is launched with 8 already (then 4): the option every
    // launch takes, so the census sees whether the launches can be rewritten at all.
    for (const auto& set : kernelTunables(ctx)) {
      for (const auto& t : set.items) {
        if (t.param == "num_warps" && t.value == 8) return "launch:num_warps=4";
      }
    }
    return "launch:num_warps=8";
  }
  // The rule engine's proposal where a pass does nothing without arguments (rule_engine.cpp:
  // TMA descriptor loads for a compute-bound dot; offset hints for uncoalesced access).
  if (pass == "tensor-cores") return "tensor-cores:loads=descriptor";
  if (pass == "memory-hints") return "memory-hints:offsets=1";
  if (pass != "retile") return pass;
  // The first constexpr tile size the launcher writes (twice its value), else the first tile
  // size of the kernel (64, or twice its autotuned or default value).
  std::string first;
  std::optional<int64_t> first_value;
  std::vector<TunableSet> sets = kernelTunables(ctx);
  for (const auto& p : ctx.kernel->params) {
    auto u = ctx.facts.params.find(p.name);
    if (u == ctx.facts.params.end() || !u->second.tile_extent) continue;
    for (const auto& set : sets) {
      for (const auto& t : set.items) {
        if (t.param != p.name || !t.tunable || t.origin == TunableOrigin::kAutotune) continue;
        return fmt::format("retile:{}={}", p.name, t.value && *t.value > 0 ? *t.value * 2 : 64);
      }
    }
    if (first.empty()) {
      first = p.name;
      for (const auto& set : sets) {
        for (const auto& t : set.items) {
          if (t.param == p.name && t.value && *t.value > 0 && !first_value) first_value = *t.value * 2;
        }
      }
      if (!first_value && p.default_int && *p.default_int > 0) first_value = *p.default_int * 2;
    }
  }
  if (first.empty()) {
    *why = "the kernel has no constexpr tile size (tl.arange(0, P), a tile shape) to retile";
    return "";
  }
  return fmt::format("retile:{}={}", first, first_value.value_or(64));
}

std::string reasonClass(std::string_view reason, const std::set<std::string>& names) {
  std::string s = replaceQuoted(reason.substr(0, 400));
  // Which identifiers are names: in the sentence (outside parentheses) every name of the
  // kernel's but the sentence's own words; inside them (the reasons' code examples:
  // P * T + tl.arange(0, T)) only unmistakable names and those the sentence had.
  std::set<std::string> named;
  std::vector<std::pair<size_t, size_t>> spans;
  forEachReasonWord(s, [&](const std::string& word, int depth, size_t, size_t) {
    if (depth == 0 && names.count(word) && !sentenceWord(word)) named.insert(word);
  });
  forEachReasonWord(s, [&](const std::string& word, int depth, size_t b, size_t e) {
    if (!names.count(word)) return;
    bool name = depth == 0 ? !sentenceWord(word) : named.count(word) || (unmistakable(word) && !exampleWord(word));
    if (name) spans.push_back({b, e});
  });
  std::string out;
  size_t next_span = 0;
  size_t i = 0;
  while (i < s.size()) {
    if (next_span < spans.size() && spans[next_span].first == i) {
      out += "<name>";
      i = spans[next_span++].second;
      continue;
    }
    char c = s[i];
    bool after_word = i > 0 && identChar(s[i - 1]);
    if (identChar(c) && !std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && identChar(s[j])) ++j;
      out += s.substr(i, j - i);
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) && !after_word) {
      size_t j = i;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.' ||
                              ((s[j] == 'e' || s[j] == 'x') && j + 1 < s.size() && std::isxdigit(static_cast<unsigned char>(s[j + 1]))))) {
        ++j;
      }
      if (j > i && s[j - 1] == '.') --j;  // a sentence's full stop
      if (j < s.size() && identChar(s[j])) {  // 3D, 2x: a word, kept
        while (j < s.size() && identChar(s[j])) ++j;
        out += s.substr(i, j - i);
      } else {
        out += "N";
      }
      i = j;
      continue;
    }
    if (c == kValueMark) out += "'<v>'";
    else if (c == kCodeMark) out += "`<e>`";
    else out += c;
    ++i;
  }
  // Lists of names: "<name>, <name>, <name>" -> "<name>, ...".
  static const std::regex kNameList("<name>(, <name>)+");
  return std::regex_replace(out, kNameList, "<name>, ...");
}

std::set<std::string> reasonWords(std::string_view reason) {
  std::set<std::string> out;
  forEachReasonWord(replaceQuoted(reason.substr(0, 400)),
                    [&](const std::string& word, int, size_t, size_t) { out.insert(word); });
  return out;
}

std::string reasonFamily(std::string_view cls, CensusTrial::Status status) {
  if (status == CensusTrial::Status::kCrashed) return "crash";
  if (status == CensusTrial::Status::kBroken) return "broken";
  if (status == CensusTrial::Status::kApplied) return "";
  if (cls.substr(0, kCensusPrefix.size()) == kCensusPrefix) return "census";
  auto has = [&](std::string_view what) { return cls.find(what) != std::string_view::npos; };
  // The kernel is launched from another file (only a task naming that launcher gives the
  // launch), or the pass asks for what a task says (parameter types, tolerances).
  if ((has("no launch of ") && has(" in this file")) || has("task") || has("--signature") || has("tolerance")) {
    return "needs-task";
  }
  if (has("launched at module level") || has("passes *args") || (has("no launch of ") && has(" inside a function"))) {
    return "launch-form";
  }
  // The kernel lacks what the pass rewrites (a dot, an exp, a loop, a causal mask): it is no
  // candidate, and the refusal is right. Only the passes' first checks for their construct
  // are listed; a construct present in another form than the pass reads stays a precondition.
  static const std::vector<std::string_view> kAbsent = {
      "has no loop computing a max followed by a loop summing exp(",  // online-softmax
      "no tl.dot inside two or more nested loops",                    // flatten-loops
      "no tl.where whose condition has a causal conjunct",            // causal-split
      "no rank-N update",                                             // implicit-gemm
      "calls no tl.exp",                                              // exp2
      "has no tl.dot",                                                // tensor-cores, relayout
      "has no loop with a tl.dot at the top of its body",             // split-k
      "reads no address in two sibling loops over the same range",    // eviction-hints
      "no loop at the top level of the kernel body",                  // tail-split
      "has no loop at the top of its body",                           // split-rows
      "the kernel has a tl.dot: vectorize handles",                   // vectorize (1-D, no dot)
      "has no loop with a tl.dot in its own body",                    // warp-specialize
      "no absolute maximum (X.abs().max(), amax) in the functions",   // launcher-glue
      "is summed whole after the launch (torch.sum(t)",               // fused-sum
      "is converted to another dtype after the launch (t.to(dtype)",  // fused-cast
      "has no loop",                                                  // prefetch (and others' loops)
      "holds a tl.dot (Triton pipelines a dot's loads itself)",        // prefetch
      "no statement at the top of the loop's body holds a tl.load",   // prefetch
  };
  for (auto a : kAbsent) {
    if (has(a)) return "absent";
  }
  return "precondition";
}

std::vector<CensusFile> runCensus(WorkerProcess& worker, const std::vector<fs::path>& paths,
                                  const CensusOptions& options) {
  // Every file is read and checked before the first parse, so that a missing one ends the
  // command at once.
  std::vector<std::string> texts;
  for (const auto& p : paths) texts.push_back(readSourceFile(p, "kernel source"));
  std::vector<std::string> passes;
  for (const auto& p : allPasses()) {
    const std::string& name = p->info().name;
    if (options.passes.empty() || options.passes.count(name)) passes.push_back(name);
  }
  std::vector<CensusFile> out;
  for (size_t f = 0; f < paths.size(); ++f) {
    CensusFile file;
    file.path = paths[f].string();
    auto t0 = std::chrono::steady_clock::now();
    ParsedSource src = parseSource(worker, paths[f], texts[f]);
    file.parse_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ModuleIR ir = buildModuleIR(src);
    std::unique_ptr<ImportedKernels> imported =
        loadImportedKernels(worker, src, fs::absolute(paths[f]), packageOf(fs::absolute(paths[f])));
    CensusPassApplier applier(worker, src, options.check, options.switched_off,
                              imported ? &imported->kernels : nullptr);
    for (const auto& k : ir.kernels) {
      if (k.home) continue;  // imported from another module: censused there
      CensusKernel ck;
      ck.name = k.name;
      if (auto pos = nodePos(*k.def)) ck.line = pos->line;
      {
        ModuleIR fresh = buildModuleIR(src);
        PassContext ctx = PassContext::make(fresh, *fresh.kernel(k.name));
        ck.facts = kernelFacts(ctx);
        ck.names = reasonNames(ctx);
      }
      for (const auto& pass : passes) {
        if (applier.switchedOff(pass)) continue;
        CensusTrial t;
        t.pass = pass;
        try {
          PassApplication a = applier.apply({texts[f], k.name, pass, json::object()});
          t.seconds = a.seconds;
          t.spec = applier.lastSpec();
          switch (a.status) {
            case PassApplication::Status::kApplied: t.status = CensusTrial::Status::kApplied; break;
            case PassApplication::Status::kBroken: t.status = CensusTrial::Status::kBroken; break;
            default: t.status = CensusTrial::Status::kRefused; break;
          }
          if (!a.applied()) t.reason = a.message;
        } catch (const EnvironmentError&) {
          throw;  // the worker is gone: no census
        } catch (const std::exception& e) {
          // A pass that throws on real code is a bug; the census counts it and goes on.
          t.status = CensusTrial::Status::kCrashed;
          t.spec = applier.lastSpec();
          t.reason = e.what();
        }
        ck.trials.push_back(std::move(t));
      }
      file.kernels.push_back(std::move(ck));
    }
    out.push_back(std::move(file));
  }
  classifyReasons(out);
  return out;
}

void classifyReasons(std::vector<CensusFile>& files) {
  // The reasons' own words: those a reason prints for a kernel that has no such name. A
  // kernel whose name is one of them ("scale", "offs") keeps it as written in its reasons.
  std::set<std::string> own;
  for (const auto& f : files) {
    for (const auto& k : f.kernels) {
      for (const auto& t : k.trials) {
        if (t.status != CensusTrial::Status::kRefused) continue;
        for (const auto& w : reasonWords(t.reason)) {
          if (!k.names.count(w)) own.insert(w);
        }
      }
    }
  }
  for (auto& f : files) {
    for (auto& k : f.kernels) {
      std::set<std::string> names;
      std::set_difference(k.names.begin(), k.names.end(), own.begin(), own.end(), std::inserter(names, names.end()));
      for (auto& t : k.trials) {
        if (t.status == CensusTrial::Status::kApplied) continue;
        t.reason_class = t.status == CensusTrial::Status::kRefused ? reasonClass(t.reason, names)
                                                                   : std::string(toString(t.status));
        t.family = reasonFamily(t.reason_class, t.status);
      }
    }
  }
}

json censusCounts(const std::vector<CensusFile>& files) {
  struct ClassCount {
    std::string family;
    std::set<std::pair<std::string, std::string>> kernels;
    std::set<std::string> files;
    std::map<std::string, int> passes;
    int trials = 0;
    std::vector<std::string> examples;
  };
  std::map<std::string, ClassCount> classes;
  std::map<std::string, std::map<std::string, int>> per_pass;  // pass -> status -> count
  std::vector<std::string> pass_order;
  int kernels = 0, trials = 0;
  std::map<std::string, int> totals, families;
  for (const auto& f : files) {
    for (const auto& k : f.kernels) {
      ++kernels;
      for (const auto& t : k.trials) {
        ++trials;
        const char* status = toString(t.status);
        if (!per_pass.count(t.pass)) pass_order.push_back(t.pass);
        per_pass[t.pass][status]++;
        totals[status]++;
        if (t.status == CensusTrial::Status::kApplied) continue;
        families[t.family]++;
        ClassCount& c = classes[t.reason_class];
        c.family = t.family;
        c.trials++;
        c.passes[t.pass]++;
        c.files.insert(f.path);
        if (c.kernels.insert({f.path, k.name}).second && c.examples.size() < 3) {
          c.examples.push_back(f.path + ":" + k.name + " (" + t.pass + ")");
        }
      }
    }
  }
  json j = {{"files", files.size()}, {"kernels", kernels}, {"trials", trials}};
  for (const char* s : {"applied", "refused", "broken", "crashed"}) j[s] = totals[s];
  j["families"] = families;
  json passes = json::array();
  for (const auto& p : pass_order) {
    json row = {{"pass", p}};
    for (const char* s : {"applied", "refused", "broken", "crashed"}) row[s] = per_pass[p][s];
    passes.push_back(row);
  }
  j["passes"] = passes;
  std::vector<std::pair<std::string, const ClassCount*>> ranked;
  for (const auto& [name, c] : classes) ranked.push_back({name, &c});
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second->kernels.size() != b.second->kernels.size()) return a.second->kernels.size() > b.second->kernels.size();
    return a.second->trials > b.second->trials;
  });
  json cls = json::array();
  for (const auto& [name, c] : ranked) {
    cls.push_back({{"class", name},
                   {"family", c->family},
                   {"kernels", c->kernels.size()},
                   {"files", c->files.size()},
                   {"trials", c->trials},
                   {"passes", c->passes},
                   {"examples", c->examples}});
  }
  j["classes"] = cls;
  return j;
}

json censusJson(const std::vector<CensusFile>& files, const CensusOptions& options) {
  json jf = json::array();
  for (const auto& f : files) {
    json jk = json::array();
    for (const auto& k : f.kernels) {
      json jt = json::array();
      for (const auto& t : k.trials) {
        json row = {{"pass", t.pass}, {"spec", t.spec}, {"status", toString(t.status)},
                    {"seconds", std::round(t.seconds * 1e4) / 1e4}};
        if (t.status != CensusTrial::Status::kApplied) {
          row["reason"] = t.reason;
          row["class"] = t.reason_class;
          row["family"] = t.family;
        }
        jt.push_back(std::move(row));
      }
      jk.push_back({{"name", k.name}, {"line", k.line}, {"facts", k.facts}, {"trials", std::move(jt)}});
    }
    jf.push_back({{"path", f.path}, {"parse_seconds", std::round(f.parse_seconds * 1e4) / 1e4}, {"kernels", std::move(jk)}});
  }
  return {{"schema", kCensusSchema},
          {"tool", toolVersionLine()},
          {"check", options.check},
          {"switched_off", options.switched_off},
          {"counts", censusCounts(files)},
          {"files", std::move(jf)}};
}

std::string censusSummaryText(const json& c) {
  std::string out = fmt::format(
      "census: {} files, {} kernels, {} trials: {} applied, {} refused, {} broken, {} crashed\n",
      c["files"].get<int>(), c["kernels"].get<int>(), c["trials"].get<int>(), c["applied"].get<int>(),
      c["refused"].get<int>(), c["broken"].get<int>(), c["crashed"].get<int>());
  out += fmt::format("\n{:<16} {:>8} {:>8} {:>7} {:>8}\n", "pass", "applied", "refused", "broken", "crashed");
  for (const auto& p : c["passes"]) {
    out += fmt::format("{:<16} {:>8} {:>8} {:>7} {:>8}\n", p["pass"].get<std::string>(), p["applied"].get<int>(),
                       p["refused"].get<int>(), p["broken"].get<int>(), p["crashed"].get<int>());
  }
  out += "\nreason classes (kernels blocked, files, family: class)\n";
  for (const auto& r : c["classes"]) {
    out += fmt::format("{:>6} {:>5}  {}: {}\n", r["kernels"].get<int>(), r["files"].get<int>(),
                       r["family"].get<std::string>(), r["class"].get<std::string>());
  }
  return out;
}

}  // namespace tf
