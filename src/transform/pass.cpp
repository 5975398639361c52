#include "transform/pass.h"

#include <fmt/format.h>

#include <cctype>
#include <stdexcept>

#include "diagnose/vocabulary.h"
#include "transform/passes/passes.h"
#include "transform/source_editor.h"
#include "util/error.h"
#include "util/text.h"

namespace tf {
namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::optional<int64_t> parseInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (size_t k = i; k < s.size(); ++k) {
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return std::nullopt;
  }
  try {
    return std::stoll(s);
  } catch (...) {
    return std::nullopt;
  }
}

std::vector<std::string> splitNames(const std::string& v) {
  std::string s = v;
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '+' || c == ',') {
      if (!trim(cur).empty()) out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

std::string kindText(const ParamSpec& p) {
  switch (p.kind) {
    case PassParamKind::kInt: {
      std::string s = fmt::format("integer {}..{}", p.min, p.max);
      if (p.power_of_two) s += ", a power of two";
      return s;
    }
    case PassParamKind::kChoice: {
      std::string s;
      for (const auto& c : p.choices) s += (s.empty() ? "" : "|") + c;
      return s;
    }
    case PassParamKind::kNames:
      return "names, a+b or [a,b]";
    case PassParamKind::kText:
      return "text";
  }
  return "";
}

}  // namespace

PassOutcome refuse(std::string reason) {
  PassOutcome o;
  o.applied = false;
  o.reason = std::move(reason);
  return o;
}

PassOutcome appliedEdits(const SourceEditor& ed, const std::string& kernel) {
  PassOutcome out;
  try {
    out.source = ed.apply();
  } catch (const std::logic_error& e) {
    return refuse(fmt::format("the rewrites of {} overlap ({})", kernel, e.what()));
  }
  out.applied = true;
  return out;
}

const std::string& PassArgs::text(std::string_view key) const {
  static const std::string empty;
  auto it = values_.find(std::string(key));
  return it == values_.end() ? empty : it->second;
}

int64_t PassArgs::integer(std::string_view key) const {
  auto v = parseInt(text(key));
  if (!v) throw std::logic_error(fmt::format("pass argument '{}' is not an integer", key));
  return *v;
}

std::vector<std::string> PassArgs::names(std::string_view key) const { return splitNames(text(key)); }

const std::vector<std::unique_ptr<Pass>>& allPasses() {
  static const std::vector<std::unique_ptr<Pass>> passes = [] {
    std::vector<std::unique_ptr<Pass>> v;
#define TF_MAKE_PASS(id, name, role) v.push_back(make##id##Pass());
    TF_PASS_TABLE(TF_MAKE_PASS)
#undef TF_MAKE_PASS
    // Each pass names itself in its PassInfo: the table's name, or the table and the pass
    // disagree (a bug, caught before any pass runs).
    for (size_t i = 0; i < v.size(); ++i) {
      const char* listed = toString(allPassNames()[i]);
      if (v[i]->info().name != listed) {
        throw std::logic_error(fmt::format("pass registry: row {} is '{}' but its pass calls itself '{}'", i + 1,
                                           listed, v[i]->info().name));
      }
    }
    return v;
  }();
  return passes;
}

const Pass* findPass(std::string_view name) {
  for (const auto& p : allPasses()) {
    if (p->info().name == name) return p.get();
  }
  return nullptr;
}

PassSpec parsePassSpec(std::string_view spec) {
  PassSpec out;
  size_t colon = spec.find(':');
  out.name = trim(spec.substr(0, colon));
  if (out.name.empty()) throw UserError(fmt::format("pass spec '{}': no pass name", spec));
  if (colon == std::string_view::npos) return out;
  std::string_view rest = spec.substr(colon + 1);
  // Split on commas outside [...].
  std::vector<std::string> items;
  std::string cur;
  int depth = 0;
  for (char c : rest) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) throw UserError(fmt::format("pass spec '{}': unbalanced ']'", spec));
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (depth != 0) throw UserError(fmt::format("pass spec '{}': unbalanced '['", spec));
  items.push_back(cur);
  for (const auto& item : items) {
    if (trim(item).empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw UserError(fmt::format("pass spec '{}': '{}' is not key=value", spec, trim(item)));
    }
    std::string key = trim(item.substr(0, eq));
    std::string value = trim(item.substr(eq + 1));
    if (!isIdentifier(key)) throw UserError(fmt::format("pass spec '{}': '{}' is not a parameter name", spec, key));
    for (const auto& [k, v] : out.args) {
      if (k == key) throw UserError(fmt::format("pass spec '{}': '{}' is given twice", spec, key));
    }
    out.args.emplace_back(key, value);
  }
  return out;
}

