package features

import (
	"sgplab/gp/ad"
	"sgplab/gp/kernels"
	"sgplab/gp/param"
)

// Feature is a set of inducing variables u = (u_1 … u_M).
type Feature interface {
	// Name identifies the feature type in messages.
	Name() string
	// Declare registers the feature's parameters (if any) in s under prefix.
	Declare(s *param.Set, prefix string) error
	// Bind returns the feature recorded on the tape of b.
	Bind(b *param.Bound, prefix string) Bound
}

// Bound is a Feature whose parameters are recorded on a tape.
type Bound interface {
	// M is the number of inducing variables.
	M() int
	// Kuu is Cov(u, u), M×M.
	Kuu(k kernels.Bound) *ad.Node
	// Kuf is Cov(u, f(x)) for the rows of x, M×N.
	Kuf(k kernels.Bound, x *ad.Node) *ad.Node
}

// DiagonalKuu is implemented by bound features whose Kuu is diagonal: the
// shorthand for StructuredKuu returning {Diag: KuuDiag(k)} (see
// StructureOf). Inference then uses the square root of the diagonal
// instead of a dense Cholesky factorisation, and Bound.Kuu need not be
// called.
type DiagonalKuu interface {
	// KuuDiag is the diagonal of Kuu, M×1, all entries positive.
	KuuDiag(k kernels.Bound) *ad.Node
}
