#include "fuzz/targets.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <unistd.h>

#include "compile/compiled_facts.h"
#include "measure/ncu_csv.h"
#include "measure/ncu_metrics.h"
#include "store/measure_env.h"
#include "store/results_db.h"
#include "task/task.h"
#include "util/error.h"
#include "worker/measurement.h"
#include "worker/protocol.h"
#include "worker/target.h"
#include "worker/worker_client.h"

namespace tf::fuzz {
namespace fs = std::filesystem;
namespace {

void writeBytes(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) throw std::runtime_error("fuzz: cannot write " + p.string());
}

// Empty when `s` can go into JSON output (nlohmann's dump is strict about UTF-8).
std::string notJsonText(const std::string& s, const char* what) {
  try {
    (void)nlohmann::json(s).dump();
    return "";
  } catch (const nlohmann::json::exception& e) {
    return fmt::format("{} cannot be written as JSON ({})", what, e.what());
  }
}

std::string notOneLine(const std::string& s, const char* what) {
  if (s.find_first_of("\n\r") != std::string::npos) return fmt::format("{} is not one line: '{}'", what, s);
  return notJsonText(s, what);
}

size_t cap(size_t n, size_t most) { return std::min(n, most); }

// UTF-8 sequences at the edges of validity: an overlong form, a surrogate, one past U+10FFFF,
// a sequence cut short, and U+FFFD, U+2028 that are valid.
const std::vector<std::string> kUtf8Edges = {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                             "\xE2\x82",  "\xEF\xBF\xBD", "\xE2\x80\xA8", "\xF0\x9F\x98\x80"};

std::vector<std::string> withUtf8Edges(std::vector<std::string> d) {
  d.insert(d.end(), kUtf8Edges.begin(), kUtf8Edges.end());
  return d;
}

// ---------------------------------------------------------------------------------------
// task: loadTask on a mutated task.toml beside valid source and harness files.

class TaskTarget : public FuzzTarget {
 public:
  explicit TaskTarget(const fs::path& dir) : dir_(dir), file_(dir / "task.toml") {
    writeBytes(dir_ / "k.py", "def launch(x):\n    return x\n");
    writeBytes(dir_ / "h.py", "def make_inputs(case, seed):\n    return ()\ndef reference():\n    return 0\n");
    fs::create_directories(dir_ / "sub");
    label_ = fs::absolute(file_).lexically_normal().string();
  }
  std::string name() const override { return "task"; }
  std::string suffix() const override { return ".toml"; }

  MutationSpace space() override {
    MutationSpace s;
    s.max_size = 4096;
    // docs/task-format.md: every key, the values it takes, and TOML's own syntax.
    s.dictionary = withUtf8Edges({
        "name", "source", "launcher", "harness", "cases", "kernels", "check", "signature", "direction", "rtol", "atol",
        "seeds", "reference_precision", "in_place", "\"k.py\"", "\"h.py\"", "\"sub\"", "\"../k.py\"",
        "\"/nonexistent\"", "\"launch\"", "\"float64\"", "\"as-is\"", "\"*fp16\"", "\"*kfp16\"", "\"i32\"",
        "\"u1\"", "\"B\"", "\"fp8e4nv\"", "\"tensordesc<fp16[64, 64]>\"", "\"tensordesc<fp16[]>\"", "[check]",
        "[signature.k]", "[signature]", "[[cases]]", "[cases]", "[[check]]", " = ", "=", "[", "]", "[ ]", "{",
        "}", "{ }", ",", ".", "\"", "'", "'''", "\"\"\"", "\\", "\\n", "\\u0000", "\\u000A", "\\U0010FFFF",
        "\\x", "#", "\n", "\r\n", "\r", "\t", "true", "false", "inf", "nan", "-inf", "+nan", "1e400", "0x7f",
        "0o17", "0b101", "1_000", "1979-05-27T07:32:00Z", "07:32:00", "1979-05-27", "9223372036854775807",
        "-9223372036854775808", "9223372036854775808", "2147483648", "-1", "0", "M = 4096", "a.b.c = 1",
        "\"a.b\" = 1", "dtype = \"fp16\"",
    });
    return s;
  }

  Verdict run(const std::string& input) override {
    writeBytes(file_, input);
    Verdict v = classify(label_, [&] { return check(loadTask(file_)); });
    if (v.kind == Verdict::Kind::kValue) v.signature = valueSignature_;
    return v;
  }

