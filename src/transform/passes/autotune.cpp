// autotune: puts the kernel's tunables under @triton.autotune, or bakes one config in.
//
//   mode=insert  adds @triton.autotune(configs=[...], key=[...]) above @triton.jit (or, when the
//                kernel is autotuned already, replaces its config list and key); the launch
//                sites stop passing the tuned values, and a grid that repeated them becomes a
//                `lambda META:` reading META['PARAM'].
//   mode=bake    the inverse: removes @triton.autotune and passes config `config` (an index)
//                at every launch. A grid lambda keeps working (it gets the launch's values).
//
// Config lists: `configs=[BLOCK_M=128 BLOCK_N=64 num_warps=8; BLOCK_M=64 ...]` (a parameter
// left out keeps its value as written), else built from the kernel's roles: the config as
// written first, then a fixed list known to do well on Hopper for the kind of kernel.
#include <fmt/format.h>

#include <sstream>

#include "transform/pass_context.h"
#include "transform/passes/passes.h"

namespace tf {
namespace {

struct ConfigEntry {
  std::map<std::string, int64_t> kwargs;  // constexpr parameters, by name
  std::map<std::string, int64_t> options; // num_warps, num_stages, num_ctas, maxnreg
  bool operator==(const ConfigEntry&) const = default;
};

// The expression a launch passes for a kernel parameter or a launch option.
const Node* launchValue(const LaunchSite& site, const std::string& name) {
  if (const Node* a = launchArg(site, name)) return a;
  auto it = site.options.find(name);
  return it == site.options.end() ? nullptr : it->second.expr;
}

bool isOption(const std::string& k) {
  return k == "num_warps" || k == "num_stages" || k == "num_ctas" || k == "maxnreg";
}

class AutotunePass : public Pass {
 public:
  AutotunePass() {
    info_.name = "autotune";
    info_.summary = "Insert or replace @triton.autotune over the kernel's tunables (launch-site values removed, "
                    "grid made a lambda META), or bake one config in (mode=bake).";
    info_.preconditions = {
        "insert: the kernel is launched in functions of this file (a tuned value passed positionally leaves the "
        "call, and the positional arguments after it are passed by keyword)",
        "insert: the grid is a tuple (or a lambda) bound at most once; values it repeats become META[...]",
        "insert on an autotuned kernel: its configs are a literal list of triton.Config (they are replaced)",
        "bake: the kernel is autotuned with a literal config list, without reset_to_zero / restore_value / "
        "pre_hook / post_hook (baking would drop them)",
    };
    info_.params = {
        {"mode", PassParamKind::kChoice, "insert", false, 0, 0, false, {"insert", "bake"}, "insert/replace, or bake"},
        {"configs", PassParamKind::kText, "", false, 0, 0, false, {},
         "[P=v P=v num_warps=w; ...]: the configs (default: the one as written, then a list for the kernel's kind)"},
        {"key", PassParamKind::kNames, "", false, 0, 0, false, {},
         "the parameters whose values select a config (default: the sizes in masks and loop bounds)"},
        {"config", PassParamKind::kInt, "0", false, 0, 1000, false, {}, "bake: the index of the config to bake in"},
    };
  }
  const PassInfo& info() const override { return info_; }

  PassOutcome run(const PassContext& ctx, const PassArgs& args) const override {
    if (args.text("mode") == "bake") return bake(ctx, args);
    return insert(ctx, args);
  }

 private:
  // --- insert / replace -------------------------------------------------------------------

  PassOutcome insert(const PassContext& ctx, const PassArgs& args) const {
    const Kernel& k = *ctx.kernel;
    if (k.autotune) {
      if (!k.autotune->configs_understood) {
        return refuse("the @triton.autotune configs are not a literal list of triton.Config; they cannot be replaced");
      }
      return replace(ctx, args);
    }
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k.name));
    for (const LaunchSite* s : ctx.sites) {
      if (s->function.empty()) return refuse(fmt::format("{} is launched at module level", k.name));
      if (s->has_starred) return refuse(fmt::format("a launch of {} passes *args / **kwargs", k.name));
    }
    std::vector<TunableSet> sets = kernelTunables(ctx);
    // The tuned parameters: tile / block / group sizes the search may change, and the options.
    std::vector<const Tunable*> tuned;
    std::map<std::string, int64_t> written;
    std::vector<std::string> left;
    for (const auto& set : sets) {
      for (const auto& t : set.items) {
        bool option = t.role == TunableRole::kNumWarps || t.role == TunableRole::kNumStages;
        if (t.origin == TunableOrigin::kLauncherScale) continue;  // the launcher's arithmetic, not a config's
        if (!t.tunable || t.covers_dimension || t.origin == TunableOrigin::kHeuristic) {
          if (!option && t.role != TunableRole::kOther) left.push_back(t.param);
          continue;
        }
        if (!t.value) continue;
        if (!option && t.origin != TunableOrigin::kLaunchLiteral && t.origin != TunableOrigin::kLocalLiteral &&
            t.origin != TunableOrigin::kKernelDefault) {
          left.push_back(t.param);
          continue;
        }
        tuned.push_back(&t);
        if (!written.count(t.param)) written[t.param] = *t.value;
      }
    }
    bool any_param = false;
    for (const Tunable* t : tuned) any_param = any_param || !isOption(t->param);
    if (tuned.empty()) return refuse(fmt::format("{} has no tunable to autotune", k.name));

