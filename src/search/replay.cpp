#include "search/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

#include "search/budget.h"
#include "search/stop_conditions.h"
#include "search/strategy.h"
#include "search/trace.h"
#include "search/tuner.h"
#include "util/error.h"
#include "util/fs.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(trim(cur));
  return out;
}

// "# a=1 b="x y" c" -> {a: 1, b: x y}
void parseMeta(const std::string& line, std::map<std::string, std::string>* meta) {
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t k = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i])) && line[i] != '=') ++i;
    std::string key = line.substr(k, i - k);
    if (i >= line.size() || line[i] != '=') continue;
    ++i;
    std::string value;
    if (i < line.size() && line[i] == '"') {
      size_t end = line.find('"', i + 1);
      if (end == std::string::npos) end = line.size();
      value = line.substr(i + 1, end - i - 1);
      i = end + 1;
    } else {
      size_t v = i;
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      value = line.substr(v, i - v);
    }
    if (!key.empty()) (*meta)[key] = value;
  }
}

std::optional<int64_t> parseInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  size_t used = 0;
  try {
    long long v = std::stoll(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

TunableRole roleFromName(const std::string& name) {
  std::string u = upper(name);
  if (u == "NUM_WARPS") return TunableRole::kNumWarps;
  if (u == "NUM_STAGES") return TunableRole::kNumStages;
  if (u.find("GROUP") != std::string::npos) return TunableRole::kGroup;
  auto ends = [&](const char* suffix) {
    std::string s = suffix;
    return u.size() >= s.size() && u.compare(u.size() - s.size(), s.size(), s) == 0;
  };
  bool tile = u.rfind("BLOCK", 0) == 0 || u.rfind("TILE", 0) == 0 || u == "BM" || u == "BN" || u == "BK";
  if (tile && (ends("_M") || u == "BM")) return TunableRole::kTileM;
  if (tile && (ends("_N") || u == "BN")) return TunableRole::kTileN;
  if (tile && (ends("_K") || u == "BK")) return TunableRole::kTileK;
  if (tile) return TunableRole::kBlock;
  return TunableRole::kOther;
}

std::optional<double> Sweep::optimum() const {
  std::optional<double> best;
  for (const auto& t : times) {
    if (t && (!best || *t < *best)) best = t;
  }
  return best;
}

Sweep loadSweep(const fs::path& path) {
  std::string text = readTextFile(path, "sweep");
  Sweep s;
  s.path = path;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  int time_col = -1, status_col = -1;
  std::vector<int> param_cols;
  bool have_header = false;
  size_t columns = 0;
  auto fail = [&](const std::string& what) {
    throw UserError(fmt::format("{}:{}: {}", path.string(), lineno, what));
  };
  while (std::getline(in, line)) {
    ++lineno;
    std::string t = trim(line);
    if (t.empty()) continue;
    if (t[0] == '#') {
      parseMeta(t.substr(1), &s.meta);
      continue;
    }
    std::vector<std::string> cells = splitCsv(t);
    if (!have_header) {
      have_header = true;
      columns = cells.size();
      std::set<std::string> names;
      for (size_t i = 0; i < cells.size(); ++i) {
        const std::string& name = cells[i];
        if (name.empty()) fail(fmt::format("column {} has no name", i + 1));
        if (!names.insert(name).second) fail(fmt::format("column '{}' appears twice", name));
        if (name == "time_ms") time_col = static_cast<int>(i);
        else if (name == "status") status_col = static_cast<int>(i);
        else {
          param_cols.push_back(static_cast<int>(i));
          s.params.push_back(name);
        }
      }
      if (time_col < 0) fail("no time_ms column (the header must name one column per parameter and time_ms)");
      if (s.params.empty()) fail("no parameter column besides time_ms");
      continue;
    }
    if (cells.size() != columns) fail(fmt::format("{} fields where the header has {}", cells.size(), columns));
    std::vector<int64_t> row;
    for (size_t j = 0; j < param_cols.size(); ++j) {
      auto v = parseInt(cells[static_cast<size_t>(param_cols[j])]);
      if (!v) fail(fmt::format("{} = '{}' is not an integer", s.params[j], cells[static_cast<size_t>(param_cols[j])]));
      row.push_back(*v);
    }
    const std::string& tm = cells[static_cast<size_t>(time_col)];
    std::optional<double> time;
    if (!tm.empty()) {
      char* end = nullptr;
      double v = std::strtod(tm.c_str(), &end);
      if (end != tm.c_str() + tm.size() || !std::isfinite(v) || v <= 0) {
        fail(fmt::format("time_ms = '{}' is not a positive number (leave it empty for a failed configuration)", tm));
      }
      time = v;
    }
    std::string status = status_col >= 0 ? cells[static_cast<size_t>(status_col)] : (time ? "ok" : "failed");
    if (status.empty()) status = time ? "ok" : "failed";
    s.rows.push_back(std::move(row));
    s.times.push_back(time);
    s.statuses.push_back(status);
  }
  if (!have_header) throw UserError(fmt::format("{}: empty sweep (no header line)", path.string()));
  if (s.rows.empty()) throw UserError(fmt::format("{}: the sweep has a header but no rows", path.string()));
  std::set<std::vector<int64_t>> unique;
  for (size_t i = 0; i < s.rows.size(); ++i) {
    if (!unique.insert(s.rows[i]).second) {
      throw UserError(fmt::format("{}: row {} repeats the configuration of an earlier row", path.string(), i + 1));
    }
  }
  if (s.meta.count("kernel")) s.kernel = s.meta["kernel"];
  return s;
}

std::string sweepToCsv(const Sweep& s) {
  std::string out = "# tritonforge-sweep/1\n";
  if (!s.meta.empty()) {
    out += "#";
    for (const auto& [k, v] : s.meta) {
      if (k == "tritonforge-sweep/1") continue;
      std::string value = v;
      std::replace(value.begin(), value.end(), '"', '\'');   // a value cannot hold the quote that delimits it
      bool quote = value.find_first_of(" \t,") != std::string::npos || value.empty();
      out += fmt::format(" {}={}", k, quote ? "\"" + value + "\"" : value);
    }
    out += "\n";
  }
  for (const auto& p : s.params) out += p + ",";
  out += "time_ms,status\n";
  for (size_t i = 0; i < s.rows.size(); ++i) {
    for (int64_t v : s.rows[i]) out += std::to_string(v) + ",";
    out += s.times[i] ? fmt::format("{:.6g}", *s.times[i]) : "";
    out += "," + (i < s.statuses.size() ? s.statuses[i] : std::string(s.times[i] ? "ok" : "failed")) + "\n";
  }
  return out;
}

nlohmann::json ReplayResult::toJson(const Sweep& sweep) const {
  nlohmann::json j = {{"file", sweep.path.string()},
                      {"strategy", strategy},
                      {"strategy_reason", strategy_why},
                      {"rows", rows},
                      {"reachable", reachable},
                      {"evaluations", evaluations},
                      {"rounds", rounds},
                      {"stopped_because", stop_reason}};
  if (best_row) {
    nlohmann::json cfg = nlohmann::json::object();
    for (size_t i = 0; i < sweep.params.size(); ++i) cfg[sweep.params[i]] = sweep.rows[*best_row][i];
    j["best"] = {{"config", cfg}, {"time_ms", *best_time}, {"row", *best_row + 1}};
  } else {
    j["best"] = nullptr;
  }
  if (optimum) {
    j["optimum_ms"] = *optimum;
    if (best_time) j["gap"] = *best_time / *optimum - 1.0;
  }
  j["evaluations_to_within_3pct"] = evals_to_within_3pct ? nlohmann::json(*evals_to_within_3pct) : nullptr;
  nlohmann::json ord = nlohmann::json::array();
  for (const auto& e : order) {
    ord.push_back({{"row", e.row + 1},
                   {"round", e.round},
                   {"time_ms", e.time_ms ? nlohmann::json(*e.time_ms) : nullptr},
                   {"origin", e.origin}});
  }
  j["order"] = ord;
  j["trace"] = trace;
  return j;
}

ReplayResult replaySweep(const Sweep& sweep, const ReplayOptions& options) {
  // A tunable per column, with the role its name suggests, so that the static pruning and
  // the prior of `optimize` apply as they would to the kernel.
  TunableSet set;
  SpaceHints hints;
  bool has_m = false, has_n = false;
  for (size_t j = 0; j < sweep.params.size(); ++j) {
    const std::string& name = sweep.params[j];
    Tunable t;
    size_t dot = name.find('.');
    t.kernel = dot == std::string::npos ? sweep.kernel : name.substr(0, dot);
    t.param = dot == std::string::npos ? name : name.substr(dot + 1);
    t.id = t.kernel + "." + t.param;
    t.role = roleFromName(t.param);
    has_m |= t.role == TunableRole::kTileM;
    has_n |= t.role == TunableRole::kTileN;
    std::set<int64_t> vals;
    for (const auto& r : sweep.rows) vals.insert(r[j]);
    hints.domains[t.id] = std::vector<int64_t>(vals.begin(), vals.end());
    t.value = sweep.rows[0][j];
    set.items.push_back(t);
  }
  if (auto it = sweep.meta.find("baseline"); it != sweep.meta.end()) {
    // baseline="32,32,32,4,3": the configuration as written, in column order
    std::vector<std::string> cells = splitCsv(it->second);
    if (cells.size() != sweep.params.size()) {
      throw UserError(fmt::format("{}: baseline has {} values for {} parameters", sweep.path.string(), cells.size(),
                                  sweep.params.size()));
    }
    for (size_t j = 0; j < cells.size(); ++j) {
      auto v = parseInt(cells[j]);
      if (!v) throw UserError(fmt::format("{}: baseline value '{}' is not an integer", sweep.path.string(), cells[j]));
      set.items[j].value = *v;
    }
  }
  bool dots = sweep.meta.count("dots") ? sweep.meta.at("dots") != "0" : (has_m && has_n);
  for (const auto& t : set.items) {
    KernelFacts& f = set.facts[t.kernel];
    if (dots && f.dots.empty()) f.dots.push_back(DotFact{"BLOCK_M", "BLOCK_N", "BLOCK_K", nullptr, true});
    ParamUsage u;
    u.used = true;
    u.tile_extent = t.role != TunableRole::kNumWarps && t.role != TunableRole::kNumStages;
    u.pid_scaled = t.role == TunableRole::kBlock && sweep.meta.count("elementwise") && sweep.meta.at("elementwise") != "0";
    if (t.role != TunableRole::kNumWarps && t.role != TunableRole::kNumStages) f.params[t.param] = u;
  }
  if (auto it = sweep.meta.find("elem_bytes"); it != sweep.meta.end()) {
    auto v = parseInt(it->second);
    if (!v || *v <= 0) throw UserError(fmt::format("{}: elem_bytes must be a positive integer", sweep.path.string()));
    for (const auto& t : set.items) hints.elem_bytes[t.kernel] = static_cast<int>(*v);
  }

  // A matmul sweep's problem size (cases="{'M': 512, 'N': 512, ...}") gives the programs
  // the baseline launched, as the measured grid does in `optimize`.
  if (dots) {
    if (auto it = sweep.meta.find("cases"); it != sweep.meta.end()) {
      auto dim = [&](const std::string& key) -> std::optional<int64_t> {
        std::string text = it->second;
        size_t at = text.find("'" + key + "'");
        if (at == std::string::npos) return std::nullopt;
        at = text.find(':', at);
        if (at == std::string::npos) return std::nullopt;
        return parseInt(text.substr(at + 1, text.find_first_of(",}", at) - at - 1));
      };
      int64_t bm0 = 0, bn0 = 0;
      for (const auto& t : set.items) {
        if (t.role == TunableRole::kTileM && t.value) bm0 = *t.value;
        if (t.role == TunableRole::kTileN && t.value) bn0 = *t.value;
      }
      auto m = dim("M"), n = dim("N");
      if (m && n && bm0 > 0 && bn0 > 0) {
        hints.baseline_programs[sweep.kernel] =
            static_cast<double>(((*m + bm0 - 1) / bm0) * ((*n + bn0 - 1) / bn0));
      }
    }
  }
  Space full(set, hints);
  std::map<std::string, size_t> row_of;
  auto configOf = [&](size_t i) {
    Config c;
    for (size_t j = 0; j < set.items.size(); ++j) c[set.items[j].id] = sweep.rows[i][j];
    return c;
  };
  std::set<std::string> keys;
  size_t reachable = 0;
  for (size_t i = 0; i < sweep.rows.size(); ++i) {
    Config c = configOf(i);
    std::string k = full.key(c);
    row_of[k] = i;
    if (full.valid(c)) {
      keys.insert(k);
      ++reachable;
    }
  }
  Space space = full.onlyKeys(keys);

  ReplayResult res;
  res.rows = sweep.rows.size();
  res.reachable = reachable;
  res.optimum = sweep.optimum();
  StrategyChoice choice = chooseStrategy(options.strategy, space);
  res.strategy = choice.name;
  res.strategy_why = choice.why;
  auto strategy = makeStrategy(choice.name, options.seed);
  StopSettings settings;
  settings.max_candidates = options.max_evals;
  settings.stall_rounds = options.stall_rounds;
  // The budget as `optimize` plans it, on a simulated clock: each evaluation takes
  // `seconds_per_candidate` (and so does each case of the confirmation's measurements).
  SimulatedClock clock;
  std::optional<Budget> budget;
  if (options.budget_s) {
    budget.emplace(BudgetPlan::of(*options.budget_s, {options.seconds_per_candidate}, 600), clock);
    settings.budget = budget->plan();
  }
  if (options.within_roofline_pct) {
    auto it = sweep.meta.find("roofline_ms");
    if (it == sweep.meta.end()) {
      throw UserError(fmt::format("{}: --within-roofline needs a roofline_ms in the file's metadata",
                                  sweep.path.string()));
    }
    settings.target_objective = std::stod(it->second) * (1.0 + *options.within_roofline_pct / 100.0);
  }
  StopConditions stop = makeStopConditions(settings);
  Trace trace;
  trace.add("replay", {{"file", sweep.path.string()},
                       {"strategy", choice.name},
                       {"strategy_reason", choice.why},
                       {"seed", options.seed},
                       {"rows", res.rows},
                       {"reachable", reachable}});
  Tuner tuner(space, *strategy, 0.005, &trace);
  if (sweep.meta.count("baseline")) {
    Config base = full.baseline();
    auto it = row_of.find(full.key(base));
    if (it != row_of.end()) {
      tuner.preload(base, sweep.times[it->second], "baseline");
      res.best_time = sweep.times[it->second];
      if (res.best_time) res.best_row = it->second;
    }
  }
  auto progress = [&] {
    SearchProgress p;
    p.evaluated = tuner.evaluations();
    clock.set((tuner.evaluations() + 1) * options.seconds_per_candidate);  // the baseline's too
    p.elapsed_s = clock.elapsed();
    p.stalled_rounds = tuner.stalledRounds();
    if (auto b = tuner.best()) p.best_objective = b->objective;
    return p;
  };
  while (true) {
    res.stop_reason = stop.check(progress());
    if (!res.stop_reason.empty()) break;
    int n = std::max(1, options.batch);
    if (options.max_evals > 0) n = std::min(n, options.max_evals - tuner.evaluations());
    std::vector<TunerProposal> round = tuner.nextRound(n);
    if (round.empty()) {
      SearchProgress p = progress();
      p.nothing_to_run = true;
      res.stop_reason = stop.check(p);
      break;
    }
    for (const auto& p : round) {
      auto it = row_of.find(space.key(p.config));
      if (it == row_of.end()) {
        // A strategy proposed something outside the recorded space: a bug in it.
        throw std::logic_error("replay: strategy proposed an unrecorded configuration " + space.key(p.config));
      }
      size_t row = it->second;
      tuner.observe(p, sweep.times[row]);
      res.order.push_back({row, tuner.rounds(), sweep.times[row], p.origin});
      if (sweep.times[row] && (!res.best_time || *sweep.times[row] < *res.best_time)) {
        res.best_time = sweep.times[row];
        res.best_row = row;
      }
      if (res.optimum && res.best_time && !res.evals_to_within_3pct && *res.best_time <= *res.optimum * 1.03) {
        res.evals_to_within_3pct = tuner.evaluations();
      }
    }
    tuner.endRound(0);
  }
  res.evaluations = tuner.evaluations();
  res.rounds = tuner.rounds();
  trace.add("stop", {{"reason", res.stop_reason}, {"evaluations", res.evaluations}});
  res.trace = trace.toJson();
  return res;
}

}  // namespace tf