 private:
  // What loadTask promises of a task it returns (src/task/task.h, docs/task-format.md): the
  // launcher is a Python name or one dotted pair (Class.apply).
  std::string check(const Task& t) {
    static const std::regex name_re("[A-Za-z0-9_.-]+"), ident("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");
    if (!std::regex_match(t.name, name_re) || t.name == "." || t.name == "..") return "name '" + t.name + "'";
    if (!std::regex_match(t.launcher, ident)) return "launcher '" + t.launcher + "'";
    std::error_code ec;
    for (const auto& p : {t.source, t.harness}) {
      if (!p.is_absolute() || !fs::is_regular_file(p, ec)) return "source or harness '" + p.string() + "' is no file";
    }
    if (t.cases.empty()) return "no cases";
    for (const auto& c : t.cases) {
      if (!c.is_object()) return "a case that is not a table: " + c.dump();
    }
    if (t.check.seeds < 1 || t.check.seeds > 100) return fmt::format("check.seeds {}", t.check.seeds);
    for (const auto& tol : {t.check.rtol, t.check.atol}) {
      if (tol && !(std::isfinite(*tol) && *tol >= 0)) return fmt::format("tolerance {}", *tol);
    }
    if (t.direction != "forward" && t.direction != "backward") return "direction " + t.direction;
    if (t.check.reference_precision != "float64" && t.check.reference_precision != "as-is") {
      return "reference_precision " + t.check.reference_precision;
    }
    for (int i : t.check.in_place) {
      if (i < 0) return fmt::format("in_place {}", i);
    }
    // What the core does with a task: JSON (result.json) and the case labels.
    (void)t.toJson().dump();
    for (size_t i = 0; i < t.cases.size(); ++i) {
      if (auto p = notOneLine(t.caseLabel(i), "a case label"); !p.empty()) return p;
    }
    valueSignature_ = fmt::format("value cases={} kernels={} rtol={} atol={} in_place={} sigs={}",
                                  cap(t.cases.size(), 3), cap(t.kernels.size(), 2), t.check.rtol.has_value(),
                                  t.check.atol.has_value(), cap(t.check.in_place.size(), 2),
                                  cap(t.signatures.size(), 2));
    return "";
  }

  fs::path dir_, file_;
  std::string label_, valueSignature_;
};

// ---------------------------------------------------------------------------------------
// ncu_csv: readNcuRawCsv + kernelMetricsFromTable on a mutated raw page.

class NcuCsvTarget : public FuzzTarget {
 public:
  explicit NcuCsvTarget(const fs::path& dir) : file_(dir / "raw.csv"), label_(file_.string()) {}
  std::string name() const override { return "ncu_csv"; }
  std::string suffix() const override { return ".csv"; }

  MutationSpace space() override {
    MutationSpace s;
    s.max_size = 16384;
    s.dictionary = withUtf8Edges({
        "\"ID\"", "\"Kernel Name\"", "\"Metric Name\"", "\"Metric Value\"", "\"Block Size\"", "\"Grid Size\"",
        "\"gpu__time_duration.sum\"", "\"dram__bytes.sum.per_second\"", "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\"",
        "\"launch__registers_per_thread\"", "\"sm__warps_active.avg.pct_of_peak_sustained_active\"", "__",
        "\"usecond\"", "\"nsecond\"", "\"msecond\"", "\"second\"", "\"Kbyte\"", "\"Mbyte\"", "\"Gbyte\"",
        "\"Pbyte\"", "\"byte/second\"", "\"Gbyte/second\"", "\"cycle/nsecond\"", "\"cycle/usecond/second\"",
        "\"%\"", "\"/\"", "\"//\"", "\"inst\"", "\"Minst\"", "\"register/thread\"", "\"\"", "\"", "\"\"\"\"",
        ",", ",,", "\n", "\r\n", "\r", "==PROF== Disconnected\n", "==WARNING== x\n", "\xEF\xBB\xBF",
        "\"n/a\"", "\"65,536\"", "\"1,234.5\"", "\"3.2e+05\"", "\"1e308\"", "\"-1e308\"", "\"(128, 1, 1)\"",
        "\"void ns::f<int>(float *, int)\"", "\"f<a, b<c>>\"", "\"::\"", "\"<\"", "\">\"", "\"(\"", " ",
        std::string(1, '\0'),
    });
    return s;
  }

  Verdict run(const std::string& input) override {
    writeBytes(file_, input);
    Verdict v = classify(label_, [&] { return check(readNcuRawCsv(file_)); });
    if (v.kind == Verdict::Kind::kValue) v.signature = valueSignature_;
    return v;
  }

