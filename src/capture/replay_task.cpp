#include "capture/replay_task.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "task/task.h"
#include "util/error.h"
#include "util/fs.h"

namespace fs = std::filesystem;

namespace tf {
namespace {

using Json = nlohmann::json;

const Json& argOf(const Json& sig, const std::string& name) {
  static const Json none = {{"kind", "none"}};
  auto args = sig.find("args");
  if (args == sig.end() || !args->contains(name)) return none;
  return (*args)[name];
}

std::optional<std::string> tritonDtype(const std::string& name) {
  static const std::map<std::string, std::string> names = {
      {"fp16", "float16"}, {"bf16", "bfloat16"}, {"fp32", "float32"}, {"fp64", "float64"}, {"int1", "int1"},
      {"int8", "int8"},    {"int16", "int16"},   {"int32", "int32"},   {"int64", "int64"},   {"uint8", "uint8"},
      {"uint16", "uint16"}, {"uint32", "uint32"}, {"uint64", "uint64"}, {"fp8e4nv", "float8e4nv"},
      {"fp8e5", "float8e5"}};
  auto it = names.find(name);
  if (it == names.end()) return std::nullopt;
  return "tl." + it->second;
}

// A Python literal for a recorded scalar, or nullopt for what has none (tensors, others).
std::optional<std::string> pythonLiteral(const Json& d) {
  const std::string kind = d.value("kind", "");
  if (kind == "none") return "None";
  if (kind == "bool") return d["value"].get<bool>() ? "True" : "False";
  if (kind == "int") return std::to_string(d["value"].get<int64_t>());
  if (kind == "float") {
    double v = d["value"].get<double>();
    if (std::isnan(v)) return "float('nan')";
    if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
    std::string text = fmt::format("{}", v);
    return text.find_first_of(".e") == std::string::npos ? text + ".0" : text;
  }
  if (kind == "str") return d["value"].dump();  // a JSON string is a Python string literal
  if (kind == "tl.dtype") return tritonDtype(d.value("value", ""));
  return std::nullopt;
}

// What one grid dimension evaluates from, per case.
struct GridEnv {
  std::map<std::string, int64_t> ints;                    // launcher int parameters and literal constexprs
  std::map<std::string, int64_t> meta;                    // configuration values (META["k"])
  std::map<std::string, std::vector<int64_t>> shapes;     // tensor parameters
};

struct Term {
  std::string text;
  std::function<std::optional<int64_t>(const GridEnv&)> eval;
  bool uses_meta = false;
};

std::vector<Term> atomsOf(const GridEnv& env) {
  std::vector<Term> atoms;
  for (const auto& [name, v] : env.ints) {
    atoms.push_back({name, [n = name](const GridEnv& e) -> std::optional<int64_t> {
                       auto it = e.ints.find(n);
                       return it == e.ints.end() ? std::nullopt : std::optional<int64_t>(it->second);
                     }});
  }
  for (const auto& [name, dims] : env.shapes) {
    for (size_t i = 0; i < dims.size(); ++i) {
      atoms.push_back({fmt::format("{}.shape[{}]", name, i), [n = name, i](const GridEnv& e) -> std::optional<int64_t> {
                         auto it = e.shapes.find(n);
                         if (it == e.shapes.end() || i >= it->second.size()) return std::nullopt;
                         return it->second[i];
                       }});
    }
    atoms.push_back({fmt::format("{}.numel()", name), [n = name](const GridEnv& e) -> std::optional<int64_t> {
                       auto it = e.shapes.find(n);
                       if (it == e.shapes.end()) return std::nullopt;
                       int64_t p = 1;
                       for (int64_t d : it->second) p *= d;
                       return p;
                     }});
  }
  return atoms;
}

std::vector<Term> divisorsOf(const GridEnv& env, const std::set<std::string>& blocks) {
  std::vector<Term> out;
  for (const auto& name : blocks) {
    out.push_back({name, [n = name](const GridEnv& e) -> std::optional<int64_t> { return e.ints.at(n); }});
  }
  for (const auto& [name, v] : env.meta) {
    out.push_back({fmt::format("META[\"{}\"]", name),
                   [n = name](const GridEnv& e) -> std::optional<int64_t> {
                     auto it = e.meta.find(n);
                     return it == e.meta.end() ? std::nullopt : std::optional<int64_t>(it->second);
                   },
                   true});
  }
  return out;
}

// The first of the common grid forms that gives every case's recorded value of dimension `d`:
// cdiv(x, BLOCK), x, x * y, cdiv(x * y, BLOCK), or a constant.
std::optional<Term> gridTerm(const std::vector<GridEnv>& envs, const std::vector<int64_t>& values,
                             const std::set<std::string>& blocks, bool prefer_plain) {
  auto fits = [&](const Term& t) {
    for (size_t c = 0; c < envs.size(); ++c) {
      auto v = t.eval(envs[c]);
      if (!v || *v != values[c]) return false;
    }
    return true;
  };
  if (std::all_of(values.begin(), values.end(), [](int64_t v) { return v == 1; })) {
    return Term{"1", [](const GridEnv&) { return std::optional<int64_t>(1); }};
  }
  std::vector<Term> divisors = divisorsOf(envs[0], blocks);
  std::vector<Term> atoms;
  for (Term& a : atomsOf(envs[0])) {
    if (!blocks.count(a.text)) atoms.push_back(std::move(a));  // BLOCK * n / BLOCK is no form
  }
  std::vector<Term> products;
  for (size_t i = 0; i < atoms.size(); ++i) {
    for (size_t j = i + 1; j < atoms.size(); ++j) {
      products.push_back({atoms[i].text + " * " + atoms[j].text, [a = atoms[i], b = atoms[j]](const GridEnv& e) {
                            auto x = a.eval(e), y = b.eval(e);
                            return x && y ? std::optional<int64_t>(*x * *y) : std::nullopt;
                          }});
    }
  }
  auto cdivFit = [&](const std::vector<Term>& numerators) -> std::optional<Term> {
    for (const Term& block : divisors) {
      for (const Term& x : numerators) {
        Term t{fmt::format("triton.cdiv({}, {})", x.text, block.text),
               [x, block](const GridEnv& e) -> std::optional<int64_t> {
                 auto a = x.eval(e), b = block.eval(e);
                 if (!a || !b || *b <= 0) return std::nullopt;
                 return (*a + *b - 1) / *b;
               },
               block.uses_meta};
        if (fits(t)) return t;
      }
    }
    return std::nullopt;
  };
  auto plainFit = [&](const std::vector<Term>& terms) -> std::optional<Term> {
    for (const Term& x : terms) {
      if (fits(x)) return x;
    }
    return std::nullopt;
  };
  // Simplest first: one argument divided by a block, one argument, then products of two. When
  // the program's own grid divides nothing (`(n_rows,)`), the plain forms come first: one
  // launch's n_rows may equal cdiv(numel, BLOCK) by chance.
  if (prefer_plain) {
    if (auto t = plainFit(atoms)) return t;
    if (auto t = plainFit(products)) return t;
  }
  if (auto t = cdivFit(atoms)) return t;
  if (auto t = plainFit(atoms)) return t;
  if (auto t = cdivFit(products)) return t;
  if (auto t = plainFit(products)) return t;
  if (std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == values[0]; })) {
    return Term{std::to_string(values[0]), [v = values[0]](const GridEnv&) { return std::optional<int64_t>(v); }};
  }
  return std::nullopt;
}

