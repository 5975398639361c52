#include "measure/roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "util/clock.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/paths.h"
#include "worker/worker_client.h"

namespace tf {
namespace fs = std::filesystem;

namespace {

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_') out.push_back(c);
    else if (!out.empty() && out.back() != '-') out.push_back('-');
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpu" : out;
}

}  // namespace

double Ceilings::flopsFor(const std::string& cls) const {
  auto get = [&](const char* k) {
    auto it = flops_per_s.find(k);
    return it == flops_per_s.end() ? 0.0 : it->second;
  };
  // fp8 and int8: the vendor's measured rate (`ceilings` measures torch._scaled_mm and
  // torch._int_mm where torch has them), else twice fp16's (Hopper's dense rate for both).
  if (cls == "fp8" || cls == "int8") return get(cls.c_str()) > 0 ? get(cls.c_str()) : 2 * get("fp16");
  if (cls == "fp16" || cls == "bf16" || cls == "tf32") return get(cls.c_str());
  return get("fp32");
}

nlohmann::json Ceilings::toJson() const {
  return {{"gpu_key", gpu_key},     {"gpu_name", gpu_name},       {"dram_bytes_per_s", dram_bytes_per_s},
          {"flops_per_s", flops_per_s}, {"measured_at", measured_at}, {"from_cache", from_cache}};
}

Ceilings Ceilings::fromJson(const nlohmann::json& j, const std::string& label) {
  if (!j.is_object() || !j.contains("dram_bytes_per_s") || !j["dram_bytes_per_s"].is_number() ||
      !j.contains("flops_per_s") || !j["flops_per_s"].is_object()) {
    throw UserError(fmt::format("{}: not a ceilings file (needs dram_bytes_per_s and flops_per_s)", label));
  }
  Ceilings c;
  c.gpu_key = j.value("gpu_key", std::string());
  c.gpu_name = j.value("gpu_name", std::string());
  c.dram_bytes_per_s = j["dram_bytes_per_s"].get<double>();
  for (const auto& [k, v] : j["flops_per_s"].items()) {
    if (v.is_number()) c.flops_per_s[k] = v.get<double>();
  }
  c.measured_at = j.value("measured_at", std::string());
  return c;
}

std::string gpuKey(const nlohmann::json& gpu) {
  if (!gpu.is_object()) return "unknown-gpu";
  std::string key = sanitize(gpu.value("name", std::string("gpu")));
  key += fmt::format("-{}sm", gpu.value("sms", 0));
  if (gpu.contains("memory_bytes") && gpu["memory_bytes"].is_number()) {
    key += fmt::format("-{}GB", static_cast<long long>(gpu["memory_bytes"].get<double>() / 1e9 + 0.5));
  }
  if (gpu.contains("driver") && gpu["driver"].is_string()) key += "-drv" + sanitize(gpu["driver"].get<std::string>());
  return key;
}

fs::path ceilingsCachePath(const nlohmann::json& gpu) { return userCacheDir() / "ceilings" / (gpuKey(gpu) + ".json"); }

std::optional<Ceilings> loadOrMeasureCeilings(WorkerClient& worker, const nlohmann::json& gpu, bool remeasure,
                                              std::string* why, std::optional<std::chrono::milliseconds> timeout) {
  fs::path path = ceilingsCachePath(gpu);
  std::error_code ec;
  if (!remeasure && fs::exists(path, ec)) {
    try {
      auto j = nlohmann::json::parse(readTextFile(path, "ceilings cache"));
      Ceilings c = Ceilings::fromJson(j, path.string());
      if (c.dram_bytes_per_s > 0) {
        c.from_cache = true;
        return c;
      }
    } catch (const std::exception&) {
      // A damaged cache file is measured again and overwritten.
    }
  }
  CeilingsReply r = worker.ceilings(timeout);
  if (!r.ok) {
    if (why) *why = fmt::format("measuring the GPU's ceilings failed: {}", r.message);
    return std::nullopt;
  }
  Ceilings c;
  c.gpu_key = gpuKey(gpu);
  c.gpu_name = gpu.is_object() && gpu.contains("name") && gpu["name"].is_string() ? gpu["name"].get<std::string>() : "";
  c.dram_bytes_per_s = r.dram_bytes_per_s;
  c.flops_per_s = r.flops_per_s;
  c.measured_at = utcTimestamp();
  if (c.dram_bytes_per_s <= 0) {
    if (why) *why = "the worker's ceilings reply has no DRAM bandwidth";
    return std::nullopt;
  }
  try {
    writeFileAtomic(path, c.toJson().dump(2) + "\n");
  } catch (const UserError&) {
    // An unwritable cache costs a re-measurement next time, nothing more.
  }
  return c;
}

nlohmann::json RooflinePoint::toJson() const {
  nlohmann::json j = {{"fraction", fraction},
                      {"percent", 100 * fraction},
                      {"bound", bound},
                      {"compute_class", compute_class},
                      {"seconds", seconds},
                      {"memory_seconds", memory_seconds},
                      {"compute_seconds", compute_seconds},
                      {"peak_bytes_per_s", peak_bytes_per_s},
                      {"peak_flops_per_s", peak_flops_per_s},
                      {"work_source", work_source}};
  if (bytes > 0) {
    j["bytes"] = bytes;
    j["achieved_bytes_per_s"] = seconds > 0 ? bytes / seconds : 0;
  }
  if (flops > 0) {
    j["flops"] = flops;
    j["achieved_flops_per_s"] = seconds > 0 ? flops / seconds : 0;
  }
  if (bytes > 0 && flops > 0) j["arithmetic_intensity"] = flops / bytes;
  return j;
}

std::optional<RooflinePoint> rooflinePoint(std::optional<double> flops, std::optional<double> bytes, double seconds,
                                           const Ceilings& ceilings, const std::string& compute_class) {
  if (!(seconds > 0)) return std::nullopt;
  if (!(flops && *flops > 0) && !(bytes && *bytes > 0)) return std::nullopt;
  RooflinePoint p;
  p.seconds = seconds;
  p.compute_class = compute_class;
  p.peak_bytes_per_s = ceilings.dram_bytes_per_s;
  p.peak_flops_per_s = ceilings.flopsFor(compute_class);
  if (bytes && *bytes > 0 && p.peak_bytes_per_s > 0) {
    p.bytes = *bytes;
    p.memory_seconds = p.bytes / p.peak_bytes_per_s;
  }
  if (flops && *flops > 0 && p.peak_flops_per_s > 0) {
    p.flops = *flops;
    p.compute_seconds = p.flops / p.peak_flops_per_s;
  }
  if (p.memory_seconds <= 0 && p.compute_seconds <= 0) return std::nullopt;
  p.bound = p.memory_seconds >= p.compute_seconds ? "memory" : "compute";
  p.fraction = std::max(p.memory_seconds, p.compute_seconds) / seconds;
  return p;
}

}  // namespace tf