 private:
  // What ncu_csv.h and ncu_metrics.h promise of a table they return.
  std::string check(const NcuTable& t) {
    const size_t n = t.columns.size();
    if (n < 2) return "fewer than two columns";
    if (t.columnIndex("Kernel Name") < 0) return "no 'Kernel Name' column";
    if (t.units.size() != n) return fmt::format("{} units for {} columns", t.units.size(), n);
    if (t.rows.empty()) return "no rows";
    if (t.row_lines.size() != t.rows.size()) return "row_lines and rows differ in size";
    for (size_t r = 0; r < t.rows.size(); ++r) {
      if (t.rows[r].size() != n) return fmt::format("row {} has {} fields, the header {}", r, t.rows[r].size(), n);
      if (t.row_lines[r] < 1 || (r > 0 && t.row_lines[r] <= t.row_lines[r - 1])) return "row lines not increasing";
    }
    auto ks = kernelMetricsFromTable(t);
    if (ks.size() != t.rows.size()) return "one KernelMetrics per row expected";
    size_t numbers = 0;
    for (const auto& k : ks) {
      if (auto p = notJsonText(k.name, "a kernel name"); !p.empty()) return p;
      if (auto p = notJsonText(k.id, "a kernel id"); !p.empty()) return p;
      if (auto p = notJsonText(ncuBaseName(k.name), "a kernel's base name"); !p.empty()) return p;
      for (const auto& c : t.columns) {
        const MetricValue* m = k.find(c);
        if (!m) return "column '" + c + "' missing from the metrics";
        if (m->number && !std::isfinite(*m->number)) return fmt::format("'{}' = {}: not finite", c, *m->number);
        if (m->base && !std::isfinite(*m->base)) {
          return fmt::format("'{}' = '{}' {}: {} in the base unit, not finite", c, m->text, m->unit, *m->base);
        }
        if (auto p = notJsonText(m->text, "a metric's text"); !p.empty()) return p;
        if (auto p = notJsonText(m->unit, "a unit"); !p.empty()) return p;
        numbers += m->number.has_value();
      }
      // As the diagnosis asks for figures.
      (void)k.matching("sm__", ".sum");
      (void)k.first({"gpu__time_duration.sum", "dram__bytes.sum.per_second"});
    }
    valueSignature_ = fmt::format("value rows={} units={} numbers={}", cap(t.rows.size(), 3), t.units[0].empty() ? 0 : 1,
                                  numbers > 0);
    return "";
  }

  fs::path file_;
  std::string label_, valueSignature_;
};

// ---------------------------------------------------------------------------------------
// worker: reply lines as the worker writes them, through every reading the core makes.

constexpr uint64_t kReplyId = 7;

class WorkerTarget : public FuzzTarget {
 public:
  std::string name() const override { return "worker"; }
  std::string suffix() const override { return ".jsonl"; }

  MutationSpace space() override {
    MutationSpace s;
    s.max_size = 8192;
    // docs/worker-protocol.md: the envelope, the error object and the fields of each op's result.
    s.dictionary = withUtf8Edges({
        "\"v\"", "\"id\"", "\"ok\"", "\"result\"", "\"error\"", "\"type\"", "\"message\"", "\"traceback\"",
        "\"data\"", "\"fatal\"", "\"status\"", "\"protocol\"", "\"gpu\"", "\"cc\"", "\"sms\"", "\"name\"",
        "\"driver\"", "\"triton\"", "\"torch\"", "\"cuda_runtime\"", "\"shared_per_block_optin\"",
        "\"shared_per_sm\"", "\"registers_per_sm\"", "\"max_threads_per_sm\"", "\"ast\"", "\"line\"", "\"col\"",
        "\"verify\"", "\"passed\"", "\"max_abs_err\"", "\"max_rel_err\"", "\"reason\"", "\"first_bad\"",
        "\"failed_seed\"", "\"reference_note\"", "\"tolerances\"", "\"timing\"", "\"median_ms\"", "\"q1_ms\"",
        "\"q3_ms\"", "\"min_ms\"", "\"max_ms\"", "\"mean_ms\"", "\"reps\"", "\"method\"", "\"kernels\"",
        "\"outputs\"", "\"work\"", "\"wall_seconds\"", "\"num_warps\"", "\"num_stages\"", "\"shared_bytes\"",
        "\"compile_seconds\"", "\"cubin\"", "\"registers\"", "\"stack_bytes\"", "\"local_bytes\"",
        "\"tool_missing\"", "\"spills\"", "\"spill_store_bytes\"", "\"spill_load_bytes\"", "\"sass\"",
        "\"sass_error\"", "\"ptx\"", "\"torch_stubbed\"", "\"dram_bytes_per_s\"", "\"flops_per_s\"",
        "\"fp16\"", "\"ok\"", "\"wrong-result\"", "\"compile-error\"", "\"out-of-resources\"",
        "\"runtime-error\"", "\"timeout\"", "\"crash\"", "\"TaskError\"", "\"RuntimeError\"", "true", "false",
        "null", "7", "-7", "7.0", "1e308", "-1e308", "1e999", "4294967296", "18446744073709551615",
        "18446744073709551616", "-9223372036854775809", "[]", "{}", "[[", "{\"", "\":", ":", ",", "\"",
        "\\n", "\\u0000", "\\ud800", "\\udc00", "\\u00e9", "\n", "\r\n",
        "\"HGMMA.64x128x16.F32.F16 R0, gdesc[UR4], RZ ;\\n\"", "\"LDG.E.128 R4, desc[UR6][R2.64] ;\\n\"",
        "\"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%f1}, %rd1, %rd2;\\n\"",
        "\"ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];\\n\"", "\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32\"",
        "\"cp.async.cg.shared.global [%r1], [%rd1], 16;\\n\"", "\"STL.64 [R1], R2 ;\\n\"",
    });
    s.custom = [](std::string& data, Rng& rng) { return jsonEdit(data, rng); };
    return s;
  }

