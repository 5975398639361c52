// A small Gaussian-process regressor for the Bayesian-optimization strategy: Matérn 5/2
// kernel with one length scale per feature (fitted by maximizing the log marginal
// likelihood with a coarse coordinate search), a linear mean in one optional covariate
// (the rules' prior score), and a noise term. Sized for what a kernel search measures:
// tens to a few hundred points in a handful of dimensions.
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace tf {

class GaussianProcess {
 public:
  struct Options {
    double min_noise = 1e-4;          // variance floor of the observation noise (log-time units)
    bool fit_lengthscales = true;
    double initial_lengthscale = 0.4;
    std::vector<double> lengthscales;  // when set: these, not fitted
  };

  GaussianProcess() = default;
  explicit GaussianProcess(Options options) : options_(options) {}

  // x: one row per point (features in [0, 1]); covariate: one value per point for the
  // linear mean (empty: a constant mean).
  void fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
           const std::vector<double>& covariate = {});
  // Adds a point without refitting the hyperparameters (a "fantasy" for batch selection).
  void addPoint(const std::vector<double>& x, double y, double covariate = 0);

  // Posterior mean and variance of the latent function at `x`.
  void predict(const std::vector<double>& x, double covariate, double* mean, double* variance) const;

  size_t size() const { return static_cast<size_t>(x_.rows()); }
  const std::vector<double>& lengthscales() const { return ls_; }
  double signalVariance() const { return signal_; }
  double noiseVariance() const { return noise_; }
  double logMarginalLikelihood() const { return lml_; }

 private:
  double kernel(const double* a, const double* b) const;
  // Factorizes with the current hyperparameters; returns the log marginal likelihood.
  double factorize();
  double meanAt(double covariate) const { return mean0_ + slope_ * covariate; }

  Options options_;
  // Row-major so that a point's features are contiguous for kernel().
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> x_;
  Eigen::VectorXd y_, cov_;
  std::vector<double> ls_;
  double signal_ = 1, noise_ = 1e-4;
  double mean0_ = 0, slope_ = 0;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd alpha_;
  double lml_ = 0;
};

// Standard normal density and distribution.
double normalPdf(double z);
double normalCdf(double z);
// Expected improvement below `best` of a normal(mean, variance) prediction (minimization).
double expectedImprovement(double mean, double variance, double best, double xi = 0);

}  // namespace tf
