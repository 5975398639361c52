#include "search/gaussian_process.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace tf {

double normalPdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI); }
double normalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double expectedImprovement(double mean, double variance, double best, double xi) {
  double sd = std::sqrt(std::max(variance, 1e-18));
  double d = best - mean - xi;
  double z = d / sd;
  return d * normalCdf(z) + sd * normalPdf(z);
}

double GaussianProcess::kernel(const double* a, const double* b) const {
  double r2 = 0;
  for (size_t i = 0; i < ls_.size(); ++i) {
    double d = (a[i] - b[i]) / ls_[i];
    r2 += d * d;
  }
  double r = std::sqrt(5.0 * r2);
  return signal_ * (1 + r + r * r / 3.0) * std::exp(-r);
}

double GaussianProcess::factorize() {
  const Eigen::Index n = x_.rows();
  Eigen::MatrixXd k(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j <= i; ++j) {
      double v = kernel(x_.row(i).data(), x_.row(j).data());
      k(i, j) = v;
      k(j, i) = v;
    }
    k(i, i) += noise_;
  }
  llt_.compute(k);
  Eigen::VectorXd r(n);
  for (Eigen::Index i = 0; i < n; ++i) r(i) = y_(i) - meanAt(cov_(i));
  alpha_ = llt_.solve(r);
  double logdet = 0;
  const Eigen::MatrixXd& l = llt_.matrixLLT();
  for (Eigen::Index i = 0; i < n; ++i) logdet += 2 * std::log(std::max(l(i, i), 1e-300));
  lml_ = -0.5 * r.dot(alpha_) - 0.5 * logdet - 0.5 * static_cast<double>(n) * std::log(2 * M_PI);
  return lml_;
}

void GaussianProcess::fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                          const std::vector<double>& covariate) {
  assert(x.size() == y.size() && !x.empty() && "a Gaussian process needs points");
  const size_t n = x.size(), d = x[0].size();
  x_.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
  y_.resize(static_cast<Eigen::Index>(n));
  cov_ = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < d; ++j) x_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = x[i][j];
    y_(static_cast<Eigen::Index>(i)) = y[i];
    if (!covariate.empty()) cov_(static_cast<Eigen::Index>(i)) = covariate[i];
  }
  // Mean: least squares on the covariate (ridge-damped), else the sample mean.
  double my = y_.mean();
  mean0_ = my;
  slope_ = 0;
  if (!covariate.empty() && n >= 4) {
    double mc = cov_.mean(), sxy = 0, sxx = 0;
    for (Eigen::Index i = 0; i < y_.size(); ++i) {
      sxy += (cov_(i) - mc) * (y_(i) - my);
      sxx += (cov_(i) - mc) * (cov_(i) - mc);
    }
    slope_ = sxy / (sxx + 1.0);
    mean0_ = my - slope_ * mc;
  }
  double var = 0;
  for (Eigen::Index i = 0; i < y_.size(); ++i) var += std::pow(y_(i) - meanAt(cov_(i)), 2);
  var /= static_cast<double>(n);
  signal_ = std::max(var, 1e-4);
  noise_ = std::max(options_.min_noise, 1e-3 * signal_);
  ls_.assign(d, options_.initial_lengthscale);
  if (options_.lengthscales.size() == d) ls_ = options_.lengthscales;
  if (d == 0) {
    factorize();
    return;
  }
  double best = factorize();
  if (options_.fit_lengthscales && options_.lengthscales.empty() && n >= 3) {
    // One shared scale first, then each dimension in turn.
    for (double s : {0.1, 0.2, 0.3, 0.6, 1.0, 2.0}) {
      std::vector<double> keep = ls_;
      ls_.assign(d, s);
      double l = factorize();
      if (l > best) best = l;
      else ls_ = keep;
    }
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t j = 0; j < d; ++j) {
        for (double f : {0.5, 2.0, 4.0}) {
          double keep = ls_[j];
          ls_[j] = std::clamp(keep * f, 0.05, 20.0);
          double l = factorize();
          if (l > best + 1e-9) best = l;
          else ls_[j] = keep;
        }
      }
    }
    factorize();
  }
}

void GaussianProcess::addPoint(const std::vector<double>& x, double y, double covariate) {
  const Eigen::Index n = x_.rows();
  x_.conservativeResize(n + 1, x_.cols());
  for (Eigen::Index j = 0; j < x_.cols(); ++j) x_(n, j) = x[static_cast<size_t>(j)];
  y_.conservativeResize(n + 1);
  y_(n) = y;
  cov_.conservativeResize(n + 1);
  cov_(n) = covariate;
  factorize();
}

void GaussianProcess::predict(const std::vector<double>& x, double covariate, double* mean, double* variance) const {
  const Eigen::Index n = x_.rows();
  Eigen::VectorXd k(n);
  for (Eigen::Index i = 0; i < n; ++i) k(i) = kernel(x.data(), x_.row(i).data());
  *mean = meanAt(covariate) + k.dot(alpha_);
  Eigen::VectorXd v = llt_.matrixL().solve(k);
  *variance = std::max(signal_ - v.squaredNorm(), 1e-12);
}

}  // namespace tf