  // A structure-aware edit: one value anywhere in a line's JSON replaced by a value of
  // another type (a byte edit rarely keeps JSON valid and changes a type).
  static bool jsonEdit(std::string& data, Rng& rng) {
    std::vector<std::pair<size_t, size_t>> lines;
    for (size_t b = 0; b < data.size();) {
      size_t e = data.find('\n', b);
      if (e == std::string::npos) e = data.size();
      if (e > b && data[b] == '{') lines.emplace_back(b, e);
      b = e + 1;
    }
    if (lines.empty()) return false;
    auto [b, e] = lines[rng.below(lines.size())];
    nlohmann::json j = nlohmann::json::parse(data.substr(b, e - b), nullptr, false);
    if (j.is_discarded()) return false;
    std::vector<nlohmann::json*> nodes;
    std::vector<nlohmann::json*> stack = {&j};
    while (!stack.empty() && nodes.size() < 4096) {
      nlohmann::json* n = stack.back();
      stack.pop_back();
      nodes.push_back(n);
      if (n->is_structured()) {
        for (auto& c : *n) stack.push_back(&c);
      }
    }
    static const char* kValues[] = {"null", "true", "false", "0", "-1", "7", "2147483648", "-2147483649", "1e308",
                                    "-1e308", "0.5", "18446744073709551615", "\"\"", "\"x\"", "\"a\\nb\"",
                                    "\"\\ud83d\\ude00\"", "[]", "{}", "[1, 2]", "[9, 0]", "{\"a\": 1}"};
    nlohmann::json* target = nodes[rng.below(nodes.size())];
    if (target->is_object() && !target->empty() && rng.oneIn(4)) {
      auto it = target->begin();
      std::advance(it, static_cast<long>(rng.below(target->size())));
      target->erase(it.key());
    } else {
      *target = nlohmann::json::parse(kValues[rng.below(std::size(kValues))]);
    }
    data.replace(b, e - b, j.dump());
    return true;
  }

  Verdict run(const std::string& input) override {
    std::set<std::string> lines;
    Verdict v = classify("", [&] { return check(input, lines); });
    if (v.kind == Verdict::Kind::kValue) {
      // The kinds of line the input holds, whatever their order and number.
      for (const auto& l : lines) v.signature += l + ";";
    }
    return v;
  }

 private:
  // Every reading the core makes of a reply: none may throw, and what they make must be
  // one-line messages and JSON that can be written.
  std::string check(const std::string& input, std::set<std::string>& lines) {
    // What WorkerProcess::failure makes of the worker's stderr (the same bytes will do).
    if (auto p = notOneLine(summarizeStderr(input), "the stderr summary"); !p.empty()) return p;
    size_t begin = 0;
    for (int n = 0; begin <= input.size() && n < 16; ++n) {
      size_t end = input.find('\n', begin);
      if (end == std::string::npos) end = input.size();
      std::string line = input.substr(begin, end - begin);
      begin = end + 1;
      ReplyLine parsed = parseReplyLine(line, kReplyId);
      if (parsed.kind != ReplyLine::Kind::kReply) {
        lines.insert(parsed.kind == ReplyLine::Kind::kGarbage ? "garbage" : "other id");
        continue;
      }
      std::string sig;
      const WorkerReply& r = parsed.reply;
      if (r.status != WorkerReply::Status::kOk && r.status != WorkerReply::Status::kFailed) {
        return fmt::format("a reply line with status {}", toString(r.status));
      }
      if (auto p = notOneLine(r.message, "the reply's message"); !p.empty()) return p;
      if (auto p = notOneLine(r.error_type, "the reply's error type"); !p.empty()) return p;
      if (auto p = notJsonText(r.detail, "the reply's traceback"); !p.empty()) return p;
      sig += r.ok() ? "[ok" : "[failed";

      CaseMeasurement m = measurementFromReply(r);           // run
      if (!r.ok() && m.status == CandidateStatus::kOk) return "a failed reply made an ok measurement";
      if (auto p = notOneLine(m.message, "a measurement's message"); !p.empty()) return p;
      (void)m.toJson().dump();                                // what the database stores
      CaseMeasurement again = CaseMeasurement::fromJson(m.toJson());
      if (again.status != m.status) {
        return fmt::format("a measurement read back from its JSON has status {}, not {}", toString(again.status),
                           toString(m.status));
      }
      sig += std::string(" m=") + toString(m.status);

      CompiledFacts facts = parseCompiled(compileReplyFrom(r));  // compile
      (void)compiledFactsJson(facts).dump();
      static const std::set<std::string> kCompileStatuses = {"ok", "compile-error", "out-of-resources", "timeout"};
      sig += " c=" + (kCompileStatuses.count(facts.status) ? facts.status : "other") + (facts.instructions ? "+asm" : "");

      CompileOutcome w = warmOutcomeFrom(r, std::chrono::milliseconds(1000));  // warm
      if (auto p = notOneLine(w.message, "a warm outcome's message"); !p.empty()) return p;
      (void)w.toJson().dump();
      sig += std::string(" w=") + toString(w.status);

      ParseReply pr = parseReplyFrom(r);  // parse
      if (pr.ok() != pr.ast.is_object()) return "a parse reply ok without an AST object";
      CeilingsReply cr = ceilingsReplyFrom(r);  // ceilings
      for (const auto& [k, f] : cr.flops_per_s) {
        if (auto p = notJsonText(k, "a ceilings key"); !p.empty()) return p;
      }
      if (r.ok()) {  // hello
        (void)helloProtocolVersion(r.result);
        const nlohmann::json gpu =
            r.result.is_object() && r.result.contains("gpu") ? r.result["gpu"] : nlohmann::json();
        GpuLimits g = GpuLimits::fromHello(gpu);
        static const std::regex sm("sm_[0-9]+");
        if (!std::regex_match(g.name, sm)) return "GPU limits named '" + g.name + "'";
        if (g.sms <= 0 || g.sharedPerBlock() < 0) return fmt::format("GPU limits sms={} shared per block={}", g.sms, g.sharedPerBlock());
        MeasureEnv env = measureEnvOf(r.result, nlohmann::json::object());
        (void)env.key();
      }
      sig += "]";
      lines.insert(sig);
    }
    return "";
  }
};

// ---------------------------------------------------------------------------------------
// results_db: the bytes of a database the code made, mutated, then read and written.

// The keys the seed databases hold (makeSeedDatabase), so that lookups find rows.
MeasureEnv seedEnv() {
  MeasureEnv e;
  e.gpu = "NVIDIA H200";
  e.driver = "580.159.04";
  e.triton = "3.6.0";
  e.worker_protocol = 1;
  e.tool_version = "0.1.0";
  e.torch = "2.9.1+cu128";
  e.cuda = "12.8";
  e.timing = canonicalTiming({{"budget_ms", 250}, {"method", "cuda_event"}});
  return e;
}

const char* kSchema1Sql = R"sql(
PRAGMA journal_mode=WAL;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL,
  task_name TEXT NOT NULL, task_path TEXT NOT NULL, task_hash TEXT NOT NULL, source_hash TEXT NOT NULL,
  gpu TEXT NOT NULL, driver TEXT NOT NULL, triton TEXT NOT NULL, worker_protocol INTEGER NOT NULL,
  tool_version TEXT NOT NULL, strategy TEXT NOT NULL, seed INTEGER NOT NULL, options TEXT NOT NULL,
  resumed_from INTEGER, summary TEXT);
