#include "fuzz/campaign.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>
#include <typeinfo>

#include "util/error.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define TF_FUZZ_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TF_FUZZ_SANITIZED 1
#endif
#ifdef TF_FUZZ_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

namespace tf::fuzz {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string typeName(const std::type_info& t) {
  int status = 0;
  char* name = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : t.name();
  std::free(name);
  return out;
}

// What makes an error message more than one clean line.
std::optional<std::string> notOneLine(const std::string& m) {
  for (size_t i = 0; i < m.size(); ++i) {
    auto c = static_cast<unsigned char>(m[i]);
    if (c < 0x20 && c != '\t') return fmt::format("control character 0x{:02x} at offset {}", c, i);
  }
  return std::nullopt;
}

// The class of an outcome: the words of the message without the file, numbers and quoted
// text, so that "line 12 has 3 fields" and "line 40 has 7 fields" are one class. Quoted text
// is any word with a quote in it, and the words between one that opens a quote and one that
// closes it: quotes inside a quoted value (mutated text has many) shift nothing after it.
std::string normalize(std::string m, const std::string& label) {
  if (!label.empty()) {
    for (size_t p; (p = m.find(label)) != std::string::npos;) m.replace(p, label.size(), "<file>");
  }
  auto isQuote = [](char c) { return c == '\'' || c == '"'; };
  std::string out;
  bool quoted = false;
  size_t i = 0;
  while (i < m.size()) {
    size_t j = m.find(' ', i);
    if (j == std::string::npos) j = m.size();
    std::string word = m.substr(i, j - i);
    i = j + 1;
    std::string end = word;
    while (!end.empty() && std::strchr(",.;:)", end.back())) end.pop_back();
    bool opens = !word.empty() && (isQuote(word[0]) || (word[0] == '(' && word.size() > 1 && isQuote(word[1])));
    bool closes = !end.empty() && isQuote(end.back()) && (end.size() > 1 || !opens);
    if (quoted || word.find_first_of("'\"") != std::string::npos) {
      if (!quoted && opens && !closes) quoted = true;
      else if (quoted && closes) quoted = false;
      if (out.empty() || out.back() != '\'') out += out.empty() ? "''" : " ''";
      continue;
    }
    std::string w;
    for (char c : word) {
      if (std::isdigit(static_cast<unsigned char>(c))) {
        if (w.empty() || w.back() != '#') w += '#';
      } else {
        w += c;
      }
    }
    out += (out.empty() ? "" : " ") + w;
  }
  if (out.size() > 120) out.resize(120);
  return out;
}

// A number from the environment; `fallback` when unset, unreadable, or below `least`.
double envDouble(const char* name, double fallback, double least = 1e-9) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  double d = std::strtod(v, &end);
  return end != v && d >= least ? d : fallback;
}

// --- what the crash handler and the watchdog need, set before each input runs
struct InFlight {
  std::mutex mu;
  const std::string* input = nullptr;
  Clock::time_point started;
  std::string save_path;          // where a crash or hang saves it; "" for a found/ case
  std::string where;              // for messages
  char path_buf[4096] = {};       // save_path for the signal handler (no allocation there)
  const char* data = nullptr;
  size_t size = 0;
};
InFlight g_in_flight;
std::atomic<bool> g_armed{false};

void writeRaw(const char* s) { (void)!::write(2, s, std::strlen(s)); }

// Async-signal-safe: open, write, close.
void saveInFlight() {
  if (!g_armed.load() || g_in_flight.path_buf[0] == '\0') return;
  int fd = ::open(g_in_flight.path_buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < g_in_flight.size) {
    ssize_t n = ::write(fd, g_in_flight.data + done, g_in_flight.size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  writeRaw("\nfuzz: the input that crashed the process was saved to ");
  writeRaw(g_in_flight.path_buf);
  writeRaw("\n");
}

void onFatalSignal(int sig) {
  saveInFlight();
  signal(sig, SIG_DFL);
  raise(sig);
}

void installCrashHandlers() {
  static bool done = false;
  if (done) return;
  done = true;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) {
    struct sigaction sa {};
    sa.sa_handler = onFatalSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigaction(sig, &sa, nullptr);
  }
#ifdef TF_FUZZ_SANITIZED
  // A sanitizer report ends the process without a signal.
  __sanitizer_set_death_callback(saveInFlight);
#endif
}

bool saveInput(const fs::path& path, const std::string& data) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

class Watchdog {
 public:
  explicit Watchdog(double hang_seconds) : limit_(hang_seconds), thread_([this] { loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; })) {
      std::lock_guard<std::mutex> in(g_in_flight.mu);
      if (!g_in_flight.input) continue;
      double s = std::chrono::duration<double>(Clock::now() - g_in_flight.started).count();
      if (s < limit_) continue;
      std::string msg = fmt::format("\nfuzz: {} runs for more than {:.1f} s: a hang", g_in_flight.where, limit_);
      if (!g_in_flight.save_path.empty() && saveInput(g_in_flight.save_path, *g_in_flight.input)) {
        msg += "; saved to " + g_in_flight.save_path;
      }
      writeRaw((msg + "\n").c_str());
      std::_Exit(3);
    }
  }

  double limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

