#include "task/imported_kernels.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "task/source_parser.h"
#include "util/error.h"

namespace tf {
namespace fs = std::filesystem;
namespace {

// The file of module `dotted` imported with `level` leading dots from `path`.
std::optional<fs::path> moduleFile(const fs::path& path, const SourcePackage& package, int level,
                                   const std::string& dotted) {
  fs::path base;
  std::string rest = dotted;
  if (level > 0) {
    base = path.parent_path();
    for (int i = 1; i < level; ++i) base = base.parent_path();
  } else {
    if (package.name.empty()) return std::nullopt;
    std::string top = package.name.substr(0, package.name.find('.'));
    if (dotted != top && dotted.rfind(top + ".", 0) != 0) return std::nullopt;
    base = package.root;
  }
  fs::path p = base;
  size_t at = 0;
  while (at <= rest.size() && !rest.empty()) {
    size_t dot = rest.find('.', at);
    p /= rest.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    if (dot == std::string::npos) break;
    at = dot + 1;
  }
  std::error_code ec;
  if (fs::is_regular_file(p.string() + ".py", ec)) return fs::path(p.string() + ".py");
  if (fs::is_regular_file(p / "__init__.py", ec)) return p / "__init__.py";
  return std::nullopt;
}

// Parses `file` once and copies its kernels that `wanted` names (every one when empty), each
// marked with `module` when the module itself is what the source imports.
void addKernelsOf(WorkerProcess& parser, const fs::path& file, const std::set<std::string>& wanted,
                  const std::string& module, ImportedKernels& out, std::map<std::string, const ModuleIR*>& parsed,
                  std::set<std::string>& loaded) {
  std::string key = fs::weakly_canonical(file).string();
  const ModuleIR* ir = nullptr;
  auto it = parsed.find(key);
  if (it != parsed.end()) {
    ir = it->second;
  } else {
    auto src = std::make_unique<ParsedSource>();
    try {
      *src = parseFile(parser, file, "imported module");
    } catch (const UserError& e) {
      out.notes.push_back(fmt::format("{} is imported but could not be read: {}", file.string(), e.what()));
      parsed[key] = nullptr;
      return;
    }
    auto built = std::make_unique<ModuleIR>(buildModuleIR(*src));
    ir = built.get();
    parsed[key] = ir;
    out.sources.push_back(std::move(src));
    out.irs.push_back(std::move(built));
  }
  if (!ir) return;
  for (const auto& k : ir->kernels) {
    if (!wanted.empty() && !wanted.count(k.name)) continue;
    if (!loaded.insert(key + "|" + module + "|" + k.name).second) continue;
    Kernel copy = k;
    copy.home = ir;
    copy.home_path = file.string();
    copy.imported_module = module;
    out.kernels.push_back(std::move(copy));
  }
}

}  // namespace

std::unique_ptr<ImportedKernels> loadImportedKernels(WorkerProcess& parser, const ParsedSource& source,
                                                     const fs::path& path, const SourcePackage& package) {
  auto out = std::make_unique<ImportedKernels>();
  std::set<std::string> loaded;
  std::map<std::string, const ModuleIR*> parsed;
  for (const auto& stmt : source.ast["body"]) {
    if (isType(stmt, "Import")) {
      // `import pkg.utils.ext as tle`: the module's kernels, reached as tle.k.
      for (const auto& a : stmt["names"]) {
        std::string name = a["name"].get<std::string>();
        if (!a["asname"].is_string()) continue;  // `import pkg.mod` reaches pkg.mod.k: not followed
        if (auto file = moduleFile(path, package, 0, name)) addKernelsOf(parser, *file, {}, name, *out, parsed, loaded);
      }
      continue;
    }
    if (!isType(stmt, "ImportFrom")) continue;
    int level = stmt.contains("level") && stmt["level"].is_number_integer() ? stmt["level"].get<int>() : 0;
    std::string module = stmt["module"].is_string() ? stmt["module"].get<std::string>() : "";
    std::set<std::string> wanted;
    for (const auto& a : stmt["names"]) {
      std::string name = a["name"].get<std::string>();
      // `from . import utils`, `from pkg.utils import ext as tle`: a module, imported whole.
      std::string dotted = module.empty() ? name : module + "." + name;
      if (auto sub = moduleFile(path, package, level, dotted)) {
        addKernelsOf(parser, *sub, {}, dotted, *out, parsed, loaded);
      } else {
        wanted.insert(name);
      }
    }
    if (module.empty() || wanted.empty()) continue;
    if (auto file = moduleFile(path, package, level, module)) {
      addKernelsOf(parser, *file, wanted, "", *out, parsed, loaded);
    }
  }
  return out;
}

}  // namespace tf