    ConfigEntry base;
    for (const auto& [p, v] : written) (isOption(p) ? base.options : base.kwargs)[p] = v;
    std::vector<ConfigEntry> configs;
    std::string why;
    if (args.has("configs")) {
      if (!parseConfigs(args.text("configs"), base, &configs, &why)) return refuse(why);
    } else {
      configs = defaultConfigs(ctx, base);
    }
    std::vector<std::string> key = args.has("key") ? args.names("key") : defaultKey(ctx);
    for (const auto& name : key) {
      const Param* p = k.param(name);
      if (!p || p->is_constexpr) return refuse(fmt::format("key '{}' is not a runtime parameter of {}", name, k.name));
    }
    if (key.empty()) return refuse("no key: name the parameters that select a config (key=M+N)");

    SourceEditor ed(ctx.text().text());
    // The decorator, above the first decorator of the kernel.
    int top = definitionTopLine(*k.def);
    std::string indent = ctx.text().indentOf(top);
    ed.insert(ctx.text().offset(top, 0), decoratorText(ctx, configs, key, indent));

    // Launch sites and grids.
    std::set<const Node*> grids_done;
    for (const auto& set : sets) {
      for (const Tunable* t : tuned) {
        if (t->site < 0 || std::find_if(set.items.begin(), set.items.end(),
                                        [&](const Tunable& x) { return &x == t; }) == set.items.end()) {
          continue;
        }
        const LaunchSite& site = ctx.ir->launches[static_cast<size_t>(t->site)];
        if (t->origin == TunableOrigin::kAbsentOption || t->origin == TunableOrigin::kKernelDefault) continue;
        removeKeyword(ctx, ed, *site.call, t->param);
      }
    }
    // A tuned value passed positionally: it leaves the call, and the positional arguments
    // after it are passed by keyword (their positions would shift).
    for (const LaunchSite* site : ctx.sites) {
      std::vector<const LaunchArg*> positional;
      for (const auto& a : site->args) {
        if (a.positional) positional.push_back(&a);
      }
      // Tuned at this site (a value another launch passes is that launch's).
      auto tunedHere = [&](const std::string& param) {
        return std::any_of(tuned.begin(), tuned.end(), [&](const Tunable* t) {
          return t->param == param && !isOption(param) && t->site >= 0 &&
                 &ctx.ir->launches[static_cast<size_t>(t->site)] == site;
        });
      };
      size_t first = positional.size();
      for (size_t i = 0; i < positional.size(); ++i) {
        if (tunedHere(positional[i]->param)) {
          first = i;
          break;
        }
      }
      if (first == positional.size()) continue;
      std::vector<std::string> keywords;
      for (size_t i = first; i < positional.size(); ++i) {
        const std::string& param = positional[i]->param;
        if (!tunedHere(param)) keywords.push_back(fmt::format("{}={}", param, ctx.slice(*positional[i]->expr)));
      }
      Range from = ctx.range(*positional[first]->expr);
      Range to = ctx.range(*positional.back()->expr);
      std::string text;
      for (const auto& kw : keywords) text += (text.empty() ? "" : ", ") + kw;
      if (keywords.empty()) {
        // Nothing after it: the argument leaves with the comma before it (after it, when it
        // comes first).
        const std::string& src = ctx.text().text();
        auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\t'; };
        size_t begin = from.begin;
        while (begin > 0 && blank(src[begin - 1])) --begin;
        size_t end = to.end;
        while (end < src.size() && blank(src[end])) ++end;
        if (first > 0 && begin > 0 && src[begin - 1] == ',') from.begin = begin - 1;
        else if (end < src.size() && src[end] == ',') to.end = end + 1;
      }
      ed.replace(Range{from.begin, to.end}, text);
    }
    std::vector<std::string> notes;
    for (const LaunchSite* site : ctx.sites) {
      std::string gwhy;
      auto g = gridOf(ctx, *site, &gwhy);
      if (!g) return refuse(gwhy);
      if (grids_done.count(g->expr)) continue;
      grids_done.insert(g->expr);
      if (!rewriteGrid(ctx, ed, *site, *g, tuned, &gwhy)) return refuse(gwhy);
    }
    // Launcher variables that only carried a tuned value are now unused.
    removeDeadVariables(ctx, ed, tuned);

    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    if (!left.empty()) {
      std::sort(left.begin(), left.end());
      left.erase(std::unique(left.begin(), left.end()), left.end());
      std::string l;
      for (const auto& x : left) l += (l.empty() ? "" : ", ") + x;
      out.notes.push_back(fmt::format("left as written (not tunable here): {}", l));
    }
    return out;
  }

