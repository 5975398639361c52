// The decision trace of a search: numbered events (what was found, proposed, measured,
// won or lost, why the search stopped), kept in memory for result.json and handed to a
// sink as they happen (the results database commits each one). docs/search.md lists the
// kinds and their fields.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tf {

struct TraceEvent {
  int seq = 0;
  double t = 0;          // seconds since the trace started
  std::string kind;
  nlohmann::json data;
  nlohmann::json toJson() const { return {{"seq", seq}, {"t", t}, {"kind", kind}, {"data", data}}; }
};

class Trace {
 public:
  using Sink = std::function<void(const TraceEvent&)>;
  Trace() : t0_(std::chrono::steady_clock::now()) {}

  // Records an event; returns its sequence number.
  int add(const std::string& kind, nlohmann::json data) {
    TraceEvent e;
    e.seq = static_cast<int>(events_.size());
    e.t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    e.kind = kind;
    e.data = std::move(data);
    events_.push_back(std::move(e));
    if (sink_) sink_(events_.back());
    return events_.back().seq;
  }
  void setSink(Sink sink) { sink_ = std::move(sink); }
  const std::vector<TraceEvent>& events() const { return events_; }
  nlohmann::json toJson() const {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& e : events_) a.push_back(e.toJson());
    return a;
  }

 private:
  std::chrono::steady_clock::time_point t0_;
  std::vector<TraceEvent> events_;
  Sink sink_;
};

}  // namespace tf