CREATE TABLE measurements (id INTEGER PRIMARY KEY, task_hash TEXT NOT NULL, base_hash TEXT NOT NULL,
  variant_hash TEXT NOT NULL, params TEXT NOT NULL, case_key TEXT NOT NULL, gpu TEXT NOT NULL, driver TEXT NOT NULL,
  triton TEXT NOT NULL, worker_protocol INTEGER NOT NULL, tool_version TEXT NOT NULL, status TEXT NOT NULL,
  time_ms REAL, data TEXT NOT NULL, run_id INTEGER, created_at TEXT NOT NULL,
  UNIQUE (task_hash, base_hash, variant_hash, params, case_key, gpu, driver, triton, worker_protocol));
CREATE TABLE trace (run_id INTEGER NOT NULL, seq INTEGER NOT NULL, t REAL NOT NULL, kind TEXT NOT NULL,
  data TEXT NOT NULL, PRIMARY KEY (run_id, seq));
INSERT INTO meta VALUES ('schema', '1');
INSERT INTO runs VALUES (1, '2026-11-01T00:00:00Z', NULL, 'running', 'add', '/t/task.toml', 'task1', 's1',
  'NVIDIA H200', '580.159.04', '3.6.0', 1, '0.1.0', 'auto', 0, '{}', NULL, NULL);
INSERT INTO measurements VALUES (1, 'task1', 'base1', 'v1', '{"k.BLOCK":128}', '{"N":1024}', 'NVIDIA H200',
  '580.159.04', '3.6.0', 1, '0.1.0', 'ok', 0.5, '{"status":"ok","timing":{"median_ms":0.5}}', 1,
  '2026-11-01T00:00:01Z');
INSERT INTO trace VALUES (1, 0, 0.0, 'baseline', '{"time_ms":0.5}');
)sql";

void sqliteExec(const fs::path& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  if (sqlite3_open(path.c_str(), &raw) != SQLITE_OK) throw std::runtime_error("fuzz: cannot create " + path.string());
  char* err = nullptr;
  int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(raw);
  if (rc != SQLITE_OK) throw std::runtime_error("fuzz: " + path.string() + ": " + msg);
}