  PassOutcome replace(const PassContext& ctx, const PassArgs& args) const {
    const AutotuneInfo& at = *ctx.kernel->autotune;
    if (isType(*at.configs, "Name")) {
      return refuse("the configs are a module-level list that other kernels may share; edit it, or bake first");
    }
    ConfigEntry base;
    const AutotuneConfig& first = at.configs_list.front();
    base.kwargs = first.kwargs;
    base.options = first.options;
    if (!first.other_kwargs.empty()) return refuse("the configs hold non-integer values; they cannot be regenerated");
    if (!first.hooks.empty()) return refuse("the configs have a pre_hook or ir_override; they cannot be regenerated");
    std::vector<ConfigEntry> configs;
    std::string why;
    if (args.has("configs")) {
      if (!parseConfigs(args.text("configs"), base, &configs, &why)) return refuse(why);
    } else {
      configs = defaultConfigs(ctx, base);
    }
    SourceEditor ed(ctx.text().text());
    auto cp = nodePos(*at.configs);
    std::string indent = ctx.text().indentOf(cp->line);
    std::string list = "[\n";
    for (const auto& c : configs) list += indent + ctx.indentUnit() + configText(ctx, c) + ",\n";
    list += indent + "]";
    ed.replace(ctx.range(*at.configs), list);
    if (args.has("key")) {
      const Node* key = keywordArg(*at.decorator, "key");
      if (!key && (*at.decorator)["args"].size() > 1) key = &(*at.decorator)["args"][1];
      if (!key) return refuse("the decorator has no key to replace");
      std::string k;
      for (const auto& n : args.names("key")) k += (k.empty() ? "'" : ", '") + n + "'";
      ed.replace(ctx.range(*key), "[" + k + "]");
    }
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    if (out.source == ctx.text().text()) return refuse("the config list given is the list as written");
    return out;
  }

  // --- bake -------------------------------------------------------------------------------

