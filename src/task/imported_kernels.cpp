#include "task/imported_kernels.h"

#include <fmt/format.h>

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

}  // namespace

std::unique_ptr<ImportedKernels> loadImportedKernels(WorkerProcess& parser, const ParsedSource& source,
                                                     const fs::path& path, const SourcePackage& package) {
  auto out = std::make_unique<ImportedKernels>();
  std::set<std::string> loaded;
  for (const auto& stmt : source.ast["body"]) {
    if (!isType(stmt, "ImportFrom")) continue;
    int level = stmt.contains("level") && stmt["level"].is_number_integer() ? stmt["level"].get<int>() : 0;
    std::string module = stmt["module"].is_string() ? stmt["module"].get<std::string>() : "";
    if (module.empty()) continue;  // `from . import x`: x is a module, its kernels are x.k
    auto file = moduleFile(path, package, level, module);
    if (!file) continue;
    std::string key = fs::weakly_canonical(*file).string();
    std::set<std::string> wanted;
    for (const auto& a : stmt["names"]) wanted.insert(a["name"].get<std::string>());
    auto src = std::make_unique<ParsedSource>();
    try {
      *src = parseFile(parser, *file, "imported module");
    } catch (const UserError& e) {
      out->notes.push_back(fmt::format("{} is imported but could not be read: {}", file->string(), e.what()));
      continue;
    }
    auto ir = std::make_unique<ModuleIR>(buildModuleIR(*src));
    for (const auto& k : ir->kernels) {
      if (!wanted.count(k.name) || loaded.count(key + "|" + k.name)) continue;
      loaded.insert(key + "|" + k.name);
      Kernel copy = k;
      copy.home = ir.get();
      copy.home_path = file->string();
      out->kernels.push_back(std::move(copy));
    }
    out->sources.push_back(std::move(src));
    out->irs.push_back(std::move(ir));
  }
  return out;
}

}  // namespace tf