CaseMeasurement seedMeasurement(double ms, bool ok) {
  CaseMeasurement m;
  m.status = ok ? CandidateStatus::kOk : CandidateStatus::kWrongResult;
  m.verify.passed = ok;
  m.verify.max_abs_err = ok ? 1e-4 : 0.5;
  if (!ok) {
    m.verify.reason = "output 0 differs at [3, 7]";
    m.verify.first_bad = {{"output", 0}, {"index", {3, 7}}, {"got", 1.5}, {"expected", 1.0}};
    m.verify.failed_seed = 1;
  }
  if (ok) {
    m.timing = TimingStats{};
    m.timing->median_ms = ms;
    m.timing->q1_ms = ms * 0.99;
    m.timing->q3_ms = ms * 1.01;
    m.timing->reps = 100;
    m.timing->method = "cuda_event";
  }
  m.kernels = nlohmann::json::array({{{"name", "k"}, {"num_warps", 4}, {"registers", 32}}});
  m.wall_seconds = 0.25;
  return m;
}

void fillSeed(ResultsDb& db) {
  MeasureEnv env = seedEnv();
  RunInfo info;
  info.task_name = "softmax";
  info.task_path = "/t/task.toml";
  info.task_hash = "task1";
  info.source_hash = "base1";
  info.env = env;
  info.strategy = "auto";
  info.seed = 42;
  info.options = {{"budget_s", 60}};
  int64_t run1 = db.beginRun(info);
  MeasurementKey key{"task1", "base1", "v1", R"({"k.BLOCK":128})", R"({"N":1024})", env};
  db.putMeasurement(key, "ok", 0.5, seedMeasurement(0.5, true).toJson(), run1);
  key.variant_hash = "v2";
  key.params = R"({"k.BLOCK":256})";
  db.putMeasurement(key, "wrong-result", std::nullopt, seedMeasurement(0, false).toJson(), run1);
  db.appendTrace(run1, 0, 0.0, "baseline", {{"time_ms", 0.5}});
  db.appendTrace(run1, 1, 1.5, "candidate", {{"id", "v2"}, {"status", "wrong-result"}});
  db.finishRun(run1, "done", {{"speedup", 1.0}, {"best", {{"config_text", "BLOCK=128"}}}});
  // A run that was killed: never finished, resumed from nothing.
  info.resumed_from = run1;
  int64_t run2 = db.beginRun(info);
  key.variant_hash = "v3";
  key.params = R"({"k.BLOCK":64})";
  db.putMeasurement(key, "ok", 0.6, seedMeasurement(0.6, true).toJson(), run2);
  db.appendTrace(run2, 0, 0.0, "baseline", {{"time_ms", 0.6}});
}

// A text column that JSON output cannot carry breaks `tritonforge db ... --json`.
std::string checkRun(const RunRow& r) {
  for (const std::string* s : {&r.started_at, &r.finished_at, &r.status, &r.info.task_name, &r.info.task_path,
                               &r.info.task_hash, &r.info.source_hash, &r.info.env.gpu, &r.info.env.driver,
                               &r.info.env.triton, &r.tool_version, &r.info.strategy, &r.info.env.torch,
                               &r.info.env.cuda, &r.info.env.timing}) {
    if (auto p = notJsonText(*s, "a text column of runs"); !p.empty()) return p;
  }
  (void)r.info.options.dump();
  (void)r.summary.dump();
  return "";
}

std::string checkMeasurement(const MeasurementRow& r) {
  for (const std::string* s : {&r.key.task_hash, &r.key.base_hash, &r.key.variant_hash, &r.key.params,
                               &r.key.case_key, &r.key.env.gpu, &r.key.env.driver, &r.key.env.triton, &r.status,
                               &r.tool_version, &r.created_at, &r.key.env.torch, &r.key.env.cuda,
                               &r.key.env.timing}) {
    if (auto p = notJsonText(*s, "a text column of measurements"); !p.empty()) return p;
  }
  // What reuse makes of a stored row (search/stored_measurements.cpp).
  CaseMeasurement m = CaseMeasurement::fromJson(r.data);
  (void)m.toJson().dump();
  (void)r.data.dump();
  return "";
}

class ResultsDbTarget : public FuzzTarget {
 public:
  explicit ResultsDbTarget(const fs::path& dir) : path_(dir / "results.sqlite"), label_(path_.string()) {}
  std::string name() const override { return "results_db"; }
  std::string suffix() const override { return ".sqlite"; }

