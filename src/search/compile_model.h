// How long a configuration takes to compile, learnt during the run: compile time grows fast
// with tile sizes, statically unrolled loops and pipeline stages (a 16x16-filter convolution
// took 15-35 s per candidate on the H200's CPUs; a 256x256x128 matmul tile with 5 stages,
// 22 s). The model is a ridge regression of log(seconds) on the space's features of a
// configuration (log2 of each parameter, tile areas, pipelined shared memory), refitted as
// compiles finish. The loop uses it to order a round (fast compiles first, so measurements
// start early), to put off what would not compile before the search ends, and, with the
// median, to set an adaptive compile deadline (3x the median so far, at least 10 s) that
// stops a runaway compile.
#pragma once

#include <optional>
#include <vector>

namespace tf {

class CompileTimeModel {
 public:
  void observe(const std::vector<double>& features, double seconds);
  // Seconds predicted for a configuration with these features; nullopt until enough
  // compiles were seen.
  std::optional<double> predict(const std::vector<double>& features) const;
  // The median of the compiles seen; nullopt before the first.
  std::optional<double> median() const;
  std::optional<double> max() const;
  size_t observations() const { return y_.size(); }

  static constexpr size_t kMinObservations = 5;

 private:
  void fit() const;
  std::vector<std::vector<double>> x_;
  std::vector<double> y_;                  // log(seconds)
  std::vector<double> seconds_;
  mutable std::vector<double> weights_;    // bias first
  mutable bool fitted_ = false;
};

}  // namespace tf
