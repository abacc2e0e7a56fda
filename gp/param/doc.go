// Package param holds a model's trainable parameters as an ordered set of
// named matrices, each stored unconstrained and mapped to its natural units
// by a Transform (softplus for positive quantities, identity otherwise).
//
// An optimiser sees one flat vector of the unconstrained values of the
// trainable entries; Set.Bind records every entry on an ad.Tape in natural
// units, and Bound.Gradient gathers d objective / d vector after Backward.
// Entries can be fixed and released again, which is how training phases
// ("variational parameters first, then everything") are expressed.
package param
