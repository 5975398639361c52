#include "task/task.h"

#include "task/case_label.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <regex>
#include <set>
#include <string_view>
#include <toml++/toml.h>

#include "util/error.h"
#include "util/fs.h"
#include "util/text.h"

namespace tf {
namespace fs = std::filesystem;
namespace {

// Messages quote the user's keys and values, which TOML lets hold any character ("a\nb"):
// oneLine keeps the error one line.
[[noreturn]] void fail(const fs::path& file, const std::string& msg) {
  throw UserError(oneLine(fmt::format("{}: {}", file.string(), msg)));
}

const char* typeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

std::string requireString(const toml::table& t, const fs::path& file, const std::string& key,
                          const std::string& prefix = "") {
  const toml::node* n = t.get(key);
  if (!n) fail(file, fmt::format("missing key '{}{}'", prefix, key));
  if (!n->is_string()) fail(file, fmt::format("key '{}{}' must be a string, not {}", prefix, key, typeName(*n)));
  std::string v = n->value<std::string>().value();
  if (v.empty()) fail(file, fmt::format("key '{}{}' must not be empty", prefix, key));
  return v;
}

double requireNumber(const toml::node& n, const fs::path& file, const std::string& key) {
  if (n.is_integer()) return static_cast<double>(n.value<int64_t>().value());
  if (n.is_floating_point()) return n.value<double>().value();
  fail(file, fmt::format("key '{}' must be a number, not {}", key, typeName(n)));
}

std::string numberText(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

nlohmann::json caseValue(const toml::node& n, const fs::path& file, const std::string& key) {
  if (n.is_integer()) return n.value<int64_t>().value();
  if (n.is_floating_point()) {
    // TOML allows nan and inf; the harness would get them as sizes or scales.
    double v = n.value<double>().value();
    if (!std::isfinite(v)) fail(file, fmt::format("key '{}' must be a finite number, not {}", key, numberText(v)));
    return v;
  }
  if (n.is_boolean()) return n.value<bool>().value();
  if (n.is_string()) return n.value<std::string>().value();
  if (const auto* arr = n.as_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < arr->size(); ++i) out.push_back(caseValue(*arr->get(i), file, fmt::format("{}[{}]", key, i)));
    return out;
  }
  fail(file, fmt::format("key '{}' must be a number, string, boolean or array, not {}", key, typeName(n)));
}

fs::path resolveFile(const fs::path& task_file, const fs::path& dir, const std::string& key, const std::string& value,
                     const std::string& what) {
  fs::path p = fs::path(value);
  if (p.is_relative()) p = dir / p;
  p = p.lexically_normal();
  std::error_code ec;
  if (!fs::exists(p, ec)) fail(task_file, fmt::format("key '{}': {} '{}' not found", key, what, p.string()));
  if (fs::is_directory(p, ec)) fail(task_file, fmt::format("key '{}': '{}' is a directory, expected a file", key, p.string()));
  // A device (/dev/zero) or a FIFO would never end or never start: only regular files.
  if (!fs::is_regular_file(p, ec)) {
    fail(task_file, fmt::format("key '{}': '{}' is not a regular file", key, p.string()));
  }
  return p;
}

void rejectUnknown(const toml::table& t, const fs::path& file, const std::set<std::string>& known,
                   const std::string& prefix) {
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    if (!known.count(key)) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      fail(file, fmt::format("unknown key '{}{}' (known: {})", prefix, key, list));
    }
  }
}

// The scalar type names of Triton's signatures, as its str_to_ty (triton/language/__init__.py)
// accepts them; "B" is its alias of i1.
const std::vector<std::string>& tritonScalarTypes() {
  static const std::vector<std::string> kTypes = {"i1",    "i8",    "i16",     "i32",      "i64",     "u1",
                                                  "u8",    "u16",   "u32",     "u64",      "fp8e4nv", "fp8e5",
                                                  "fp8e4b15", "fp8e4b8", "fp8e5b16", "fp16", "bf16", "fp32",
                                                  "fp64",  "B"};
  return kTypes;
}

std::string tritonTypeList() {
  std::string out;
  for (const auto& t : tritonScalarTypes()) {
    if (t != "B") out += (out.empty() ? "" : ", ") + t;
  }
  return out;
}

bool isScalarType(std::string_view t) {
  for (const auto& s : tritonScalarTypes()) {
    if (t == s) return true;
  }
  return false;
}

