package kernels

import (
	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
)

// ConstantDiag is implemented by bound kernels whose k(x, x) does not depend
// on x (stationary kernels and sums and products of them): KAtSelf is that
// value, 1×1. Kernels for which it fails (arc-cosine, zonal kernels with a
// radial part) do not implement it, or return nil.
type ConstantDiag interface {
	KAtSelf() *ad.Node
}

// DiagSummer is implemented by bound kernels with a cheaper form of
// Σ_n k(x_n, x_n) over inputs fixed in advance than summing Diag (e.g. a
// zonal kernel r(x)r(x')κ(x̂ᵀx̂′) gives κ(1) Σ_n r(x_n)², with Σ r² computed
// once by the kernel from x).
type DiagSummer interface {
	DiagSum(x *mat.Dense) *ad.Node
}

// DiagSum is Σ_n k(x_n, x_n), 1×1 on tape t, for the rows of x: N·KAtSelf
// for a ConstantDiag kernel (O(1) per evaluation, the collapsed bound from
// statistics calls it every step), the kernel's DiagSum for a DiagSummer,
// and otherwise the sum of Diag at x (O(N·D) per evaluation, any kernel).
// Methods use it instead of N·variance, which holds only for stationary
// kernels.
func DiagSum(t *ad.Tape, kb Bound, x *mat.Dense) *ad.Node {
	n, _ := x.Dims()
	if c, ok := kb.(ConstantDiag); ok {
		if v := c.KAtSelf(); v != nil {
			return ad.Scale(float64(n), v)
		}
	}
	if s, ok := kb.(DiagSummer); ok {
		return s.DiagSum(x)
	}
	return ad.Sum(kb.Diag(t.Const(x)))
}

func (b *stationaryBound) KAtSelf() *ad.Node { return b.variance }
func (b *periodicBound) KAtSelf() *ad.Node   { return b.variance }

func (c *combinationBound) KAtSelf() *ad.Node {
	ns, ok := constantDiags(c.parts)
	if !ok {
		return nil
	}
	if c.op == "sum" {
		return sumNodes(ns)
	}
	return productNodes(ns)
}

func (a *additiveBound) KAtSelf() *ad.Node {
	ns, ok := constantDiags(a.parts)
	if !ok {
		return nil
	}
	return sumNodes(ns)
}

// constantDiags returns KAtSelf of every part, or false if one has none.
func constantDiags(parts []Bound) ([]*ad.Node, bool) {
	ns := make([]*ad.Node, len(parts))
	for i, p := range parts {
		c, ok := p.(ConstantDiag)
		if !ok {
			return nil, false
		}
		if ns[i] = c.KAtSelf(); ns[i] == nil {
			return nil, false
		}
	}
	return ns, true
}