struct Plan {
  std::vector<std::string> params;                 // the launcher's parameters, in order
  std::vector<std::string> bindings;               // "BLOCK = 256" lines before the launch
  std::vector<std::string> call_args;              // the launch's arguments
  std::string grid;
  std::vector<size_t> in_place;
  std::vector<std::string> notes;
  bool needs_tl = false;
  std::set<std::string> literal_ints;  // integer constexprs bound at the launch (tuned there)
  std::set<std::string> blocks;        // integer constexprs, bound or passed in: a grid's divisors
  std::set<std::string> options;       // launch options passed in (they differ between the launches)
};

// Values of one recorded argument across the cases, as literals; nullopt when one has none.
std::optional<std::vector<std::string>> literalsAcross(const std::vector<const Json*>& cases, const std::string& name,
                                                       const char* field) {
  std::vector<std::string> out;
  for (const Json* sig : cases) {
    const Json* d = nullptr;
    if (std::string(field) == "args") {
      d = &argOf(*sig, name);
    } else if (sig->contains(field) && (*sig)[field].contains(name)) {
      d = &(*sig)[field][name];
    }
    if (!d) return std::nullopt;
    Json desc = d->is_object() ? *d : Json{{"kind", d->is_boolean() ? "bool" : d->is_number_integer() ? "int" : "float"},
                                          {"value", *d}};
    auto lit = pythonLiteral(desc);
    if (!lit) return std::nullopt;
    out.push_back(*lit);
  }
  return out;
}

