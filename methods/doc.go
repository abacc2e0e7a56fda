// Package methods is the registry of sgplab's methods. A method is a
// constructor for a Model together with its documented parameters and
// defaults; inference code lives in gp/, a method only wires features,
// kernels, likelihoods and a training recipe together.
//
// Methods register themselves in init functions; Lookup finds one by name
// and Validate checks a parameter table (from a TOML grid) against the
// method's documented parameters before anything runs.
package methods
