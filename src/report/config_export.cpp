// `tritonforge export` (config_export.h): per-shape bests from result.json, and their texts.
#include "report/config_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "util/error.h"

namespace tf {

namespace {

struct TunableRef {
  std::string kernel, param;
  std::optional<int64_t> value;   // as written, when a literal
  bool launcher_only = false;     // the launcher's own arithmetic (origin launcher-scale): no
                                  // kernel parameter, so no entry of a table or config
};

std::optional<double> caseTime(const nlohmann::json& cand, size_t i) {
  if (!cand.contains("cases") || !cand["cases"].is_array() || i >= cand["cases"].size()) return std::nullopt;
  const nlohmann::json& c = cand["cases"][i];
  if (c.value("status", "") != "ok" || !c.contains("timing") || !c["timing"].is_object()) return std::nullopt;
  const nlohmann::json& t = c["timing"];
  if (!t.contains("median_ms") || !t["median_ms"].is_number()) return std::nullopt;
  double v = t["median_ms"].get<double>();
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

}  // namespace

ShapeTable bestPerShape(const nlohmann::json& result, const std::string& what) {
  if (!result.is_object() || result.value("schema", "") != "tritonforge.optimize/1") {
    throw UserError(fmt::format("{}: not an optimize result (schema tritonforge.optimize/1)", what));
  }
  if (result.value("status", "") == "no-gpu") {
    throw UserError(fmt::format("{}: the run measured nothing (no GPU): there is no best configuration", what));
  }
  const nlohmann::json task = result.value("task", nlohmann::json::object());
  ShapeTable table;
  table.task = task.value("name", "");
  table.source = task.value("source", "");
  const nlohmann::json cases = task.value("cases", nlohmann::json::array());
  if (!cases.is_array() || cases.empty()) throw UserError(fmt::format("{}: the task has no cases", what));
  for (const auto& [k, v] : cases[0].items()) table.keys.push_back(k);

  std::map<std::string, TunableRef> tunables;
  for (const auto& t : result.value("tunables", nlohmann::json::array())) {
    if (!t.is_object() || !t.contains("id")) continue;
    TunableRef r{t.value("kernel", ""), t.value("param", ""), std::nullopt,
                 t.value("origin", "") == "launcher-scale"};
    if (t.contains("value") && t["value"].is_number_integer()) r.value = t["value"].get<int64_t>();
    tunables[t["id"].get<std::string>()] = r;
  }
  auto refOf = [&](const std::string& id) {
    auto it = tunables.find(id);
    if (it != tunables.end()) return it->second;
    size_t dot = id.find('.');
    return TunableRef{id.substr(0, dot), dot == std::string::npos ? id : id.substr(dot + 1), std::nullopt};
  };

  const nlohmann::json cands = result.value("candidates", nlohmann::json::array());
  std::set<std::string> kernels;
  for (size_t i = 0; i < cases.size(); ++i) {
    ShapeBest best;
    best.shape = cases[i];
    std::string label;
    for (const auto& [k, v] : cases[i].items()) label += (label.empty() ? "" : ",") + k + "=" + v.dump();
    best.label = label;
    double best_t = std::numeric_limits<double>::infinity();
    const nlohmann::json* chosen = nullptr;
    for (const auto& c : cands) {
      // Configurations of the source as written only: a pass's output (or a per-shape
      // dispatch, kind "pass" too) is another source, even on base 0.
      if (!c.is_object() || c.value("base", 0) != 0 || c.value("kind", "") == "pass") continue;
      std::optional<double> t = caseTime(c, i);
      if (c.value("kind", "") == "baseline" && t) best.as_written_ms = *t;
      if (c.value("status", "") != "ok" || !t) continue;
      if (*t < best_t) {
        best_t = *t;
        chosen = &c;
      }
    }
    if (!chosen) {
      throw UserError(fmt::format("{}: no candidate verified on every case with a time on case {}", what, label));
    }
    best.candidate = chosen->value("id", -1);
    best.time_ms = best_t;
    const nlohmann::json config = chosen->value("config", nlohmann::json::object());
    for (const auto& [id, v] : config.items()) {
      TunableRef r = refOf(id);
      if (r.launcher_only) continue;
      if (v.is_number_integer()) best.params[r.kernel][r.param] = v.get<int64_t>();
      else if (r.value) best.params[r.kernel][r.param] = *r.value;
      else best.as_written[r.kernel].push_back(r.param);
      kernels.insert(r.kernel);
    }
    table.shapes.push_back(std::move(best));
  }
  table.kernels.assign(kernels.begin(), kernels.end());
  return table;
}

std::string autotuneConfigsArg(const ShapeTable& table, const std::string& kernel) {
  std::vector<std::map<std::string, int64_t>> distinct;
  for (const auto& s : table.shapes) {
    auto it = s.params.find(kernel);
    if (it == s.params.end() || it->second.empty()) continue;
    if (std::find(distinct.begin(), distinct.end(), it->second) == distinct.end()) distinct.push_back(it->second);
  }
  std::string out = "[";
  for (size_t i = 0; i < distinct.size(); ++i) {
    if (i) out += "; ";
    std::string one;
    for (const auto& [p, v] : distinct[i]) one += (one.empty() ? "" : " ") + fmt::format("{}={}", p, v);
    out += one;
  }
  return out + "]";
}

nlohmann::json dispatchTableJson(const ShapeTable& table) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& s : table.shapes) {
    nlohmann::json config = nlohmann::json::object();
    for (const auto& [k, ps] : s.params) {
      for (const auto& [p, v] : ps) config[k][p] = v;
    }
    nlohmann::json e = {{"case", s.shape}, {"label", s.label}, {"candidate", s.candidate}, {"time_ms", s.time_ms},
                        {"config", config}};
    if (s.as_written_ms > 0) e["speedup"] = s.as_written_ms / s.time_ms;
    if (!s.as_written.empty()) e["as_written"] = s.as_written;
    entries.push_back(e);
  }
  return {{"schema", kDispatchSchema}, {"task", table.task}, {"source", table.source}, {"keys", table.keys},
          {"entries", entries}};
}