  PassOutcome bake(const PassContext& ctx, const PassArgs& args) const {
    const Kernel& k = *ctx.kernel;
    if (!k.autotune) return refuse(fmt::format("{} is not autotuned: nothing to bake", k.name));
    const AutotuneInfo& at = *k.autotune;
    if (!at.configs_understood) return refuse("the @triton.autotune configs are not a literal list of triton.Config");
    for (const char* arg : {"reset_to_zero", "restore_value", "pre_hook", "post_hook"}) {
      if (keywordArg(*at.decorator, arg)) {
        return refuse(fmt::format("@triton.autotune has {}=...; baking would drop it", arg));
      }
    }
    int64_t index = args.integer("config");
    if (index >= static_cast<int64_t>(at.configs_list.size())) {
      return refuse(fmt::format("config={} but there are {} configs", index, at.configs_list.size()));
    }
    if (ctx.sites.empty()) return refuse(fmt::format("no launch of {} in this file", k.name));
    for (const LaunchSite* s : ctx.sites) {
      if (s->has_starred) return refuse(fmt::format("a launch of {} passes *args / **kwargs", k.name));
    }
    const AutotuneConfig& c = at.configs_list[static_cast<size_t>(index)];
    for (const auto& t : {"pre_hook", "ir_override"}) {
      if (c.text.find(t) != std::string::npos) return refuse(fmt::format("config {} has {}; baking would drop it", index, t));
    }
    SourceEditor ed(ctx.text().text());
    // The decorator's lines ('@' included).
    auto p = nodePos(*at.decorator);
    std::string line = std::string(ctx.text().line(p->line));
    size_t at_sign = line.find('@');
    if (at_sign == std::string::npos || line.find_first_not_of(" \t") != at_sign) {
      return refuse("@triton.autotune does not start its own line");
    }
    std::string after = std::string(ctx.text().line(p->end_line)).substr(static_cast<size_t>(p->end_col));
    if (after.find_first_not_of(" \t") != std::string::npos && after[after.find_first_not_of(" \t")] != '#') {
      return refuse("@triton.autotune shares its last line with other code");
    }
    ed.replace(ctx.lineRange(p->line, p->end_line), "");
    std::vector<std::pair<std::string, std::string>> kw;
    std::vector<std::string> names;
    for (const auto& [name, v] : c.kwargs) names.push_back(name);
    for (const auto& [name, text] : c.other_kwargs) names.push_back(name);
    for (const auto& name : inParamOrder(ctx, names)) {
      kw.emplace_back(name, c.kwargs.count(name) ? std::to_string(c.kwargs.at(name)) : c.other_kwargs.at(name));
    }
    for (const char* o : {"num_warps", "num_stages", "num_ctas", "maxnreg"}) {
      if (c.options.count(o)) kw.emplace_back(o, std::to_string(c.options.at(o)));
    }
    for (const LaunchSite* site : ctx.sites) {
      for (const auto& [name, value] : kw) {
        if (site->arg(name) || site->options.count(name)) {
          return refuse(fmt::format("a launch already passes {} (Triton would reject it with autotune too)", name));
        }
      }
      std::string text;
      for (const auto& [name, value] : kw) text += fmt::format(", {}={}", name, value);
      size_t end = 0;
      const Node* last = nullptr;
      for (const auto* list : {&(*site->call)["args"], &(*site->call)["keywords"]}) {
        for (const auto& a : *list) {
          if (ctx.range(a).end >= end) {
            end = ctx.range(a).end;
            last = &a;
          }
        }
      }
      if (!last) return refuse("a launch has no arguments");
      // A launch written over several lines gets the values on a line of their own.
      auto cp = nodePos(*site->call);
      auto lp = nodePos(*last);
      if (lp->end_line > cp->line) text = ",\n" + ctx.text().indentOf(lp->end_line) + text.substr(2);
      ed.insert(end, text);
    }
    PassOutcome out;
    out.applied = true;
    out.source = ed.apply();
    if (isType(*at.configs, "Name")) {
      out.notes.push_back(fmt::format("the module-level config list '{}' stays (other code may use it)",
                                      ctx.slice(*at.configs)));
    }
    return out;
  }

  // --- helpers ----------------------------------------------------------------------------

  static bool parseConfigs(const std::string& text, const ConfigEntry& base, std::vector<ConfigEntry>* out,
                           std::string* why) {
    std::string s = text;
    if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
    std::stringstream entries(s);
    std::string entry;
    while (std::getline(entries, entry, ';')) {
      std::stringstream items(entry);
      std::string item;
      ConfigEntry c = base;
      bool any = false;
      while (items >> item) {
        size_t eq = item.find('=');
        if (eq == std::string::npos) {
          *why = fmt::format("configs: '{}' is not PARAM=VALUE", item);
          return false;
        }
        std::string k = item.substr(0, eq);
        int64_t v;
        try {
          v = std::stoll(item.substr(eq + 1));
        } catch (...) {
          *why = fmt::format("configs: '{}' is not an integer value", item);
          return false;
        }
        if (isOption(k)) {
          c.options[k] = v;
        } else if (base.kwargs.count(k)) {
          c.kwargs[k] = v;
        } else {
          *why = fmt::format("configs: '{}' is not one of the tuned parameters or launch options", k);
          return false;
        }
        any = true;
      }
      if (any && std::find(out->begin(), out->end(), c) == out->end()) out->push_back(c);
    }
    if (out->empty()) {
      *why = "configs: no config given";
      return false;
    }
    return true;
  }