// A scalar type; a pointer to one ("*fp16"), or to constant data ("*kfp16"); or a host
// tensor descriptor "tensordesc<fp16[64, 64]>" (with an optional layout after the shape).
bool isTritonType(const std::string& t) {
  if (isScalarType(t)) return true;
  if (t.size() > 1 && t[0] == '*') {
    std::string_view rest(t);
    rest.remove_prefix(1);
    if (isScalarType(rest)) return true;
    return rest.size() > 1 && rest[0] == 'k' && isScalarType(rest.substr(1));
  }
  static const std::regex desc(R"(tensordesc<([A-Za-z0-9]+)\[\s*\d+(\s*,\s*\d+)*\s*\](,.*)?>)");
  std::smatch m;
  return std::regex_match(t, m, desc) && isScalarType(m[1].str());
}

// toml++ 3.3.0 (Debian 12's) reaches __builtin_unreachable, undefined behaviour, when it asks
// whether some non-ASCII characters (U+00A1 to U+0499, U+2C5E to U+3057) are whitespace:
// outside strings and comments, and at the start of the line after a line-ending backslash
// in a multi-line basic string (its issues 190 and 295, fixed after 3.3.0). TOML allows
// non-ASCII text only inside strings and comments, so such a character outside them is an
// error anyway; after a line-ending backslash it is refused too (a task file has no need of
// one), and so is one right after a backslash in a basic string (no escape starts with
// one). Returns the offset of the first such byte, or npos.
size_t nonAsciiOutsideStrings(std::string_view t) {
  size_t i = t.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;  // a byte order mark, which toml++ skips
  auto at = [&](size_t k) { return k < t.size() ? t[k] : '\0'; };
  auto startsWith = [&](size_t k, std::string_view s) { return t.substr(k, s.size()) == s; };
  // A string starts only where TOML lets one: a key at the start of a line or after '.',
  // '[', '{' or ',', a value after '=' or in an array. A quote elsewhere (1.0'x) is no
  // string, and neither is what follows it: toml++ reads on there too.
  char prev = '\n';
  while (i < t.size()) {
    char c = t[i];
    if (static_cast<unsigned char>(c) >= 0x80) return i;
    const bool string_ok = std::strchr("\n=.[{,", prev) != nullptr;
    if (c != ' ' && c != '\t' && c != '\r') prev = c;
    if (c == '#') {  // a comment, to the end of the line
      while (i < t.size() && t[i] != '\n') ++i;
    } else if (!string_ok || (c != '"' && c != '\'')) {
      ++i;
    } else if (startsWith(i, "\"\"\"")) {  // multi-line basic string
      for (i += 3; i < t.size() && !startsWith(i, "\"\"\""); ++i) {
        if (t[i] != '\\') continue;
        size_t k = i + 1;
        while (at(k) == ' ' || at(k) == '\t' || at(k) == '\r') ++k;
        // No escape starts with a non-ASCII character, and toml++ tests it for whitespace.
        if (static_cast<unsigned char>(at(k)) >= 0x80) return k;
        if (at(k) != '\n') {
          ++i;  // an escape: the next character is not the end
          continue;
        }
        while (at(k) == ' ' || at(k) == '\t' || at(k) == '\r' || at(k) == '\n') ++k;
        if (static_cast<unsigned char>(at(k)) >= 0x80) return k;
        i = k - 1;
      }
      i += 3;
    } else if (startsWith(i, "'''")) {  // multi-line literal string
      for (i += 3; i < t.size() && !startsWith(i, "'''"); ++i) {
      }
      i += 3;
    } else {  // one-line string (an escape in a basic one)
      for (++i; i < t.size() && t[i] != c && t[i] != '\n'; ++i) {
        if (c != '"' || t[i] != '\\') continue;
        size_t k = i + 1;
        while (at(k) == ' ' || at(k) == '\t') ++k;
        if (static_cast<unsigned char>(at(k)) >= 0x80) return k;  // as in a multi-line string
        ++i;
      }
      ++i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

// `package` and `package_root`: the package a source copied out of it belongs to (a captured
// kernel's module, copied with a replay launcher appended), so that its relative imports find
// the package's other modules where they are installed. Both or neither; the root must hold
// the package's folders, each with an __init__.py.
namespace {
void readPackageKeys(const toml::table& root, const fs::path& path, Task& task) {
  const toml::node* name = root.get("package");
  const toml::node* base = root.get("package_root");
  if (!name && !base) return;
  if (!name || !base) fail(path, "keys 'package' and 'package_root' go together: give both or neither");
  if (!name->is_string()) fail(path, fmt::format("key 'package' must be a string, not {}", typeName(*name)));
  if (!base->is_string()) fail(path, fmt::format("key 'package_root' must be a string, not {}", typeName(*base)));
  std::string dotted = name->value<std::string>().value();
  static const std::regex package_name("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*");
  if (!std::regex_match(dotted, package_name)) {
    fail(path, fmt::format("key 'package' must be a dotted Python package name, not '{}'", dotted));
  }
  fs::path dir = fs::path(base->value<std::string>().value());
  if (dir.is_relative()) dir = task.dir / dir;
  dir = dir.lexically_normal();
  fs::path folder = dir;
  std::error_code ec;
  for (size_t start = 0; start <= dotted.size();) {
    size_t dot = dotted.find('.', start);
    folder /= dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!fs::is_regular_file(folder / "__init__.py", ec)) {
      fail(path, fmt::format("key 'package_root': {} holds no package '{}' ({} has no __init__.py)", dir.string(),
                             dotted, folder.string()));
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  task.package = SourcePackage{dotted, dir};
}

// `search_path`: folders the source and harness import from besides their own (a captured
// program's folder, whose sibling modules its kernels' module imports).
void readSearchPath(const toml::table& root, const fs::path& path, Task& task) {
  const toml::node* n = root.get("search_path");
  if (!n) return;
  const toml::array* arr = n->as_array();
  if (!arr) fail(path, fmt::format("key 'search_path' must be an array of folders, not {}", typeName(*n)));
  std::error_code ec;
  for (size_t i = 0; i < arr->size(); ++i) {
    const auto* s = arr->get(i)->as_string();
    if (!s) fail(path, fmt::format("key 'search_path[{}]' must be a string", i));
    fs::path dir = fs::path(s->get());
    if (dir.is_relative()) dir = task.dir / dir;
    dir = dir.lexically_normal();
    if (!fs::is_directory(dir, ec)) fail(path, fmt::format("key 'search_path[{}]': {} is not a folder", i, dir.string()));
    task.search_path.push_back(dir);
  }
}
}  // namespace

SourcePackage packageOf(const fs::path& source) {
  SourcePackage p;
  fs::path dir = source.parent_path();
  std::vector<std::string> parts;
  std::error_code ec;
  // Up through the folders that are packages (hold an __init__.py), at most 16 levels.
  while (parts.size() < 16 && fs::exists(dir / "__init__.py", ec)) {
    parts.insert(parts.begin(), dir.filename().string());
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  static const std::regex ident("[A-Za-z_][A-Za-z0-9_]*");
  for (const auto& part : parts) {
    if (!std::regex_match(part, ident)) return SourcePackage{};  // not importable as a package
  }
  if (parts.empty()) return p;
  for (const auto& part : parts) p.name += (p.name.empty() ? "" : ".") + part;
  p.root = dir;
  return p;
}

Task loadTask(const fs::path& path_in) {
  fs::path path = fs::absolute(path_in).lexically_normal();
  std::string text = readTextFile(path, "task file", kMaxTaskFileBytes);
  if (size_t bad = nonAsciiOutsideStrings(text); bad != std::string_view::npos) {
    throw UserError(fmt::format("{}:{}: not valid TOML: a non-ASCII character outside a string or comment "
                                "(or right after a backslash)",
                                path.string(), lineOfOffset(text, bad)));
  }
  toml::table root;
  try {
    root = toml::parse(text, path.string());
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    // toml++ quotes the character it stopped at, which may be a newline.
    throw UserError(oneLine(fmt::format("{}:{}:{}: not valid TOML: {}", path.string(), where.line, where.column,
                                        std::string(e.description()))));
  }
  rejectUnknown(root, path,
                {"name", "source", "launcher", "harness", "cases", "kernels", "check", "signature", "direction", "package",
                 "package_root", "search_path"},
                "");

  Task task;
  task.path = path;
  task.dir = path.parent_path();
  task.name = requireString(root, path, "name");
  if (!std::regex_match(task.name, std::regex("[A-Za-z0-9_.-]+")) || task.name == "." || task.name == "..") {
    fail(path, fmt::format("key 'name' must use only letters, digits, '_', '.' and '-' (it names a folder), not '{}'",
                           task.name));
  }
  task.source = resolveFile(path, task.dir, "source", requireString(root, path, "source"), "source file");
  task.harness = resolveFile(path, task.dir, "harness", requireString(root, path, "harness"), "harness file");
  task.launcher = requireString(root, path, "launcher");
  // A function, an alias of one, or a class's callable: "LayerNormFunction.apply".
  static const std::regex dotted("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");
  if (!std::regex_match(task.launcher, dotted)) {
    fail(path, fmt::format("key 'launcher' must be a Python name (a function, or Class.apply), not '{}'",
                           task.launcher));
  }
  task.package = packageOf(task.source);
  readPackageKeys(root, path, task);
  readSearchPath(root, path, task);
  if (const toml::node* d = root.get("direction")) {
    const auto* s = d->as_string();
    if (!s || (s->get() != "forward" && s->get() != "backward")) {
      fail(path, "key 'direction' must be \"forward\" or \"backward\"");
    }
    task.direction = s->get();
  }

  const toml::node* cases = root.get("cases");
  if (!cases) fail(path, "missing key 'cases' (an array of tables, e.g. cases = [ { M = 4096 } ])");
  const toml::array* arr = cases->as_array();
  if (!arr) fail(path, fmt::format("key 'cases' must be an array of tables, not {}", typeName(*cases)));
  if (arr->empty()) fail(path, "key 'cases' is empty: give at least one case");
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table* c = arr->get(i)->as_table();
    std::string key = fmt::format("cases[{}]", i);
    if (!c) fail(path, fmt::format("key '{}' must be a table, not {}", key, typeName(*arr->get(i))));
    nlohmann::json obj = nlohmann::json::object();
    for (const auto& [k, v] : *c) obj[std::string(k.str())] = caseValue(v, path, fmt::format("{}.{}", key, k.str()));
    task.cases.push_back(std::move(obj));
  }

  if (const toml::node* k = root.get("kernels")) {
    const toml::array* ka = k->as_array();
    if (!ka) fail(path, fmt::format("key 'kernels' must be an array of strings, not {}", typeName(*k)));
    for (size_t i = 0; i < ka->size(); ++i) {
      if (!ka->get(i)->is_string()) fail(path, fmt::format("key 'kernels[{}]' must be a string", i));
      task.kernels.push_back(ka->get(i)->value<std::string>().value());
    }
  }

  if (const toml::node* c = root.get("check")) {
    const toml::table* ct = c->as_table();
    if (!ct) fail(path, fmt::format("key 'check' must be a table, not {}", typeName(*c)));
    rejectUnknown(*ct, path, {"rtol", "atol", "seeds", "reference_precision", "in_place", "output_atol"},
                   "check.");
    if (const auto* n = ct->get("rtol")) task.check.rtol = requireNumber(*n, path, "check.rtol");
    if (const auto* n = ct->get("atol")) task.check.atol = requireNumber(*n, path, "check.atol");
    for (const char* k : {"rtol", "atol"}) {
      auto v = std::string(k) == "rtol" ? task.check.rtol : task.check.atol;
      if (v && !(std::isfinite(*v) && *v >= 0)) {
        fail(path, fmt::format("key 'check.{}' must be a finite number >= 0, not {}", k, numberText(*v)));
      }
    }
    if (const auto* n = ct->get("seeds")) {
      if (!n->is_integer()) fail(path, fmt::format("key 'check.seeds' must be an integer, not {}", typeName(*n)));
      int64_t s = n->value<int64_t>().value();
      if (s < 1 || s > 100) fail(path, "key 'check.seeds' must be between 1 and 100");
      task.check.seeds = static_cast<int>(s);
    }
    if (const auto* n = ct->get("reference_precision")) {
      if (!n->is_string()) fail(path, "key 'check.reference_precision' must be a string");
      std::string v = n->value<std::string>().value();
      if (v != "float64" && v != "as-is") {
        fail(path, fmt::format("key 'check.reference_precision' must be \"float64\" or \"as-is\", not \"{}\"", v));
      }
      task.check.reference_precision = v;
    }
    if (const auto* n = ct->get("in_place")) {
      const toml::array* ia = n->as_array();
      if (!ia) fail(path, "key 'check.in_place' must be an array of input indices");
      // Whether an index names an input is known only once the harness has made them: the
      // worker refuses the others at the first `run`.
      for (size_t i = 0; i < ia->size(); ++i) {
        if (!ia->get(i)->is_integer()) {
          fail(path, fmt::format("key 'check.in_place[{}]' must be an input index (an integer >= 0), not {}", i,
                                 typeName(*ia->get(i))));
        }
        int64_t v = ia->get(i)->value<int64_t>().value();
        if (v < 0 || v > std::numeric_limits<int>::max()) {
          fail(path, fmt::format("key 'check.in_place[{}]' must be an input index (an integer >= 0), not {}", i, v));
        }
        task.check.in_place.push_back(static_cast<int>(v));
      }
    }
    if (const auto* n = ct->get("output_atol")) {
      const toml::array* oa = n->as_array();
      if (!oa) fail(path, "key 'check.output_atol' must be an array of tolerances, one per output");
      if (task.direction != "forward") fail(path, "key 'check.output_atol' is for forward tasks (a backward task's gradients use check.atol)");
      for (size_t i = 0; i < oa->size(); ++i) {
        const double v = requireNumber(*oa->get(i), path, fmt::format("check.output_atol[{}]", i));
        if (!(std::isfinite(v) && v >= 0)) {
          fail(path, fmt::format("key 'check.output_atol[{}]' must be a finite number >= 0, not {}", i, numberText(v)));
        }
        task.check.output_atol.push_back(v);
      }
    }
  }

  if (const toml::node* s = root.get("signature")) {
    const toml::table* st = s->as_table();
    if (!st) fail(path, "key 'signature' must be a table of kernels");
    for (const auto& [kname, kv] : *st) {
      const toml::table* params = kv.as_table();
      std::string key = fmt::format("signature.{}", kname.str());
      if (!params) fail(path, fmt::format("key '{}' must be a table of parameter types", key));
      auto& out = task.signatures[std::string(kname.str())];
      for (const auto& [pname, pv] : *params) {
        if (pv.is_string()) {
          std::string type = pv.value<std::string>().value();
          if (!isTritonType(type)) {
            fail(path, fmt::format("key '{}.{}': '{}' is not a Triton type (expected one of {}, with or without a "
                                   "leading '*', or a constexpr's integer or boolean value)",
                                   key, pname.str(), type, tritonTypeList()));
          }
          out[std::string(pname.str())] = type;
        } else if (pv.is_integer()) {
          out[std::string(pname.str())] = pv.value<int64_t>().value();
        } else if (pv.is_boolean()) {
          out[std::string(pname.str())] = pv.value<bool>().value();
        } else {
          fail(path, fmt::format("key '{}.{}' must be a type such as \"*fp16\" or \"i32\", or a constexpr's integer value",
                                 key, pname.str()));
        }
      }
    }
  }
  return task;
}

nlohmann::json Task::toJson() const {
  nlohmann::json j;
  j["name"] = name;
  j["path"] = path.string();
  j["source"] = source.string();
  j["harness"] = harness.string();
  j["launcher"] = launcher;
  j["cases"] = cases;
  if (!kernels.empty()) j["kernels"] = kernels;
  if (direction != "forward") j["direction"] = direction;
  nlohmann::json c;
  if (check.rtol) c["rtol"] = *check.rtol;
  if (check.atol) c["atol"] = *check.atol;
  c["seeds"] = check.seeds;
  c["reference_precision"] = check.reference_precision;
  c["in_place"] = check.in_place;
  if (!check.output_atol.empty()) c["output_atol"] = check.output_atol;
  j["check"] = c;
  return j;
}

std::string caseLabelOf(const nlohmann::json& c) {
  if (!c.is_object()) return oneLine(c.dump());
  std::string out;
  for (const auto& [k, v] : c.items()) {
    if (!out.empty()) out += ",";
    out += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  // A case's keys and strings may hold any character; the label goes into one-line progress
  // output and report tables.
  return oneLine(out);
}

std::string Task::caseLabel(size_t i) const {
  std::string out = caseLabelOf(cases.at(i));
  return out.empty() ? fmt::format("case{}", i) : out;
}

}  // namespace tf