Verdict classify(const std::string& label, const std::function<std::string()>& call) {
  Verdict v;
  try {
    std::string problem = call();
    if (!problem.empty()) {
      v.kind = Verdict::Kind::kBug;
      v.what = "a value that breaks a promise: " + problem;
    }
    return v;
  } catch (const UserError& e) {
    std::string m = e.what();
    v.what = m;
    v.signature = "error: " + normalize(m, label);
    v.kind = Verdict::Kind::kBug;
    if (label.empty()) {
      v.what = "UserError where none may come: " + m;
    } else if (auto why = notOneLine(m)) {
      v.what = fmt::format("UserError that is not one line ({}): {}", *why, m);
    } else if (m.rfind(label, 0) != 0 || m.size() <= label.size() + 2) {
      v.what = fmt::format("UserError that does not start with the file '{}': {}", label, m);
    } else {
      v.kind = Verdict::Kind::kError;
    }
    return v;
  } catch (const std::exception& e) {
    v.kind = Verdict::Kind::kBug;
    v.what = fmt::format("threw {}: {}", typeName(typeid(e)), e.what());
  } catch (...) {
    v.kind = Verdict::Kind::kBug;
    v.what = "threw something that is not a std::exception";
  }
  return v;
}

std::string contentHash(const std::string& data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", h);
}

std::vector<std::pair<std::string, std::string>> readInputs(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file() || e.path().filename().string().rfind('.', 0) == 0) continue;
    if (e.path().extension() == ".md") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    out.emplace_back(e.path().filename().string(), std::move(data));
  }
  std::sort(out.begin(), out.end());
  return out;
}

CampaignOptions CampaignOptions::fromEnvironment(const FuzzTarget& target, uint64_t default_seed) {
  CampaignOptions o;
  o.seconds = envDouble("TRITONFORGE_FUZZ_SECONDS", 15);
  o.hang_seconds = envDouble("TRITONFORGE_FUZZ_HANG_SECONDS", 10);
  o.max_mutations = static_cast<size_t>(envDouble("TRITONFORGE_FUZZ_MUTATIONS", 20000, 0));
  o.seed = default_seed;
  if (const char* s = std::getenv("TRITONFORGE_FUZZ_SEED"); s && *s) o.seed = std::strtoull(s, nullptr, 0);
  o.data_dir = fs::path(TF_SOURCE_DIR) / "tests" / "data" / "fuzz" / target.name();
  if (const char* d = std::getenv("TRITONFORGE_FUZZ_SAVE_DIR"); d && *d) {
    o.save_dir = fs::path(d) / target.name();
  } else if (::access(o.data_dir.c_str(), W_OK) == 0) {
    o.save_dir = o.data_dir / "found";
  } else {
    o.save_dir = fs::path(TF_BINARY_DIR) / "fuzz-found" / target.name();
  }
  return o;
}

std::string CampaignResult::summary() const {
  return fmt::format("{} found cases replayed, {}/{} seeds loaded, {} mutated inputs ({} values, {} errors), "
                     "{} outcome classes, {} bases, slowest input {:.3f} s, {} failing (and {} more of the same classes)",
                     found, seed_values, seeds, mutated, values, errors, signatures, corpus, slowest_seconds, bugs.size(),
                     repeats);
}