bool allSame(const std::vector<std::string>& v) {
  return std::all_of(v.begin(), v.end(), [&](const std::string& s) { return s == v[0]; });
}

// Reads the kernel's recorded launches into the launcher's shape. Throws UserError with the
// reason when the launches cannot be replayed by one launcher.
Plan planLauncher(const CapturedKernel& k, const std::vector<const Json*>& cases) {
  Plan plan;
  const Json& first = *cases[0];
  std::vector<std::string> given = first.value("given", std::vector<std::string>{});
  for (const Json* sig : cases) {
    if (sig->value("given", std::vector<std::string>{}) != given) {
      throw UserError("its launches pass different arguments (some by default)");
    }
  }
  std::set<std::string> constexprs(k.constexprs.begin(), k.constexprs.end());
  bool positional = true;
  for (size_t i = 0; i < given.size(); ++i) {
    const std::string& name = given[i];
    positional = positional && i < k.arg_names.size() && k.arg_names[i] == name;
    const bool int_constexpr = constexprs.count(name) && argOf(first, name).value("kind", "") == "int";
    if (int_constexpr) plan.blocks.insert(name);
    if (constexprs.count(name)) {
      auto lits = literalsAcross(cases, name, "args");
      if (lits && allSame(*lits)) {
        if (int_constexpr) plan.literal_ints.insert(name);
        plan.bindings.push_back(fmt::format("{} = {}", name, (*lits)[0]));
        plan.needs_tl = plan.needs_tl || (*lits)[0].rfind("tl.", 0) == 0;
        plan.call_args.push_back(fmt::format("{}={}", name, name));
        positional = false;
        continue;
      }
      plan.notes.push_back(fmt::format("constexpr '{}' differs between the launches: passed in, not tuned", name));
    }
    const std::string kind = argOf(first, name).value("kind", "");
    if (kind == "other" || kind == "tuple") throw UserError(fmt::format("argument '{}' is a {}", name, kind));
    plan.params.push_back(name);
    plan.call_args.push_back(positional ? name : fmt::format("{}={}", name, name));
  }
  // Launch options the program gave (an autotuner's or a heuristic's are its configuration).
  const Json options = first.value("options", Json::object());
  const Json config = first.value("config", Json::object());
  for (const auto& [option, value] : options.items()) {
    if (config.contains(option)) continue;
    auto lits = literalsAcross(cases, option, "options");
    if (!lits || !allSame(*lits)) {
      plan.params.push_back(option);
      plan.options.insert(option);
      plan.call_args.push_back(fmt::format("{}={}", option, option));
      plan.notes.push_back(fmt::format("launch option '{}' differs between the launches: passed in, not tuned", option));
      continue;
    }
    plan.bindings.push_back(fmt::format("{} = {}", option, (*lits)[0]));
    plan.call_args.push_back(fmt::format("{}={}", option, option));
  }
  return plan;
}

GridEnv envOf(const Json& sig, const Plan& plan) {
  GridEnv env;
  for (const auto& name : plan.params) {
    const Json& d = argOf(sig, name);
    if (d.value("kind", "") == "int") env.ints[name] = d["value"].get<int64_t>();
    if (d.value("kind", "") == "tensor") env.shapes[name] = d["shape"].get<std::vector<int64_t>>();
  }
  for (const auto& name : plan.literal_ints) env.ints[name] = argOf(sig, name)["value"].get<int64_t>();
  const Json config = sig.value("config", Json::object());
  for (const auto& [key, d] : config.items()) {
    if (d.is_object() && d.value("kind", "") == "int") env.meta[key] = d["value"].get<int64_t>();
  }
  return env;
}