  MutationSpace space() override {
    MutationSpace s;
    s.binary = true;
    s.max_size = 256 * 1024;
    // The file header's fields (sqlite.org/fileformat.html), and each page's b-tree header
    // for both page sizes of the seeds.
    s.hot_offsets = {16, 17, 18, 19, 20, 21, 22, 23, 24, 28, 31, 32, 36, 40, 44, 47, 48, 52, 56, 59, 60, 64, 68, 92, 96};
    for (size_t page : {512, 4096}) {
      for (size_t p = 0; p < 24; ++p) {
        size_t start = p == 0 ? 100 : p * page;
        for (size_t k : {0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11}) s.hot_offsets.push_back(start + k);
      }
    }
    s.dictionary = {
        std::string("\x0d", 1), std::string("\x05", 1), std::string("\x0a", 1), std::string("\x02", 1),
        std::string("\x00\x00", 2), std::string("\xff\xff\xff\xff", 4), std::string("\x7f\xff\xff\xff", 4),
        std::string("\x00\x01", 2), std::string("\x02\x00", 2), std::string("\x10\x00", 2),
        std::string("\x01\x01", 2), std::string("\x02\x02", 2), std::string("\x00\x00\x00\x00", 4),
        std::string("\x00\x00\x00\x01", 4), std::string("\x00\x00\x00\x02", 4), std::string("\x00\x00\x00\x03", 4),
        "SQLite format 3", "meta", "schema", "runs", "measurements", "trace", "CREATE TABLE", "INTEGER", "TEXT",
        "NOT NULL", "PRIMARY KEY", "'1'", "'2'", "'3'", "2", "3", "{", "}", "\"status\"", "\"ok\"", "null",
        "\xff", "\xed\xa0\x80",
    };
    s.custom = [](std::string& data, Rng& rng) { return sqlEdit(data, rng); };
    return s;
  }

  Verdict run(const std::string& input) override {
    clean();
    writeBytes(path_, input);
    std::string sig_ro, sig_rw;
    Verdict ro = classify(label_, [&] {
      auto db = ResultsDb::open(path_, DbAccess::kReadOnly);
      return readAll(*db, sig_ro);
    });
    Verdict rw = classify(label_, [&] {
      auto db = ResultsDb::open(path_, DbAccess::kReadWrite);
      std::string p = readAll(*db, sig_rw);
      if (!p.empty()) return p;
      writeSome(*db);
      return readAll(*db, sig_rw);
    });
    clean();
    if (ro.kind == Verdict::Kind::kBug) {
      ro.what = "read-only: " + ro.what;
      return ro;
    }
    if (rw.kind == Verdict::Kind::kBug) {
      rw.what = "read-write: " + rw.what;
      return rw;
    }
    Verdict v = ro.kind == Verdict::Kind::kError ? ro : rw;
    v.signature = "ro " + (ro.kind == Verdict::Kind::kValue ? sig_ro : ro.signature) + " | rw " +
                  (rw.kind == Verdict::Kind::kValue ? sig_rw : rw.signature);
    return v;
  }

 private:
  void clean() {
    std::error_code ec;
    for (const char* s : {"", "-wal", "-shm", "-journal"}) fs::remove(path_.string() + s, ec);
  }

  // Every listing and lookup the CLI and a resumed run make.
  static std::string readAll(ResultsDb& db, std::string& sig) {
    MeasureEnv env = seedEnv();
    auto runs = db.runs();
    size_t traces = 0;
    for (const auto& r : runs) {
      if (auto p = checkRun(r); !p.empty()) return p;
      if (auto again = db.run(r.id)) {
        if (auto p = checkRun(*again); !p.empty()) return p;
      }
      for (const auto& t : db.trace(r.id)) {
        if (auto p = notJsonText(t.kind, "a trace kind"); !p.empty()) return p;
        (void)t.data.dump();
        ++traces;
      }
      for (const auto& m : db.measurementsOfRun(r.id)) {
        if (auto p = checkMeasurement(m); !p.empty()) return p;
      }
    }
    auto all = db.measurementsOfRun(0);
    for (const auto& m : all) {
      if (auto p = checkMeasurement(m); !p.empty()) return p;
    }
    if (auto r = db.lastUnfinishedRun("task1", env)) {
      if (auto p = checkRun(*r); !p.empty()) return p;
    }
    for (const auto& m : db.measurementsFor("task1", "base1", env)) {
      if (auto p = checkMeasurement(m); !p.empty()) return p;
    }
    for (const auto& m : db.measurementsOfVariant("task1", "v1", env)) {
      if (auto p = checkMeasurement(m); !p.empty()) return p;
    }
    sig = fmt::format("schema={} runs={} rows={} trace={}", db.schema(), cap(runs.size(), 3), cap(all.size(), 4),
                      cap(traces, 4));
    return "";
  }

  // What `optimize` writes: a run, a measurement, a trace event, the end of the run.
  static void writeSome(ResultsDb& db) {
    RunInfo info;
    info.task_name = "softmax";
    info.task_hash = "task1";
    info.source_hash = "base1";
    info.env = seedEnv();
    int64_t id = db.beginRun(info);
    MeasurementKey key{"task1", "base1", "v9", "{}", R"({"N":1024})", info.env};
    db.putMeasurement(key, "ok", 0.4, seedMeasurement(0.4, true).toJson(), id);
    db.appendTrace(id, 0, 0.0, "baseline", {{"time_ms", 0.4}});
    db.finishRun(id, "done", {{"speedup", 1.25}});
  }