CampaignResult runCampaign(FuzzTarget& target, const CampaignOptions& o) {
  installCrashHandlers();
  CampaignResult res;
  MutationSpace space = target.space();
  std::set<std::string> signatures;
  std::map<std::string, int> per_prefix;
  std::vector<std::string> bases;
  std::set<std::string> saved;  // hashes of inputs saved in this campaign
  std::set<std::string> bug_classes;

  auto runOne = [&](const std::string& input, const std::string& where, bool save) -> Verdict {
    std::string path;
    if (save) path = (o.save_dir / ("crash-" + contentHash(input) + target.suffix())).string();
    {
      std::lock_guard<std::mutex> lock(g_in_flight.mu);
      g_in_flight.input = &input;
      g_in_flight.started = Clock::now();
      g_in_flight.where = where;
      g_in_flight.save_path = save ? (o.save_dir / ("hang-" + contentHash(input) + target.suffix())).string() : "";
      std::snprintf(g_in_flight.path_buf, sizeof g_in_flight.path_buf, "%s", path.c_str());
      g_in_flight.data = input.data();
      g_in_flight.size = input.size();
    }
    if (save) {
      std::error_code ec;
      fs::create_directories(o.save_dir, ec);
    }
    g_armed.store(true);
    auto started = Clock::now();
    Verdict v = target.run(input);
    res.slowest_seconds = std::max(res.slowest_seconds, std::chrono::duration<double>(Clock::now() - started).count());
    g_armed.store(false);
    {
      std::lock_guard<std::mutex> lock(g_in_flight.mu);
      g_in_flight.input = nullptr;
    }
    if (v.kind == Verdict::Kind::kBug) {
      // One input per class of failure is enough to replay it; the others are counted.
      // The class: what comes before the first quoted text, numbers and hex bytes aside.
      static const std::regex hex("0x[0-9A-Fa-f]+");
      std::string cls = normalize(std::regex_replace(v.what.substr(0, v.what.find_first_of("'\"")), hex, "#"), "");
      if (save && !bug_classes.insert(cls).second) {
        ++res.repeats;
        return v;
      }
      std::string msg = fmt::format("{}: {}", where, v.what);
      if (save && saved.insert(contentHash(input)).second) {
        fs::path p = o.save_dir / ("bug-" + contentHash(input) + target.suffix());
        msg += saveInput(p, input) ? fmt::format(" (saved to {})", p.string()) : " (could not be saved)";
      }
      res.bugs.push_back(msg);
    }
    return v;
  };

  Watchdog watchdog(o.hang_seconds);

  // 1. The regression corpus: every input that once failed.
  for (const auto& [file, data] : readInputs(o.data_dir / "found")) {
    ++res.found;
    Verdict v = runOne(data, "found/" + file, false);
    if (signatures.insert(v.signature).second) bases.push_back(data);
  }
  // 2. The seeds: valid inputs, each must load.
  for (const auto& [file, data] : readInputs(o.data_dir / "seeds")) {
    ++res.seeds;
    Verdict v = runOne(data, "seeds/" + file, false);
    if (v.kind == Verdict::Kind::kValue) ++res.seed_values;
    else res.bad_seeds.push_back(fmt::format("{}: {}", file, v.what));
    signatures.insert(v.signature);
    bases.push_back(data);
  }
  if (bases.empty()) bases.push_back("");
  const size_t n_fixed = bases.size();

  // 3. Mutations, until the time is up or the cap is reached.
  Rng rng(o.seed);
  const bool verbose = std::getenv("TRITONFORGE_FUZZ_VERBOSE") != nullptr;
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<const std::string*> others;
  while (Clock::now() < deadline && res.bugs.size() < o.max_bugs &&
         (o.max_mutations == 0 || res.mutated < o.max_mutations)) {
    others.clear();
    for (const auto& b : bases) others.push_back(&b);
    // Half the time a seed or found case: each keeps its share however many bases join.
    const std::string& base = bases[rng.oneIn(2) ? rng.below(n_fixed) : rng.below(bases.size())];
    std::string input = mutate(base, others, space, rng);
    ++res.mutated;
    Verdict v = runOne(input, fmt::format("mutation #{} of seed {}", res.mutated, o.seed), true);
    if (v.kind == Verdict::Kind::kValue) ++res.values;
    if (v.kind == Verdict::Kind::kError) ++res.errors;
    // At most 8 classes per message up to its first quoted text: mutated text quoted in a
    // message (a header line with quotes of its own) would otherwise make a class per input.
    if (v.kind != Verdict::Kind::kBug && !signatures.count(v.signature) &&
        ++per_prefix[v.signature.substr(0, v.signature.find("''"))] <= 8) {
      signatures.insert(v.signature);
      if (verbose) std::printf("fuzz %s: new class: %s\n", target.name().c_str(), v.signature.c_str());
      // A new class of outcome: keep the input as a base (bounded; the fixed inputs stay).
      if (bases.size() < 256) bases.push_back(std::move(input));
      else bases[n_fixed + rng.below(bases.size() - n_fixed)] = std::move(input);
    }
  }
  res.signatures = signatures.size();
  res.corpus = bases.size();
  std::printf("fuzz %s: %s in %.1f s (seed %llu)\n", target.name().c_str(), res.summary().c_str(),
              std::chrono::duration<double>(Clock::now() - t0).count(), static_cast<unsigned long long>(o.seed));
  for (const auto& b : res.bugs) std::printf("fuzz %s: FAILED %s\n", target.name().c_str(), b.c_str());
  std::fflush(stdout);
  return res;
}

}  // namespace tf::fuzz