void planGrid(const std::vector<const Json*>& cases, Plan& plan) {
  std::vector<GridEnv> envs;
  for (const Json* sig : cases) envs.push_back(envOf(*sig, plan));
  // The grid as the program's launch wrote it, when the recorder could read it.
  const Json& written = (*cases[0]).contains("grid_source") ? (*cases[0])["grid_source"] : Json();
  const std::string text = written.is_string() ? written.get<std::string>() : std::string();
  const bool prefer_plain = !text.empty() && text.find("cdiv") == std::string::npos &&
                            text.find('/') == std::string::npos && text.find("ceil") == std::string::npos;
  std::vector<std::string> dims;
  bool meta = false;
  for (size_t d = 0; d < 3; ++d) {
    std::vector<int64_t> values;
    for (const Json* sig : cases) {
      const Json& g = (*sig)["grid"];
      if (!g.is_array() || g.size() != 3) throw UserError("a launch's grid could not be evaluated");
      values.push_back(g[d].get<int64_t>());
    }
    auto term = gridTerm(envs, values, plan.blocks, prefer_plain);
    if (!term) {
      throw UserError(fmt::format("grid dimension {} ({}) is none of the forms cdiv(x, BLOCK), x, x * y of its "
                                  "arguments, nor the same in every launch",
                                  d, fmt::join(values, ", ")));
    }
    meta = meta || term->uses_meta;
    dims.push_back(term->text);
  }
  while (dims.size() > 1 && dims.back() == "1") dims.pop_back();
  std::string tuple = fmt::format("({}{})", fmt::join(dims, ", "), dims.size() == 1 ? "," : "");
  plan.grid = meta ? "lambda META: " + tuple : tuple;
}

std::string launcherText(const CapturedKernel& k, const Plan& plan, const std::string& launcher) {
  std::string text = fmt::format(
      "\n\n# ---- added by tritonforge capture (not part of the original file): replays the recorded launches of "
      "{} ----\nimport triton{}\n\n\ndef {}({}):\n",
      k.name, plan.needs_tl ? "\nimport triton.language as tl" : "", launcher, fmt::join(plan.params, ", "));
  for (const auto& b : plan.bindings) text += "    " + b + "\n";
  text += fmt::format("    {}[{}]({})\n", k.name, plan.grid, fmt::join(plan.call_args, ", "));
  return text;
}

// Tolerances for outputs of these dtypes, compared with the launch's own recorded output: a
// tuned variant may reorder a reduction (a few ulps of the accumulator) and round differently
// once (one ulp of the output type).
std::pair<double, double> tolerances(const std::set<std::string>& dtypes) {
  double tol = 0;
  for (const auto& d : dtypes) {
    if (d == "bfloat16") tol = std::max(tol, 1.6e-2);
    else if (d == "float16") tol = std::max(tol, 2e-3);
    else if (d == "float32") tol = std::max(tol, 1e-4);
    else if (d == "float64") tol = std::max(tol, 1e-9);
    else if (d.rfind("float8", 0) == 0) tol = std::max(tol, 0.13);
  }
  return {tol, tol};
}

// What the program passed at the launch (its arguments as described, and the launch options it
// gave): `run --overlay` serves the tuned launcher for a launch that passes the same.
Json matchOf(const Json& sig) {
  Json args = Json::object();
  for (const auto& name : sig.value("given", std::vector<std::string>{})) args[name] = argOf(sig, name);
  Json options = Json::object();
  const Json config = sig.value("config", Json::object());
  const Json given_options = sig.value("options", Json::object());
  for (const auto& [option, value] : given_options.items()) {
    if (!config.contains(option)) options[option] = value;
  }
  return {{"args", args}, {"options", options}};
}