  static std::vector<ConfigEntry> defaultConfigs(const PassContext& ctx, const ConfigEntry& base) {
    std::vector<ConfigEntry> out = {base};
    auto add = [&](ConfigEntry c) {
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
    };
    std::string m, n, kk;
    std::vector<std::string> blocks;
    for (const auto& [p, v] : base.kwargs) {
      auto u = ctx.facts.params.find(p);
      if (u == ctx.facts.params.end()) continue;
      if (u->second.dot_role == "m") m = p;
      else if (u->second.dot_role == "n") n = p;
      else if (u->second.dot_role == "k") kk = p;
      else if (u->second.tile_extent) blocks.push_back(p);
    }
    bool stages = base.options.count("num_stages") > 0;
    if (!m.empty() && !n.empty()) {
      // (BM, BN, BK, warps, stages): tiles that keep Hopper's tensor cores busy on fp16/bf16.
      const int64_t table[][5] = {{128, 256, 64, 8, 3}, {256, 128, 64, 8, 3}, {128, 128, 64, 8, 3},
                                  {128, 128, 32, 4, 4}, {128, 64, 32, 4, 4},  {64, 128, 32, 4, 4},
                                  {64, 64, 32, 4, 4}};
      for (const auto& row : table) {
        ConfigEntry c = base;
        c.kwargs[m] = row[0];
        c.kwargs[n] = row[1];
        if (!kk.empty()) c.kwargs[kk] = row[2];
        c.options["num_warps"] = row[3];
        if (stages) c.options["num_stages"] = row[4];
        add(c);
      }
      return out;
    }
    if (blocks.size() == 1) {
      for (int64_t b : {256, 512, 1024, 2048, 4096}) {
        ConfigEntry c = base;
        c.kwargs[blocks[0]] = b;
        c.options["num_warps"] = std::clamp<int64_t>(b / 256, 1, 16);
        add(c);
      }
      return out;
    }
    if (base.kwargs.empty()) {
      for (int64_t w : {1, 2, 4, 8, 16}) {
        ConfigEntry c = base;
        c.options["num_warps"] = w;
        add(c);
      }
    }
    return out;
  }

  // The runtime parameters the kernel compares against or loops up to (sizes, not strides).
  static std::vector<std::string> defaultKey(const PassContext& ctx) {
    std::set<std::string> used;
    walk(ctx.body(), [&](const Node& n) {
      const Node* scan = nullptr;
      if (isType(n, "Compare")) scan = &n;
      if (isType(n, "Call")) {
        std::string f = dottedName(n["func"]);
        if (f == "range" || ctx.isTlCall(n, "range") || ctx.isTlCall(n, "cdiv")) scan = &n["args"];
      }
      if (scan) {
        forEachName(*scan, [&](const Node& x) { used.insert(x["id"].get<std::string>()); });
      }
      return true;
    });
    std::vector<std::string> out;
    for (const auto& p : ctx.kernel->params) {
      if (p.is_constexpr || !used.count(p.name)) continue;
      if (p.name.find("stride") != std::string::npos || p.name.find("ptr") != std::string::npos) continue;
      auto sig = ctx.signature.find(p.name);
      if (sig != ctx.signature.end() && sig->second.is_string() && sig->second.get<std::string>().rfind("*", 0) == 0) {
        continue;
      }
      out.push_back(p.name);
    }
    return out;
  }

  static std::string configFunction(const PassContext& ctx) {
    for (const auto& [local, full] : ctx.ir->aliases) {
      if (full == "triton.Config") return local;
    }
    return ctx.triton() + ".Config";
  }

  // Names in the kernel's parameter order (then any others, sorted).
  static std::vector<std::string> inParamOrder(const PassContext& ctx, const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const auto& p : ctx.kernel->params) {
      if (std::find(names.begin(), names.end(), p.name) != names.end()) out.push_back(p.name);
    }
    for (const auto& n : names) {
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    return out;
  }

