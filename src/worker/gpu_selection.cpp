#include "worker/gpu_selection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "util/error.h"

namespace tf {
namespace {

int parseIndex(const std::string& text, const std::string& item) {
  if (item.empty() || item.size() > 4 || !std::all_of(item.begin(), item.end(), [](unsigned char c) { return std::isdigit(c); })) {
    throw UserError(fmt::format("--gpus {}: '{}' is not a GPU index (expected all, a count N, or a list like 0,2)",
                                text, item));
  }
  return std::stoi(item);
}

std::vector<std::string> splitCommas(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t comma = s.find(',', pos);
    out.push_back(s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

GpuSelection parseGpuSelection(const std::string& text) {
  GpuSelection sel;
  sel.text = text;
  if (text.empty()) return sel;
  if (text == "all") {
    sel.kind = GpuSelection::Kind::kAll;
    return sel;
  }
  if (text.find(',') == std::string::npos) {
    sel.kind = GpuSelection::Kind::kCount;
    sel.count = parseIndex(text, text);
    if (sel.count < 1) throw UserError(fmt::format("--gpus {}: a count must be 1 or more", text));
    return sel;
  }
  sel.kind = GpuSelection::Kind::kList;
  std::set<int> seen;
  for (const auto& item : splitCommas(text)) {
    int i = parseIndex(text, item);
    if (!seen.insert(i).second) throw UserError(fmt::format("--gpus {}: GPU {} is listed twice", text, i));
    sel.list.push_back(i);
  }
  return sel;
}

std::vector<GpuDevice> resolveGpus(const GpuSelection& sel, const nlohmann::json& hello, const std::string& visible) {
  if (sel.isDefault()) return {};
  if (!hello.contains("gpu") || !hello["gpu"].is_object()) return {};
  const auto& gpu = hello["gpu"];
  std::vector<std::string> names;
  if (gpu.contains("devices") && gpu["devices"].is_array()) {
    for (const auto& d : gpu["devices"]) names.push_back(d.is_object() ? d.value("name", "") : std::string());
  } else {
    // A worker of before the device list: every device is the first one's model.
    int n = gpu.value("device_count", 1);
    for (int i = 0; i < std::max(1, n); ++i) names.push_back(gpu.value("name", ""));
  }
  const int count = static_cast<int>(names.size());
  std::vector<int> picked;
  switch (sel.kind) {
    case GpuSelection::Kind::kAll:
      for (int i = 0; i < count; ++i) picked.push_back(i);
      break;
    case GpuSelection::Kind::kCount:
      if (sel.count > count) {
        throw UserError(fmt::format("--gpus {}: only {} GPU{} visible", sel.text, count, count == 1 ? " is" : "s are"));
      }
      for (int i = 0; i < sel.count; ++i) picked.push_back(i);
      break;
    case GpuSelection::Kind::kList:
      for (int i : sel.list) {
        if (i >= count) {
          throw UserError(fmt::format("--gpus {}: there is no GPU {} ({} GPU{} visible: 0 to {})", sel.text, i, count,
                                      count == 1 ? " is" : "s are", count - 1));
        }
        picked.push_back(i);
      }
      break;
    case GpuSelection::Kind::kDefault: break;
  }
  std::vector<std::string> entries = visible.empty() ? std::vector<std::string>{} : splitCommas(visible);
  std::vector<GpuDevice> out;
  for (int i : picked) {
    GpuDevice d;
    d.index = i;
    d.device = static_cast<size_t>(i) < entries.size() ? entries[static_cast<size_t>(i)] : std::to_string(i);
    d.name = names[static_cast<size_t>(i)];
    out.push_back(d);
  }
  return out;
}

std::vector<std::vector<GpuDevice>> groupByModel(const std::vector<GpuDevice>& lanes) {
  std::vector<std::vector<GpuDevice>> groups;
  for (const auto& d : lanes) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.front().name == d.name; });
    if (it == groups.end()) groups.push_back({d});
    else it->push_back(d);
  }
  return groups;
}

std::string modelSlug(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? std::string("gpu") : out;
}

std::vector<std::vector<GpuDevice>> splitLanes(const std::vector<GpuDevice>& lanes, int slots) {
  std::vector<std::vector<GpuDevice>> out;
  const int n = static_cast<int>(lanes.size());
  slots = std::max(1, std::min(slots, n));
  for (int s = 0; s < slots; ++s) {
    std::vector<GpuDevice> part(lanes.begin() + s * n / slots, lanes.begin() + (s + 1) * n / slots);
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace tf
