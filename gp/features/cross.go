package features

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"sgplab/gp/ad"
	"sgplab/gp/kernels"
)

// Cross-covariances between two sets of inducing variables, by dispatch (as
// GPflow dispatches Kuv on the pair of types) rather than by widening
// Bound: Kuv(k, u, v) asks u, then v (transposed), and otherwise falls back
// to the one pair every feature defines, (feature, inducing points):
// Cov(u, f(Z_v)) = u.Kuf(k, Z_v).

// CrossCovariance is implemented by bound features that know their
// covariance with some other feature types. KuvWith returns Cov(u, v)
// (M_u×M_v) and true, or false when it does not know v's type.
type CrossCovariance interface {
	KuvWith(k kernels.Bound, v Bound) (*ad.Node, bool, error)
}

// Wrapper is implemented by bound features that wrap another one and
// change only how some of its matrices are evaluated (a precomputed Kuf, an
// attached Kuu structure). Kuv, StructureOf and the dispatch helpers look
// through wrappers, so a wrapper never hides what it wraps.
type Wrapper interface {
	Unwrap() Bound
}

// PointSet is implemented by bound features that are function values at
// points, u = f(Z): inducing points. Every feature's covariance with a
// point set is its Kuf at the points. A nil Points means "not a point set"
// (for types that embed BoundPoints but are not function values).
type PointSet interface {
	Points() *ad.Node
}

// Points returns Z.
func (p BoundPoints) Points() *ad.Node { return p.Z }

// Unwrap removes every Wrapper around f.
func Unwrap(f Bound) Bound {
	for {
		w, ok := f.(Wrapper)
		if !ok {
			return f
		}
		f = w.Unwrap()
	}
}

// As reports whether f, or a feature it wraps, implements T, and returns the
// outermost one that does.
func As[T any](f Bound) (T, bool) {
	for {
		if t, ok := f.(T); ok {
			return t, true
		}
		w, ok := f.(Wrapper)
		if !ok {
			var zero T
			return zero, false
		}
		f = w.Unwrap()
	}
}

// Kuv is Cov(u, v), M_u×M_v, for two bound feature sets under kernel k:
//
//  1. u's KuvWith(v), if u (or what it wraps) implements CrossCovariance
//     and knows v;
//  2. v's KuvWith(u), transposed;
//  3. u.Kuf(k, Z) when v is a point set f(Z), and v.Kuf(k, Z)ᵀ when u is.
//
// Gradients flow to the parameters of both sets (the Kuf contract: Kuf is
// differentiable in its inputs), so ODVGP's K_βγ with trainable Z_γ and
// ODVFF's Φ_VFF(Z_γ) train Z_γ. Any other pair is an error that lists the
// pairs defined.
func Kuv(k kernels.Bound, u, v Bound) (*ad.Node, error) {
	if u == nil || v == nil {
		return nil, errors.New("features: Kuv of a nil feature set")
	}
	if c, ok := As[CrossCovariance](u); ok {
		out, ok, err := c.KuvWith(k, Unwrap(v))
		if err != nil {
			return nil, err
		}
		if ok {
			return checkKuv(out, u, v)
		}
	}
	if c, ok := As[CrossCovariance](v); ok {
		out, ok, err := c.KuvWith(k, Unwrap(u))
		if err != nil {
			return nil, err
		}
		if ok {
			return checkKuv(ad.T(out), u, v)
		}
	}
	if p, ok := As[PointSet](v); ok && p.Points() != nil {
		out, err := KufChecked(k, u, p.Points())
		if err != nil {
			return nil, err
		}
		return checkKuv(out, u, v)
	}
	if p, ok := As[PointSet](u); ok && p.Points() != nil {
		out, err := KufChecked(k, v, p.Points())
		if err != nil {
			return nil, err
		}
		return checkKuv(ad.T(out), u, v)
	}
	return nil, fmt.Errorf("features: no cross-covariance between %s and %s; defined are (any feature, inducing points) through Kuf at the points, "+
		"and the pairs a feature lists through CrossCovariance (%s)", typeName(u), typeName(v), definedPairs(u, v))
}

func checkKuv(out *ad.Node, u, v Bound) (*ad.Node, error) {
	if r, c := out.Dims(); r != u.M() || c != v.M() {
		return nil, fmt.Errorf("features: Kuv of %s and %s is %d×%d, want %d×%d", typeName(u), typeName(v), r, c, u.M(), v.M())
	}
	return out, nil
}

// PairLister is implemented by CrossCovariance features to name the
// feature types they know, for Kuv's error message.
type PairLister interface {
	KnownPartners() []string
}

func definedPairs(fs ...Bound) string {
	s := ""
	for _, f := range fs {
		if l, ok := As[PairLister](f); ok {
			for _, p := range l.KnownPartners() {
				if s != "" {
					s += ", "
				}
				s += "(" + typeName(f) + ", " + p + ")"
			}
		}
	}
	if s == "" {
		return "none for these types"
	}
	return s
}

// Named is implemented by bound features with a name for messages.
type Named interface{ Name() string }

func typeName(f Bound) string {
	if n, ok := As[Named](f); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", Unwrap(f))
}

// InputChecker is implemented by bound features whose Kuf accepts only some
// inputs (a dimension, finite values). KufChecked calls it first.
type InputChecker interface {
	CheckInputs(x *mat.Dense) error
}

// KufChecked is Kuf(k, x) after checking x: finite, and accepted by the
// feature's InputChecker when it has one. It returns an error where Kuf
// itself, whose signature has none, would panic.
//
// The Kuf contract, for every feature type: Kuf(k, x) is differentiable in
// x whenever x needs a gradient (x.NeedsGrad()), and in the kernel's
// parameters whenever it depends on them; a feature may return a constant
// only when x is constant and the value does not depend on θ. Kuf is
// defined for every finite x of the feature's input dimension (interval
// features extend beyond their box by the Markov edge formulas).
func KufChecked(k kernels.Bound, f Bound, x *ad.Node) (*ad.Node, error) {
	if x == nil {
		return nil, errors.New("features: Kuf at nil inputs")
	}
	xv := x.Value()
	r, c := xv.Dims()
	for i := 0; i < r; i++ {
		for j, v := range xv.RawRowView(i)[:c] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("features: %s: input [%d,%d] = %v is not finite", typeName(f), i, j, v)
			}
		}
	}
	if ic, ok := As[InputChecker](f); ok {
		if err := ic.CheckInputs(xv); err != nil {
			return nil, err
		}
	}
	out := f.Kuf(k, x)
	if rr, cc := out.Dims(); rr != f.M() || cc != r {
		return nil, fmt.Errorf("features: %s: Kuf is %d×%d for %d inputs, want %d×%d", typeName(f), rr, cc, r, f.M(), r)
	}
	return out, nil
}