  static std::string configText(const PassContext& ctx, const ConfigEntry& c) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : c.kwargs) keys.push_back(k);
    std::string dict;
    for (const auto& k : inParamOrder(ctx, keys)) dict += fmt::format("{}'{}': {}", dict.empty() ? "" : ", ", k, c.kwargs.at(k));
    std::string opts;
    for (const char* o : {"num_warps", "num_stages", "num_ctas", "maxnreg"}) {
      if (c.options.count(o)) opts += fmt::format(", {}={}", o, c.options.at(o));
    }
    return fmt::format("{}({{{}}}{})", configFunction(ctx), dict, opts);
  }

  static std::string decoratorText(const PassContext& ctx, const std::vector<ConfigEntry>& configs,
                                   const std::vector<std::string>& key, const std::string& indent) {
    std::string u = ctx.indentUnit();
    std::string autotune = ctx.triton() + ".autotune";
    for (const auto& [local, full] : ctx.ir->aliases) {
      if (full == "triton.autotune") autotune = local;
    }
    std::string s = indent + "@" + autotune + "(\n" + indent + u + "configs=[\n";
    for (const auto& c : configs) s += indent + u + u + configText(ctx, c) + ",\n";
    s += indent + u + "],\n" + indent + u + "key=[";
    for (size_t i = 0; i < key.size(); ++i) s += (i ? ", '" : "'") + key[i] + "'";
    s += "],\n" + indent + ")\n";
    return s;
  }

  // Makes the grid read tuned values from META: literals that mirror a tuned value and the
  // launcher variables that carried one become META['PARAM'].
  static bool rewriteGrid(const PassContext& ctx, SourceEditor& ed, const LaunchSite& site, const GridView& g,
                          const std::vector<const Tunable*>& tuned, std::string* why) {
    std::string meta = g.lambda ? g.lambda_arg : "META";
    Range whole = ctx.range(*g.expr);
    bool changed = false;
    for (const Tunable* t : tuned) {
      if (t->site < 0 || &ctx.ir->launches[static_cast<size_t>(t->site)] != &site) continue;
      std::string repl = fmt::format("{}['{}']", meta, t->param);
      for (const auto& m : t->mirrors) {
        if (m.begin >= whole.begin && m.end <= whole.end) {
          ed.replace(m, repl);
          changed = true;
        }
      }
      if (t->origin == TunableOrigin::kLocalLiteral) {
        const Node* a = launchValue(site, t->param);
        if (!a || !isType(*a, "Name")) continue;
        std::string var = (*a)["id"].get<std::string>();
        bool shadowed = false;
        forEachName(*g.expr, [&](const Node& n) {
          if (n["id"] == var) {
            ed.replace(ctx.range(n), repl);
            changed = true;
          }
        });
        if (g.lambda && g.lambda_arg == var) shadowed = true;
        if (shadowed) {
          *why = fmt::format("the grid lambda's argument is named like the launcher variable '{}'", var);
          return false;
        }
      }
    }
    if (changed && !g.lambda) ed.insert(whole.begin, "lambda " + meta + ": ");
    return true;
  }

  // Removes `VAR = literal` lines in launchers when VAR only carried a tuned value to the
  // launch (and to the grid, which now reads META).
  static void removeDeadVariables(const PassContext& ctx, SourceEditor& ed, const std::vector<const Tunable*>& tuned) {
    std::set<std::pair<std::string, std::string>> done;
    for (const Tunable* t : tuned) {
      if (t->origin != TunableOrigin::kLocalLiteral || t->site < 0) continue;
      const LaunchSite& site = ctx.ir->launches[static_cast<size_t>(t->site)];
      const Node* a = launchValue(site, t->param);
      if (!a || !isType(*a, "Name")) continue;
      std::string var = (*a)["id"].get<std::string>();
      if (!done.insert({site.function, var}).second) continue;
      const FunctionInfo& fn = ctx.ir->functions.at(site.function);
      const auto& assigns = fn.assignments.at(var);
      const Node* stmt = assigns[0].stmt;
      if (!isType(*stmt, "Assign") || (*stmt)["targets"].size() != 1 || !isType((*stmt)["targets"][0], "Name")) continue;
      // Every other use must be in a launch of this kernel (removed) or in its grid (now META).
      int other = 0;
      std::string gwhy;
      std::vector<Range> allowed;
      for (const LaunchSite* s : ctx.sites) {
        if (s->function != site.function) continue;
        if (const Node* v = launchValue(*s, t->param)) allowed.push_back(ctx.range(*v));
        if (auto g = gridOf(ctx, *s, &gwhy)) allowed.push_back(ctx.range(*g->expr));
      }
      walk(fn.def->at("body"), [&](const Node& n) {
        if (!isType(n, "Name") || n["id"] != var || n["ctx"] != "Load") return true;
        Range r = ctx.range(n);
        bool ok = false;
        for (const auto& x : allowed) ok = ok || (r.begin >= x.begin && r.end <= x.end);
        if (!ok) ++other;
        return true;
      });
      if (other == 0) ed.replace(ctx.lineRange(*stmt), "");
    }
  }

  PassInfo info_;
};

}  // namespace

std::unique_ptr<Pass> makeAutotunePass() { return std::make_unique<AutotunePass>(); }

}  // namespace tf
