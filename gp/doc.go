// Package gp holds the data types shared by the Gaussian-process library in
// its subpackages: ad (reverse-mode autodiff on matrices), param (trainable
// parameters with positivity transforms), kernels, features, likelihoods,
// inference and optim. It knows nothing about TOML, SQLite or papers.
package gp