std::string dispatchHelperPython() {
  return R"PY("""Picks the tuned configuration for a shape from a tritonforge dispatch table.

Written by `tritonforge export --format table -o TABLE.json` next to the table:

    import tritonforge_dispatch as d
    table = d.load("TABLE.json")
    cfg = d.pick(table, M=4096, N=4096)["config"]["my_kernel"]   # {"BLOCK_M": 128, ...}

The nearest tuned shape wins: the distance is the sum over the table's keys of
|log2(a) - log2(b)| (a differing non-numeric value counts 64); an exact match is distance 0,
and ties go to the shape listed first.
"""
import json
import math

SCHEMA = "tritonforge.dispatch/1"


def load(path):
    with open(path, encoding="utf-8") as f:
        table = json.load(f)
    if table.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a tritonforge dispatch table (schema {SCHEMA})")
    return table


def _distance(shape, tuned, keys):
    d = 0.0
    for k in keys:
        a, b = shape.get(k), tuned.get(k)
        numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in (a, b))
        if numbers:
            d += abs(math.log2(a) - math.log2(b))
        elif a != b:
            d += 64.0
    return d


def pick(table, **shape):
    """The entry of the tuned shape nearest to `shape`: {"case", "config": {kernel: {param: value}}, ...}."""
    keys = [k for k in table["keys"] if k in shape] or table["keys"]
    return min(table["entries"], key=lambda e: _distance(shape, e["case"], keys))
)PY";
}

std::string autotuneDecorator(const std::string& source, const std::string& kernel) {
  size_t def = source.find("def " + kernel + "(");
  if (def == std::string::npos) return "";
  size_t at = source.rfind("@triton.autotune(", def);
  if (at == std::string::npos) return "";
  // The kernel's own decorator: no other def between it and the kernel.
  size_t other = source.find("\ndef ", at);
  if (other != std::string::npos && other + 1 < def) return "";
  int depth = 0;
  for (size_t i = source.find('(', at); i < source.size(); ++i) {
    if (source[i] == '(') ++depth;
    else if (source[i] == ')' && --depth == 0) return source.substr(at, i + 1 - at);
  }
  return "";
}

}  // namespace tf
