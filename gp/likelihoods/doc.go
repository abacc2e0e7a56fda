// Package likelihoods provides the observation models of sparse variational
// GPs: a Gaussian likelihood for regression (closed-form expectations) and a
// Bernoulli likelihood with probit link for labels y ∈ {−1, +1}, whose
// variational expectations E_{N(f; μ, v)}[log Φ(y f)] are computed by
// Gauss–Hermite quadrature with nodes and weights computed here.
//
// A likelihood keeps its own parameters (the Gaussian noise variance) in a
// param.Set under a caller-chosen prefix, so several models can share one
// set. VarExp records the per-point expected log-likelihood on an ad.Tape,
// differentiable in the marginal means and variances of q(f) and in the
// likelihood's parameters; Predict and LogDensity serve test-time scoring.
package likelihoods
