#include "search/compile_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace tf {

void CompileTimeModel::observe(const std::vector<double>& features, double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return;
  x_.push_back(features);
  y_.push_back(std::log(seconds));
  seconds_.push_back(seconds);
  fitted_ = false;
}

std::optional<double> CompileTimeModel::median() const {
  if (seconds_.empty()) return std::nullopt;
  std::vector<double> s = seconds_;
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
  return s[s.size() / 2];
}

std::optional<double> CompileTimeModel::max() const {
  if (seconds_.empty()) return std::nullopt;
  return *std::max_element(seconds_.begin(), seconds_.end());
}

void CompileTimeModel::fit() const {
  const size_t n = y_.size(), d = x_.front().size() + 1;
  Eigen::MatrixXd X(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
  Eigen::VectorXd Y(static_cast<Eigen::Index>(n));
  for (size_t i = 0; i < n; ++i) {
    X(static_cast<Eigen::Index>(i), 0) = 1.0;
    for (size_t j = 1; j < d; ++j) {
      X(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = j - 1 < x_[i].size() ? x_[i][j - 1] : 0.0;
    }
    Y(static_cast<Eigen::Index>(i)) = y_[i];
  }
  // Ridge: few observations and correlated features; the bias is not penalized.
  Eigen::MatrixXd A = X.transpose() * X;
  for (Eigen::Index j = 1; j < A.rows(); ++j) A(j, j) += 0.5;
  Eigen::VectorXd w = A.ldlt().solve(X.transpose() * Y);
  weights_.assign(w.data(), w.data() + w.size());
  fitted_ = true;
}

std::optional<double> CompileTimeModel::predict(const std::vector<double>& features) const {
  if (y_.size() < kMinObservations) return std::nullopt;
  if (!fitted_) fit();
  double z = weights_[0];
  for (size_t j = 1; j < weights_.size(); ++j) z += weights_[j] * (j - 1 < features.size() ? features[j - 1] : 0.0);
  // Never beyond what was seen by more than a factor of 4: extrapolation is not trusted.
  double hi = std::log(*max() * 4.0);
  return std::exp(std::min(z, hi));
}

}  // namespace tf