Json replayCases(const std::vector<const Json*>& cases, const Plan& plan) {
  Json out = Json::array();
  for (const Json* sig : cases) {
    const Json& snap = (*sig)["snapshot"];
    Json c = {{"spans", snap["spans"]}, {"tensors", Json::object()}, {"scalars", Json::object()},
              {"match", matchOf(*sig)}};
    for (const auto& name : plan.params) {
      const Json& d = argOf(*sig, name);
      if (d.value("kind", "") == "tensor") {
        const Json& where = snap["tensors"][name];
        c["tensors"][name] = {{"span", where["span"]}, {"byte_offset", where["byte_offset"]}, {"dtype", d["dtype"]},
                              {"shape", d["shape"]}, {"stride", d["stride"]}};
      } else if (plan.options.count(name)) {
        c["scalars"][name] = (*sig)["options"][name];
      } else {
        c["scalars"][name] = d.contains("value") ? d["value"] : Json();
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

// [signature.KERNEL] from the first case: each non-constexpr parameter's Triton type, so that
// compile checks run without a GPU. Empty when one cannot be typed (a None, an unknown dtype).
std::string signatureTable(const CapturedKernel& k, const Json& sig) {
  static const std::map<std::string, std::string> types = {
      {"float16", "fp16"}, {"bfloat16", "bf16"}, {"float32", "fp32"}, {"float64", "fp64"}, {"int8", "i8"},
      {"int16", "i16"},    {"int32", "i32"},     {"int64", "i64"},    {"uint8", "u8"},    {"bool", "i1"},
      {"float8_e4m3fn", "fp8e4nv"}, {"float8_e5m2", "fp8e5"}};
  std::set<std::string> constexprs(k.constexprs.begin(), k.constexprs.end());
  std::string out = fmt::format("\n[signature.{}]\n", k.name);
  const Json config = sig.value("config", Json::object());
  for (const auto& name : k.arg_names) {
    if (constexprs.count(name)) {
      // A value an autotuner or a heuristic chose: the first launch's, for compiling.
      if (config.contains(name) && config[name].is_object()) {
        const std::string kind = config[name].value("kind", "");
        if (kind == "int" || kind == "bool") out += fmt::format("{} = {}\n", name, config[name]["value"].dump());
      }
      continue;
    }
    const Json& d = argOf(sig, name);
    const std::string kind = d.value("kind", "");
    std::string type;
    if (kind == "tensor") {
      auto it = types.find(d.value("dtype", ""));
      if (it == types.end()) return "";
      type = "*" + it->second;
    } else if (kind == "int") {
      int64_t v = d["value"].get<int64_t>();
      type = v >= INT32_MIN && v <= INT32_MAX ? "i32" : "i64";
    } else if (kind == "float") {
      type = "fp32";
    } else if (kind == "bool") {
      type = "i1";
    } else {
      return "";
    }
    out += fmt::format("{} = \"{}\"\n", name, type);
  }
  return out;
}

std::string uniqueFolderName(const std::string& name, std::set<std::string>& taken) {
  std::string base = std::regex_replace(name, std::regex("[^A-Za-z0-9_.-]"), "_");
  std::string out = base;
  for (int i = 2; taken.count(out); ++i) out = fmt::format("{}_{}", base, i);
  taken.insert(out);
  return out;
}

ReplayTask writeOne(const CapturedKernel& k, const fs::path& dir, const fs::path& worker_dir, std::set<std::string>& taken) {
  ReplayTask r;
  r.kernel = k.name;
  std::vector<const Json*> cases;
  for (const auto& sig : k.signatures) {
    if (sig.contains("snapshot") && sig["snapshot"].is_object()) cases.push_back(&sig);
  }
  if (cases.empty()) {
    std::string why;
    if (!k.signatures.empty() && k.signatures[0].contains("snapshot_skipped") &&
        k.signatures[0]["snapshot_skipped"].is_string()) {
      why = k.signatures[0]["snapshot_skipped"].get<std::string>();
    }
    throw UserError("no launch of it was saved" + (why.empty() ? std::string() : " (" + why + ")"));
  }
  Plan plan = planLauncher(k, cases);
  planGrid(cases, plan);
  std::set<std::string> out_dtypes;
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const std::string& name = plan.params[i];
    bool changed = false;
    for (const Json* sig : cases) {
      const Json& snap = (*sig)["snapshot"];
      if (!snap["tensors"].contains(name)) continue;
      changed = changed || !snap["spans"][snap["tensors"][name]["span"].get<size_t>()]["after"].is_null();
    }
    if (changed) {
      plan.in_place.push_back(i);
      out_dtypes.insert(argOf(*cases[0], name).value("dtype", ""));
    }
  }
  if (plan.in_place.empty()) throw UserError("its saved launches changed no memory: there is no output to verify");

  std::string source_text = readTextFile(k.file, "kernel source", kMaxSourceFileBytes);
  std::string launcher = "tritonforge_replay";
  while (source_text.find(launcher) != std::string::npos) launcher += "_";
  const std::string folder_name = uniqueFolderName(k.name, taken);
  const fs::path folder = dir / "tasks" / folder_name;
  fs::create_directories(folder);
  const fs::path source = folder / fs::path(k.file).filename();
  writeFileAtomic(source, source_text + launcherText(k, plan, launcher));
  writeFileAtomic(folder / "harness.py", readTextFile(worker_dir / "tritonforge_worker" / "capture" / "replay_harness.py",
                                                      "replay harness template", kMaxSourceFileBytes));
  SourcePackage package = packageOf(k.file);
  const bool outer = std::any_of(k.via.begin(), k.via.end(), [](const std::string& v) { return v != "jit"; });
  Json replay = {{"kernel", k.name}, {"module", k.module}, {"source", k.file}, {"source_sha256", k.file_sha256},
                 {"launcher", launcher}, {"through_wrapper", outer},
                 {"package", package.name}, {"package_root", package.name.empty() ? "" : package.root.string()},
                 {"data_dir", fs::absolute(dir / "data").lexically_normal().string()},
                 {"inputs", plan.params}, {"in_place", plan.in_place}, {"cases", replayCases(cases, plan)}};
  writeFileAtomic(folder / "replay.json", replay.dump(1) + "\n");

  auto [rtol, atol] = tolerances(out_dtypes);
  std::string toml = fmt::format(
      "# Written by `tritonforge capture` from {} saved launch(es) of {} ({}:{}).\n"
      "# The launcher is appended to a copy of its module; the expected outputs are those the launch wrote.\n"
      "name = \"{}\"\nsource = \"{}\"\nlauncher = \"{}\"\nharness = \"harness.py\"\nkernels = [\"{}\"]\n",
      cases.size(), k.name, k.file, k.line, folder_name, source.filename().string(), launcher, k.name);
  if (!package.name.empty()) {
    toml += fmt::format("package = \"{}\"\npackage_root = {}\n", package.name, Json(package.root.string()).dump());
  } else {  // a program's own module: the modules beside it are what it imports
    toml += fmt::format("search_path = [{}]\n", Json(fs::path(k.file).parent_path().string()).dump());
  }
  std::vector<std::string> case_lines;
  for (size_t i = 0; i < cases.size(); ++i) case_lines.push_back(fmt::format("{{ launch = {} }}", i));
  toml += fmt::format("cases = [ {} ]\n\n[check]\n# The loosest of the outputs' types ({}): a tuned variant may "
                      "reorder a reduction and round once more.\nrtol = {}\natol = {}\nseeds = 1\n"
                      "reference_precision = \"as-is\"\nin_place = [{}]\n",
                      fmt::join(case_lines, ", "), fmt::join(out_dtypes, ", "), rtol, atol, fmt::join(plan.in_place, ", "));
  toml += signatureTable(k, *cases[0]);
  writeFileAtomic(folder / "task.toml", toml);
  r.task = folder / "task.toml";
  r.cases = static_cast<int>(cases.size());
  r.notes = plan.notes;
  return r;
}

}  // namespace

std::vector<ReplayTask> writeReplayTasks(const CaptureSummary& summary, const fs::path& dir, size_t top,
                                         const fs::path& worker_dir) {
  std::vector<ReplayTask> out;
  std::set<std::string> taken;
  for (const auto& k : summary.kernels) {
    if (out.size() == top) break;
    if (!k.tunable || k.outside_jit || k.file.empty()) continue;
    try {
      out.push_back(writeOne(k, dir, worker_dir, taken));
    } catch (const UserError& e) {
      out.push_back(ReplayTask{k.name, {}, e.what(), 0, {}});
    } catch (const nlohmann::json::exception& e) {  // a record edited by hand, or from another version
      out.push_back(ReplayTask{k.name, {}, fmt::format("its record is not as capture writes it ({})", e.what()), 0, {}});
    }
  }
  return out;
}

}  // namespace tf
