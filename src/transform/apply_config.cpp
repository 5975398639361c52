#include "transform/apply_config.h"

#include <fmt/format.h>

#include <optional>

#include "transform/source_editor.h"

namespace tf {
namespace {

// The one-config list a candidate writes for an autotuned kernel; none when it cannot be
// written (computed configs of which the candidate sets only some parameters).
std::optional<std::string> autotuneList(const ModuleIR& ir, const Kernel& k, const TunableSet& set,
                                        const Config& config) {
  static const AutotuneConfig kNone;
  const bool unread = !k.autotune->configs_understood;
  const AutotuneConfig& first = unread ? kNone : k.autotune->configs_list.front();
  std::map<std::string, int64_t> kwargs = first.kwargs;
  std::map<std::string, int64_t> options = first.options;
  for (const auto& t : set.items) {
    if (t.kernel != k.name || t.origin != TunableOrigin::kAutotune) continue;
    auto it = config.find(t.id);
    if (it == config.end() || it->second == kKeep) {
      // As in the first config; computed configs have none to fall back on.
      if (unread && t.tunable) return std::nullopt;
      continue;
    }
    int64_t v = it->second;
    if (t.role == TunableRole::kNumWarps || t.role == TunableRole::kNumStages) options[t.param] = v;
    else kwargs[t.param] = v;
  }
  std::string triton = ir.tritonSpelling();
  std::string config_fn = triton.empty() ? "Config" : triton + ".Config";
  for (const auto& [local, full] : ir.aliases) {
    if (full == "triton.Config") config_fn = local;
  }
  std::string dict;
  for (const auto& [key, v] : kwargs) dict += fmt::format("{}'{}': {}", dict.empty() ? "" : ", ", key, v);
  for (const auto& [key, text] : first.other_kwargs) dict += fmt::format("{}'{}': {}", dict.empty() ? "" : ", ", key, text);
  std::string opts;
  for (const char* o : {"num_warps", "num_stages", "num_ctas", "maxnreg"}) {
    if (options.count(o)) opts += fmt::format(", {}={}", o, options.at(o));
  }
  // A pre_hook (lmdeploy's sets its TMA descriptors' block shapes from the config) stays.
  for (const auto& [name, text] : first.hooks) opts += fmt::format(", {}={}", name, text);
  return fmt::format("[{}({{{}}}{})]", config_fn, dict, opts);
}

}  // namespace

std::string applyConfig(const ModuleIR& ir, const TunableSet& set, const Config& config) {
  const SourceText& src = ir.source->source;
  SourceEditor editor(src.text());
  std::map<std::string, bool> autotune_done;
  for (const auto& t : set.items) {
    auto it = config.find(t.id);
    if (it == config.end() || it->second == kKeep) continue;
    int64_t v = it->second;
    if (t.origin == TunableOrigin::kAutotune) {
      if (autotune_done[t.kernel]) continue;
      autotune_done[t.kernel] = true;
      const Kernel* k = ir.kernel(t.kernel);
      if (auto list = autotuneList(ir, *k, set, config)) editor.replace(t.target, *list);
      continue;
    }
    if (t.value && *t.value == v && t.origin != TunableOrigin::kLocalDerived) continue;
    if (t.origin == TunableOrigin::kAbsentOption || !t.insert_prefix.empty()) {
      editor.replace(t.target, fmt::format("{}{}{}", t.insert_prefix, v, t.insert_suffix));
      continue;
    }
    editor.replace(t.target, std::to_string(v));
    for (const auto& m : t.mirrors) editor.replace(m, std::to_string(v));
  }
  return editor.apply();
}

std::string describeConfig(const TunableSet& set, const Config& config) {
  std::string out;
  for (const auto& t : set.items) {
    auto it = config.find(t.id);
    if (it == config.end()) continue;
    std::string name = set.sites.size() > 1 || t.id.find('#') != std::string::npos ? t.id : t.param;
    std::string value = it->second == kKeep ? (t.value ? std::to_string(*t.value) : t.expr_text)
                                            : std::to_string(it->second);
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value);
  }
  return out;
}

}  // namespace tf