  // An edit through SQLite itself: a valid file with a value no tritonforge writes (a wrong
  // type, NULL, text that is not JSON or not UTF-8, a dropped table, another schema).
  static bool sqlEdit(std::string& data, Rng& rng) {
    static const char* kEdits[] = {
        "UPDATE meta SET value = {v} WHERE key = 'schema'",
        "UPDATE runs SET {rc} = {v} WHERE id = (SELECT id FROM runs ORDER BY random() LIMIT 1)",
        "UPDATE measurements SET {mc} = {v}",
        "UPDATE trace SET {tc} = {v}",
        "DELETE FROM meta",
        "DROP TABLE {t}",
        "DROP INDEX IF EXISTS measurements_by_run",
        "ALTER TABLE {t} RENAME TO old_{t}",
        "ALTER TABLE runs DROP COLUMN summary",
        "ALTER TABLE measurements RENAME COLUMN data TO data2",
        "CREATE TABLE extra (x)",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = DELETE",
        "INSERT INTO trace VALUES ((SELECT max(id) FROM runs), 99, {v}, {v}, {v})",
    };
    static const char* kValues[] = {"NULL", "0", "-1", "9223372036854775807", "-9223372036854775808", "1e308",
                                    "'nan'", "''", "'x'", "'2'", "'3'", "'02'", "' 2'", "'{'", "'[1,'",
                                    "'{\"status\":7}'", "'{\"timing\":{\"median_ms\":\"x\"}}'", "X'FF00'",
                                    "CAST(X'C3' AS TEXT)", "CAST(X'EDA080' AS TEXT)", "CAST(X'0A0D' AS TEXT)",
                                    "'a\nb'", "zeroblob(3)", "printf('%.*c', 2000, 'x')"};
    static const char* kRunCols[] = {"id", "started_at", "finished_at", "status", "task_name", "task_hash", "gpu",
                                     "worker_protocol", "seed", "options", "resumed_from", "summary", "timing"};
    static const char* kMeasCols[] = {"id", "task_hash", "status", "time_ms", "data", "run_id", "gpu",
                                      "worker_protocol", "case_key", "env_key", "timing"};
    static const char* kTraceCols[] = {"run_id", "seq", "t", "kind", "data"};
    static const char* kTables[] = {"meta", "runs", "measurements", "trace"};
    if (data.size() < 100 || data.compare(0, 15, "SQLite format 3") != 0) return false;
    std::string sql = kEdits[rng.below(std::size(kEdits))];
    auto sub = [&](const std::string& key, const char* const* list, size_t n) {
      for (size_t p; (p = sql.find(key)) != std::string::npos;) sql.replace(p, key.size(), list[rng.below(n)]);
    };
    sub("{v}", kValues, std::size(kValues));
    sub("{rc}", kRunCols, std::size(kRunCols));
    sub("{mc}", kMeasCols, std::size(kMeasCols));
    sub("{tc}", kTraceCols, std::size(kTraceCols));
    std::string t = kTables[rng.below(std::size(kTables))];
    for (size_t p; (p = sql.find("{t}")) != std::string::npos;) sql.replace(p, 3, t);
    // Through a scratch file: the edit must not depend on the target's folder.
    char tmpl[] = "/tmp/tf_fuzz_sql_XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) return false;
    close(fd);
    fs::path tmp = tmpl;
    bool changed = false;
    try {
      writeBytes(tmp, data);
      sqlite3* raw = nullptr;
      if (sqlite3_open(tmp.c_str(), &raw) == SQLITE_OK) {
        // NOT NULL and UNIQUE would refuse some values: a corrupt or foreign file has them anyway.
        sqlite3_exec(raw, "PRAGMA ignore_check_constraints = ON; PRAGMA writable_schema = ON", nullptr, nullptr,
                     nullptr);
        changed = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
        sqlite3_exec(raw, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
      }
      sqlite3_close(raw);
      if (changed) {
        std::ifstream in(tmp, std::ios::binary);
        data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
    } catch (const std::exception&) {
      changed = false;
    }
    std::error_code ec;
    for (const char* s : {"", "-wal", "-shm", "-journal"}) fs::remove(tmp.string() + s, ec);
    return changed;
  }

  fs::path path_;
  std::string label_;
};

}  // namespace

std::unique_ptr<FuzzTarget> makeTarget(const std::string& name, const fs::path& work_dir) {
  fs::create_directories(work_dir);
  if (name == "task") return std::make_unique<TaskTarget>(work_dir);
  if (name == "ncu_csv") return std::make_unique<NcuCsvTarget>(work_dir);
  if (name == "worker") return std::make_unique<WorkerTarget>();
  if (name == "results_db") return std::make_unique<ResultsDbTarget>(work_dir);
  return nullptr;
}

void makeSeedDatabase(const fs::path& path, SeedDb kind) {
  if (kind == SeedDb::kSchema1) {
    sqliteExec(path, kSchema1Sql);
    return;
  }
  if (kind == SeedDb::kCurrentSmall) {
    // A file with 512-byte pages and no table yet: ResultsDb::open creates its tables in it.
    sqliteExec(path, "PRAGMA page_size = 512; CREATE TABLE x (a); DROP TABLE x; VACUUM;");
  }
  auto db = ResultsDb::open(path, DbAccess::kReadWrite);
  fillSeed(*db);
}

}  // namespace tf::fuzz
