// The baseline file (baseline_file.h). Strict on reading: a baseline that is half
// understood would let a regression through, so every field is checked and named.
#include "store/baseline_file.h"

#include <fmt/format.h>

#include "util/error.h"
#include "util/fs.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

std::string stringOr(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

// Field access that names the file and the place of a malformed field.
struct Reader {
  std::string file;
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UserError(fmt::format("{}: {}: {}", file, where, what));
  }
  const nlohmann::json& field(const nlohmann::json& obj, const std::string& where, const char* key,
                              nlohmann::json::value_t type) const {
    if (!obj.contains(key)) fail(where, fmt::format("missing \"{}\"", key));
    const nlohmann::json& v = obj[key];
    bool ok = type == nlohmann::json::value_t::number_float ? v.is_number() : v.type() == type;
    if (!ok) fail(where, fmt::format("\"{}\" is a {}, not a {}", key, v.type_name(), nlohmann::json(type).type_name()));
    return v;
  }
};

}  // namespace

nlohmann::json ToolchainInfo::toJson() const {
  return {{"gpu", gpu}, {"driver", driver}, {"torch", torch}, {"triton", triton}, {"tritonforge", tritonforge}};
}

ToolchainInfo ToolchainInfo::fromJson(const nlohmann::json& j) {
  ToolchainInfo t;
  t.gpu = stringOr(j, "gpu");
  t.driver = stringOr(j, "driver");
  t.torch = stringOr(j, "torch");
  t.triton = stringOr(j, "triton");
  t.tritonforge = stringOr(j, "tritonforge");
  return t;
}

std::vector<std::string> ToolchainInfo::differences(const ToolchainInfo& now) const {
  std::vector<std::string> out;
  auto cmp = [&](const char* name, const std::string& was, const std::string& is) {
    if (was != is) out.push_back(fmt::format("{} {} -> {}", name, was.empty() ? "?" : was, is.empty() ? "?" : is));
  };
  cmp("GPU", gpu, now.gpu);
  cmp("driver", driver, now.driver);
  cmp("torch", torch, now.torch);
  cmp("Triton", triton, now.triton);
  return out;
}

const BaselineCase* BaselineEntry::find(const nlohmann::json& shape) const {
  for (const auto& c : cases) {
    if (c.shape == shape) return &c;
  }
  return nullptr;
}

nlohmann::json BaselineEntry::toJson() const {
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : cases) {
    cs.push_back({{"case", c.shape}, {"label", c.label}, {"time_ms", c.time_ms}, {"noise", c.noise}});
  }
  return {{"task_path", task_path}, {"date", date},       {"environment", toolchain.toJson()},
          {"config", config},       {"config_text", config_text}, {"cases", cs}};
}

nlohmann::json BaselineFile::toJson() const {
  nlohmann::json ts = nlohmann::json::object();
  for (const auto& [name, e] : tasks) ts[name] = e.toJson();
  return {{"schema", kBaselineSchema}, {"tasks", ts}};
}

BaselineFile loadBaselineFile(const fs::path& path) {
  std::string text = readTextFile(path, "baseline file");
  Reader r{path.string()};
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw UserError(fmt::format("{}: the baseline file is not valid JSON", path.string()));
  if (!j.is_object()) r.fail("top level", "not a JSON object");
  const std::string schema = stringOr(j, "schema");
  if (schema != kBaselineSchema) {
    r.fail("schema", fmt::format("expected \"{}\", found {}", kBaselineSchema,
                                 j.contains("schema") ? j["schema"].dump() : std::string("none")));
  }
  using T = nlohmann::json::value_t;
  BaselineFile out;
  for (const auto& [name, e] : r.field(j, "top level", "tasks", T::object).items()) {
    const std::string where = "task " + name;
    if (!e.is_object()) r.fail(where, "not an object");
    BaselineEntry entry;
    entry.task = name;
    entry.task_path = stringOr(e, "task_path");
    entry.date = stringOr(e, "date");
    entry.toolchain = ToolchainInfo::fromJson(r.field(e, where, "environment", T::object));
    entry.config = r.field(e, where, "config", T::object);
    entry.config_text = stringOr(e, "config_text");
    const auto& cases = r.field(e, where, "cases", T::array);
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::string cw = fmt::format("{} case {}", where, i);
      if (!cases[i].is_object()) r.fail(cw, "not an object");
      BaselineCase c;
      c.shape = r.field(cases[i], cw, "case", T::object);
      c.label = stringOr(cases[i], "label");
      c.time_ms = r.field(cases[i], cw, "time_ms", T::number_float).get<double>();
      c.noise = r.field(cases[i], cw, "noise", T::number_float).get<double>();
      if (!(c.time_ms > 0)) r.fail(cw, fmt::format("time_ms must be > 0, not {}", c.time_ms));
      if (!(c.noise >= 0)) r.fail(cw, fmt::format("noise must be >= 0, not {}", c.noise));
      entry.cases.push_back(std::move(c));
    }
    out.tasks[name] = std::move(entry);
  }
  return out;
}

BaselineEntry baselineEntryFromResult(const nlohmann::json& result, const std::string& what) {
  if (!result.is_object() || result.value("status", "") == "no-gpu" || !result.contains("best")) {
    throw UserError(fmt::format("{}: nothing was measured (no GPU): no baseline to save", what));
  }
  BaselineEntry e;
  const nlohmann::json task = result.value("task", nlohmann::json::object());
  e.task = stringOr(task, "name");
  e.task_path = stringOr(task, "path");
  e.date = stringOr(result, "date");
  const nlohmann::json env = result.value("environment", nlohmann::json::object());
  const nlohmann::json gpu = env.contains("gpu") && env["gpu"].is_object() ? env["gpu"] : nlohmann::json::object();
  e.toolchain.gpu = stringOr(gpu, "name");
  e.toolchain.driver = stringOr(gpu, "driver");
  e.toolchain.torch = stringOr(env, "torch");
  e.toolchain.triton = stringOr(env, "triton");
  e.toolchain.tritonforge = result.contains("tool") ? stringOr(result["tool"], "version") : "";
  const nlohmann::json& best = result.at("best");
  e.config = best.contains("config") && best["config"].is_object() ? best["config"] : nlohmann::json::object();
  e.config_text = stringOr(best, "config_text");
  for (const auto& pc : best.value("per_case", nlohmann::json::array())) {
    if (!pc.contains("time_ms") || !pc["time_ms"].is_number()) {
      throw UserError(fmt::format("{}: case {} of the best has no time ({}): no baseline to save", what,
                                  stringOr(pc, "label"), stringOr(pc, "status")));
    }
    BaselineCase c;
    c.shape = pc.value("case", nlohmann::json::object());
    c.label = stringOr(pc, "label");
    c.time_ms = pc["time_ms"].get<double>();
    double iqr = pc.contains("iqr_ms") && pc["iqr_ms"].is_number() ? pc["iqr_ms"].get<double>() : 0;
    c.noise = c.time_ms > 0 ? iqr / c.time_ms : 0;
    e.cases.push_back(std::move(c));
  }
  return e;
}

void saveBaselineEntry(const fs::path& path, const BaselineEntry& entry) {
  BaselineFile file;
  std::error_code ec;
  if (fs::exists(path, ec)) file = loadBaselineFile(path);
  file.tasks[entry.task] = entry;
  writeFileAtomic(path, file.toJson().dump(2) + "\n");
}

}  // namespace tf