PassArgs validateArgs(const Pass& pass, const PassSpec& spec) {
  const PassInfo& info = pass.info();
  std::map<std::string, std::string> values;
  for (const auto& [key, value] : spec.args) {
    const ParamSpec* p = nullptr;
    for (const auto& q : info.params) {
      if (q.name == key) p = &q;
    }
    if (!p) {
      if (info.extra_keys) {
        values[key] = value;
        continue;
      }
      std::string known;
      for (const auto& q : info.params) known += (known.empty() ? "" : ", ") + q.name;
      throw UserError(fmt::format("pass '{}': unknown parameter '{}' (it takes: {})", info.name, key,
                                  known.empty() ? "none" : known));
    }
    if (value.empty()) throw UserError(fmt::format("pass '{}': parameter '{}' has no value", info.name, key));
    switch (p->kind) {
      case PassParamKind::kInt: {
        auto v = parseInt(value);
        if (!v) throw UserError(fmt::format("pass '{}': {}={} is not an integer", info.name, key, value));
        if (*v < p->min || *v > p->max) {
          throw UserError(fmt::format("pass '{}': {}={} is outside {}..{}", info.name, key, value, p->min, p->max));
        }
        if (p->power_of_two && (*v & (*v - 1)) != 0) {
          throw UserError(fmt::format("pass '{}': {}={} is not a power of two", info.name, key, value));
        }
        break;
      }
      case PassParamKind::kChoice: {
        bool ok = false;
        for (const auto& c : p->choices) ok = ok || c == value;
        if (!ok) throw UserError(fmt::format("pass '{}': {}={} is not one of {}", info.name, key, value, kindText(*p)));
        break;
      }
      case PassParamKind::kNames: {
        auto names = splitNames(value);
        if (names.empty()) throw UserError(fmt::format("pass '{}': {} names nothing", info.name, key));
        for (const auto& n : names) {
          if (!isIdentifier(n)) throw UserError(fmt::format("pass '{}': '{}' in {} is not a name", info.name, n, key));
        }
        break;
      }
      case PassParamKind::kText:
        break;
    }
    values[key] = value;
  }
  for (const auto& p : info.params) {
    if (values.count(p.name)) continue;
    if (p.required) throw UserError(fmt::format("pass '{}': parameter '{}' is required ({})", info.name, p.name, p.help));
    if (!p.default_value.empty()) values[p.name] = p.default_value;
  }
  return PassArgs(std::move(values));
}

void PassFilter::disable(std::string_view names) {
  for (const auto& n : splitNames(std::string(names))) {
    if (!findPass(n)) {
      std::string known;
      for (const auto& p : allPasses()) known += (known.empty() ? "" : ", ") + p->info().name;
      throw UserError(fmt::format("--no-pass: no pass named '{}' (passes: {})", n, known));
    }
    disabled_.insert(n);
  }
}

std::string describePasses(const PassFilter& filter) {
  std::string out;
  for (const auto& pass : allPasses()) {
    const PassInfo& info = pass->info();
    out += fmt::format("{}{}\n  {}\n", info.name, filter.enabled(info.name) ? "" : "  (switched off)", info.summary);
    if (!info.preconditions.empty()) {
      out += "  preconditions:\n";
      for (const auto& p : info.preconditions) out += fmt::format("    - {}\n", p);
    }
    if (!info.params.empty() || info.extra_keys) {
      out += "  parameters:\n";
      for (const auto& p : info.params) {
        std::string dflt = p.required ? "required" : p.default_value.empty() ? "optional" : "default " + p.default_value;
        out += fmt::format("    {} ({}; {}): {}\n", p.name, kindText(p), dflt, p.help);
      }
      if (info.extra_keys) out += fmt::format("    {}\n", info.extra_keys_help);
    }
    out += "\n";
  }
  return out;
}

}  // namespace tf
